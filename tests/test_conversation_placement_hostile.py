"""A re-send built to make the diff alignment slow (adversarial pass e62).

difflib's matcher takes a time cubic in the turns when most of them are equal: 2,000
stored turns of one text and a re-send alternating between it and another held the write
for over two minutes (this test ran that long before the fix). Past ALIGNMENT_STEPS the
re-send's common head and tail align, and its middle is diffed within the budget or
compared side by side (review of pass e62).
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
    # Past its budget the matcher compares the two side by side (they share no head nor
    # tail): each "ok" repeats the stored turn at its place, each other message is a new
    # turn after the stored ones, anchored after the message before it; nothing stored is
    # overwritten.
    others = {index: 2_000 + index // 2 for index in range(0, 2_000, 2)}
    assert positions == {index: index for index in range(1, 2_000, 2)} | others
    assert anchors == {2_000: -1} | {2_000 + index // 2: index - 1 for index in range(2, 2_000, 2)}


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


def _history(turns: int) -> dict[int, TurnKey]:
    """A conversation of ``turns`` turns, three in four of them "ok" or "yes" (past the
    alignment budget when re-sent whole)."""
    return {
        index: ("Ada", "ok")
        if index % 2
        else ("Ada", "yes")
        if index % 4 == 2
        else ("Bob", f"answer {index}")
        for index in range(turns)
    }


def test_a_whole_history_resent_with_one_turn_edited_adds_nothing() -> None:
    # Review of pass e62: past the budget nothing aligned, so all 5,000 turns were added
    # again; the common head and tail now align before the rest is given up.
    stored = _history(5_000)
    sent = list(enumerate(stored.values()))
    sent[2_500] = (2_500, ("Bob", "answer 2500, edited"))
    positions, anchors = placement(stored, sent, taken=stored)
    assert positions == {index: index for index in range(5_000)}
    assert anchors == {}


def test_a_whole_history_resent_with_one_turn_added_adds_that_one() -> None:
    stored = _history(5_000)
    turns = list(stored.values())
    sent = list(enumerate([*turns[:2_500], ("Ada", "added"), *turns[2_500:]]))
    positions, anchors = placement(stored, sent, taken=stored)
    assert positions == {
        **{index: index for index in range(2_500)},
        2_500: 5_000,
        **{index: index - 1 for index in range(2_501, 5_001)},
    }
    assert anchors == {5_000: 2_499}


def test_the_budget_is_charged_by_the_matchers_own_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The budget relies on CPython's get_matching_blocks calling find_longest_match: if it
    # stops doing so, the alignment is unbounded again and this fails.
    monkeypatch.setattr(conversation_placement, "ALIGNMENT_STEPS", 100)
    turns: list[TurnKey] = [OK] * 50
    with pytest.raises(conversation_placement._OverBudgetError):
        conversation_placement._BudgetedMatcher(turns, turns[:-1]).get_matching_blocks()


def test_ten_thousand_distinct_turns_resent_whole_stay_within_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A realistic long conversation never reaches the fallback: its diff is aligned.
    def refused(*arguments: object) -> list[object]:
        raise AssertionError("the fallback ran")

    stored = {index: ("Ada", f"turn {index}") for index in range(10_000)}
    sent = list(enumerate(stored.values()))
    sent[5_000] = (5_000, ("Ada", "turn 5000, edited"))
    monkeypatch.setattr(conversation_placement._OverBudgetError, "__init__", refused)
    positions, _ = placement(stored, sent, taken=stored)
    assert positions == {index: index for index in range(10_000)}


def test_a_whole_history_resent_with_two_turns_edited_far_apart_adds_nothing() -> None:
    # The 3,000 turns between the two edits are past the budget too: compared side by side
    # they repeat, instead of being added again (review of pass e62).
    stored = _history(5_000)
    sent = list(enumerate(stored.values()))
    sent[1_000] = (1_000, ("Bob", "answer 1000, edited"))
    sent[4_000] = (4_000, ("Bob", "answer 4000, edited"))
    positions, anchors = placement(stored, sent, taken=stored)
    assert positions == {index: index for index in range(5_000)}
    assert anchors == {}
