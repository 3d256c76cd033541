"""A re-send built to make the diff alignment slow (adversarial pass e62).

difflib's matcher takes a time cubic in the turns when most of them are equal: 2,000
stored turns of one text and a re-send alternating between it and another held the write
for over two minutes (this test ran that long before the fix). Past ALIGNMENT_STEPS the
re-send is aligned by its window and its repeats alone.
"""

from __future__ import annotations

import pytest

from recalld import conversation_placement
from recalld.conversation_placement import TurnKey, placement

OK: TurnKey = ("Ada", "ok")
OTHER: TurnKey = ("Bob", "x")


def test_an_alternating_resend_of_repeated_turns_is_placed_after_them() -> None:
    stored = dict.fromkeys(range(2_000), OK)
    sent = [(index, OTHER if index % 2 == 0 else OK) for index in range(2_000)]
    positions, anchors = placement(stored, sent, taken=stored)
    # Nothing aligns (the matcher stopped at its budget): every message is a new turn after
    # the stored ones, in the order of the send; nothing stored is overwritten.
    assert positions == {index: 2_000 + index for index in range(2_000)}
    assert anchors == {}


def test_past_the_budget_a_window_resend_still_repeats_its_turns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stored = {index: ("Ada", f"turn {index}") for index in range(100)}
    sent = [(row, stored[90 + row]) for row in range(10)] + [(10, ("Ada", "new"))]
    expected = {row: 90 + row for row in range(10)} | {10: 100}
    assert placement(stored, sent, taken=stored)[0] == expected
    monkeypatch.setattr(conversation_placement, "ALIGNMENT_STEPS", 5)
    # The window (the stored conversation's last turns) places them without the diff.
    assert placement(stored, sent, taken=stored)[0] == expected
