"""A shortened prompt line never ends in half of a character as the reader sees it
(adversarial pass b68): the cut fell between a letter and its accent ("é" shown as "e"),
inside a flag (one regional indicator) or after an emoji's joiner."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from recalld._text import prompt_line, reminder_line
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
