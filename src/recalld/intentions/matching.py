"""Whole-word matching of mentions: "Anna" fires on "Anna's move", never on "Annapolis".

Text is folded (case, diacritics: "Léa" matches "lea") and split into word
tokens; a mention holds when its tokens occur consecutively in the tokens of
what was heard. A word keeps its combining marks (Devanagari's vowel signs: "राम"
is one word, never a part of "रामायण"); a programming language's ``++`` or ``#``
stays on its word ("C++" and "C#" are not "C"); Chinese characters and Japanese
kana, written without spaces between words, are one token each, so "東京" is heard
in "明日東京に行く"; so are the letters of Thai, Lao, Khmer and Burmese ("กาแฟ" is heard
in "ฉันอยากดื่มกาแฟ"), each with the vowel signs written on it (tone marks and the like are
folded away as accents are); their digits are not, a number stays one word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

__all__ = [
    "EntityMatcher",
    "contains_phrase",
    "fold",
    "legacy_tokens",
    "lookup_term",
    "tokens",
]

WORD = re.compile(r"\w+", re.UNICODE)
# What tokens() reads: a run of word characters, or of anything else but spaces.
PIECE = re.compile(r"(?P<word>\w+)|[^\w\s]+")
# Scripts written without spaces between words: Han ideographs (and their iteration
# marks), hiragana and katakana; Thai, Lao, Khmer and Myanmar (Burmese), but for their
# digits: a number is one word in them too ("๑๒" is not heard in "๑๒๓", as 12 in 123).
UNSPACED = re.compile(
    "[\u3005-\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\U00020000-\U0003134f"
    "\u0e00-\u0e4f\u0e5a-\u0ecf\u0eda-\u0eff\u1000-\u103f\u104a-\u108f\u109a-\u109f"
    "\u1780-\u17df\u17fa-\u17ff\u19e0-\u19ff\uaa60-\uaa7f\ua9e0-\ua9ef\ua9fa-\ua9ff]"
)
# What stays on the word it follows: C++, C#, F#.
SUFFIX = re.compile(r"\+\+|#")

# The hook the knowledge graph connects to: (sensed text, namespace) -> the names of
# the entities recognised in it. A mention trigger also holds when its text is
# (once folded) one of these names, so "Anna Lima" can fire on "Anna" or an alias.
EntityMatcher = Callable[[str, str], Sequence[str]]


def fold(text: str) -> str:
    """Case- and accent-insensitive form of ``text``."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(character for character in decomposed if not unicodedata.combining(character))


def tokens(text: str) -> list[str]:
    """The folded word tokens of ``text``, in order (see the module's docstring)."""
    folded = fold(text)
    if not _needs_pieces(folded):
        return WORD.findall(folded)  # runs of word characters, as always
    # Each word as its parts, joined at the end: adding to a string in a list copies it,
    # and a long word of marks (a Devanagari text without spaces) took quadratic time.
    found: list[list[str]] = []
    joinable = False  # whether a piece that starts where the last ended continues it
    markable = False  # whether marks that start where the last piece ended belong to it
    end = -1
    for piece in PIECE.finditer(folded):
        value, adjacent = piece.group(), piece.start() == end
        end = piece.end()
        if piece.group("word") is None:
            marks = _leading_marks(value)
            if adjacent and markable and marks:
                # Vowel signs, a virama: part of the word (or of the letter, in a script
                # without spaces, so that "ကော်ဖီ" is not heard in any "က…ဖ").
                found[-1].append(value[:marks])
                if marks == len(value):
                    continue
            suffix = SUFFIX.match(value, marks)
            after = piece.start() + (marks if suffix is None else suffix.end())
            if adjacent and joinable and suffix is not None and not _word_at(folded, after):
                found[-1].append(suffix.group())
            joinable = markable = False
            continue
        for part in _unspaced_parts(value):
            if adjacent and joinable and not UNSPACED.match(part):
                found[-1].append(part)
            else:
                found.append([part])
            joinable = UNSPACED.match(part) is None
            markable = adjacent = True
    return ["".join(parts) for parts in found]


def _needs_pieces(folded: str) -> bool:
    """Whether ``folded`` has what runs of word characters would cut wrongly: a ``+`` or
    ``#``, a combining mark, or a character of a script without spaces. (Other
    punctuation, a curly apostrophe or a dash, is cut the same either way: testing each
    distinct character keeps such text, most text, on the fast path.)"""
    if "+" in folded or "#" in folded:
        return True
    if folded.isascii():
        return False
    return any(
        UNSPACED.match(character) is not None or unicodedata.category(character)[0] == "M"
        for character in set(folded)
        if not character.isascii()
    )


def _leading_marks(value: str) -> int:
    """How many combining marks (Unicode category M) ``value`` starts with."""
    count = 0
    while count < len(value) and unicodedata.category(value[count])[0] == "M":
        count += 1
    return count


def _word_at(text: str, index: int) -> bool:
    return index < len(text) and WORD.match(text, index) is not None


def _unspaced_parts(word: str) -> list[str]:
    """``word`` cut so that each character of a script without spaces stands alone."""
    if UNSPACED.search(word) is None:
        return [word]
    # Each part as its characters, joined at the end: adding a character to a string in
    # a list copies the string, so "中" and 64 KB of letters took quadratic time
    # (adversarial pass e62).
    parts: list[list[str]] = []
    alone = False  # whether the last part is a character of a script without spaces
    for character in word:
        unspaced = UNSPACED.match(character) is not None
        if unspaced or not parts or alone:
            parts.append([character])
        else:
            parts[-1].append(character)
        alone = unspaced
    return ["".join(characters) for characters in parts]


def legacy_tokens(text: str) -> list[str]:
    """The tokens of ``text`` as earlier versions cut them (every run of word
    characters): a mention stored then is indexed by one of them, and is looked up with
    them as well as with :func:`tokens` until it is written again."""
    return WORD.findall(fold(text))


def contains_phrase(haystack: Sequence[str], phrase: Sequence[str]) -> bool:
    """Whether ``phrase`` occurs as consecutive tokens of ``haystack`` (tokens hold no
    white space: :func:`tokens` and :func:`legacy_tokens` cut at it)."""
    if not phrase or len(phrase) > len(haystack):
        return False
    # Joined by spaces, the phrase bounded by spaces occurs in the text exactly where it
    # is a run of whole tokens. str's search is linear; comparing a slice at each token
    # cost haystack times phrase: "a " * 32,000 heard against the mention "a " * 99 + "b"
    # took 0.13 s for each such reminder at each sense (adversarial pass e63).
    return f" {' '.join(phrase)} " in f" {' '.join(haystack)} "


def lookup_term(words: Sequence[str]) -> str:
    """The word a mention is indexed by: its longest (the rarest, as a rule), so
    "the Beatles" is looked up when "beatles" is heard, not on every "the"."""
    return max(words, key=len)
