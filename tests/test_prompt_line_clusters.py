"""A shortened prompt line never ends in half of a character as the reader sees it
(adversarial pass b68): the cut fell between a letter and its accent ("é" shown as "e"),
inside a flag (one regional indicator) or after an emoji's joiner."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
import regex

from recalld._text import _cluster_start, prompt_line, reminder_line
from recalld.model import Memory

NOW = datetime(2026, 12, 7, tzinfo=UTC)
PREFIX = "[2026-12-07 note] "


def _line(content: str) -> str:
    memory = Memory(
        id="m", seq=1, namespace="default", content=content, created_at=NOW, updated_at=NOW
    )
    return prompt_line(memory)


@pytest.mark.parametrize(
    ("cluster", "padding"),
    [
        ("e\u0301\u0301", 158),  # a letter and two combining accents, cut after the letter
        ("\U0001f1eb\U0001f1f7", 158),  # the flag of France, cut between its two halves
        ("\U0001f468\u200d\U0001f469\u200d\U0001f467", 157),  # a family, cut after a joiner
        ("\U0001f44d\U0001f3fd", 158),  # a thumbs-up and its skin tone
        ("\u05e9\u05c1", 158),  # Hebrew shin and its dot
        ("\u0915\u094d\u0937\u093f", 157),  # Devanagari क्षि: a conjunct, cut before its ष
        ("\u1100\u1161\u11a8", 158),  # Hangul 각 typed as three jamo, cut after the first
    ],
)
def test_a_cut_line_keeps_a_cluster_whole_or_leaves_it_out(cluster: str, padding: int) -> None:
    line = _line("a" * padding + cluster + " and more text after it")
    assert line.endswith("…")
    body = line.removeprefix(PREFIX).removesuffix("…")
    assert body == "a" * padding


def test_a_cut_between_two_flags_keeps_the_first() -> None:
    flags = "\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea"  # France, Germany
    line = _line("a" * 157 + flags + " more")
    assert line.removeprefix(PREFIX) == "a" * 157 + "\U0001f1eb\U0001f1f7…"


def test_one_character_longer_than_the_line_is_still_cut() -> None:
    zalgo = "e" + "\u0301" * 300
    line = _line(zalgo)
    assert line.endswith("…")
    assert line.removeprefix(PREFIX).startswith("e\u0301")


def test_a_reminder_line_keeps_its_clusters_whole() -> None:
    line = reminder_line("b" * 147 + "\U0001f1eb\U0001f1f7 more", "due now")
    assert line == "[reminder] " + "b" * 147 + "…"


# Characters whose cluster rules reach past their neighbour: regional indicators (pairs),
# joiners and emoji, Indic consonants and viramas (conjuncts), Hangul jamo and syllables,
# Prepend (U+0600), CR LF, and plain letters between them.
_PIECES = (
    "a \u00e9\u0301\u200d\ufe0f\U0001f468\U0001f3fd\U0001f1eb\U0001f1f7\u0915\u094d\u0937"
    "\u093f\u0905\u1cf5\u1100\u1161\u11a8\uac01\uac00\u0600\r\n\u65e5\U000e0020"
    "\U000e007f\u0e33"
)


def test_the_cut_is_where_a_full_grapheme_scan_puts_it() -> None:
    # _cluster_start reads clusters from the last certain boundary before the cut, not
    # from the start: it must agree with \X read from the start, whatever came before.
    generator = random.Random(68)
    for _ in range(3000):
        text = "".join(generator.choices(_PIECES, k=generator.randint(2, 30)))
        cut = generator.randint(1, len(text) - 1)
        clusters = regex.findall(r"\X", text[: cut + 1])
        expected = (cut + 1 - len(clusters[-1])) or cut
        assert _cluster_start(text, cut) == expected, (text, cut)
