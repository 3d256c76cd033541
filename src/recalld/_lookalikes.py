"""Characters that show nothing though they are no format character, which a speaker's
name may not hold (see :func:`recalld._validate.new_speaker`)."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["blank_looking"]

# Characters that show nothing, or a blank, and are no format character (so names may
# hold them): the combining grapheme joiner, Hangul and Khmer fillers and the braille
# blank. In a speaker's name "Ada" and "Ada" + one of them were two speakers that read
# the same, and a name of fillers alone was a speaker that looks empty.
_BLANK_LOOKING = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0]")
# Selectors: they choose how the character before them is drawn, an emoji's (U+2764
# U+FE0F) or a Mongolian letter's (its free variation selectors, U+180B-U+180D and
# U+180F, which Mongolian names need); after a Latin letter or a space they show nothing.
_SELECTOR = re.compile("[\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_MONGOLIAN_SELECTORS = frozenset("\u180b\u180c\u180d\u180f")
_DRAWN_VARIANTS = frozenset({"So", "Sm", "Sk", "Lo", "Mn"})
# Emoji that Unicode gives a presentation selector though they are punctuation or a
# letter (emoji-variation-sequences.txt): U+203C, U+2049, U+2139 (information source),
# U+3030, U+303D (the keycaps #️⃣ 1️⃣ have U+20E3).
_EMOJI_TEXT_BASES = frozenset("\u203c\u2049\u2139\u3030\u303d")


def blank_looking(value: str) -> tuple[int, str] | None:
    """The position and name of the first character of ``value`` that shows nothing
    though it is no format character (see ``_BLANK_LOOKING`` and ``_SELECTOR``), if any."""
    found = _BLANK_LOOKING.search(value)
    where = None if found is None else found.start()
    for selector in _SELECTOR.finditer(value):
        position = selector.start()
        before = value[position - 1] if position else ""
        if selector.group() in _MONGOLIAN_SELECTORS:
            shown_variant = "\u1820" <= before <= "\u18aa"  # after a Mongolian letter
        else:
            keycap = value[position + 1 : position + 2] == "\u20e3"  # 1️⃣: digit, VS16, keycap
            shown_variant = bool(before) and (
                unicodedata.category(before) in _DRAWN_VARIANTS
                or before in _EMOJI_TEXT_BASES
                or keycap
            )
        if not shown_variant:
            where = position if where is None else min(where, position)
            break
    if where is None:
        return None
    character = value[where]
    name = unicodedata.name(character, "")
    code = f"U+{ord(character):04X}"
    return where, f"{name} ({code})" if name else code
