"""A transcript re-sent without message ids stops changing the store once it is stored.

A message sent between two stored turns with no free position between them takes a
position after every turn, anchored after the turn it follows (``meta.after``); turns
are compared in the conversation's order (``conversation_order``), so the same
transcript sent again repeats that turn instead of adding it on every send.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from recalld.config import Settings
from recalld.conversation_placement import TurnKey, conversation_order, placement
from recalld.service import MemoryService


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """The keyword-only settings of tests/conftest.py, on SQLite and on PostgreSQL."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def _lines(*lines: str) -> list[dict[str, Any]]:
    return [
        {"speaker": line.split(": ", 1)[0], "content": line.split(": ", 1)[1]} for line in lines
    ]


def _counts(report: Any) -> tuple[int, int, int]:
    return report.created, report.updated, report.unchanged


def _turns(service: MemoryService, conversation: str) -> list[tuple[str | None, str]]:
    turns = service.conversations.turns(f"recalld://conversation/{conversation}")
    return sorted((turn.speaker, turn.content) for turn in turns)


def test_a_message_inserted_between_stored_turns_is_added_once(service: MemoryService) -> None:
    first = _lines("Ada: I bought a red bike", "Bob: Where did you ride it?", "Ada: To the mill")
    assert _counts(service.remember_conversation(first, conversation="c")) == (3, 0, 0)
    inserted = [*first[:2], *_lines("Ada: First round the park"), first[2]]
    assert _counts(service.remember_conversation(inserted, conversation="c")) == (1, 0, 3)
    for _ in range(3):
        assert _counts(service.remember_conversation(inserted, conversation="c")) == (0, 0, 4)
    assert _turns(service, "c") == sorted((line["speaker"], line["content"]) for line in inserted)
    added = [
        turn
        for turn in service.conversations.turns("recalld://conversation/c")
        if turn.content == "First round the park"
    ]
    # After the turn it was sent after ("Where did you ride it?", position 1).
    assert [(turn.meta["turn"], turn.meta["after"]) for turn in added] == [(3, 1)]
    # Grown afterwards, only the new message is added.
    grown = [*inserted, *_lines("Bob: Nice")]
    assert _counts(service.remember_conversation(grown, conversation="c")) == (1, 0, 4)
    assert _counts(service.remember_conversation(grown, conversation="c")) == (0, 0, 5)


def test_a_message_inserted_before_the_first_turn_is_added_once(service: MemoryService) -> None:
    first = _lines("Ada: hello", "Bob: hi Ada", "Ada: how was Lyon?")
    service.remember_conversation(first, conversation="c")
    opened = [*_lines("Bob: (joined the call)"), *first]
    assert _counts(service.remember_conversation(opened, conversation="c")) == (1, 0, 3)
    assert _counts(service.remember_conversation(opened, conversation="c")) == (0, 0, 4)
    turns = service.conversations.turns("recalld://conversation/c")
    assert [turn.meta.get("after") for turn in turns if turn.content.startswith("(joined")] == [-1]


def test_two_turns_swapped_then_grown_stop_changing(service: MemoryService) -> None:
    first = _lines("Ada: one", "Bob: two", "Ada: three", "Bob: four")
    service.remember_conversation(first, conversation="c")
    swapped = [first[0], first[2], first[1], first[3]]
    service.remember_conversation(swapped, conversation="c")
    assert _counts(service.remember_conversation(swapped, conversation="c"))[:2] == (0, 0)
    grown = [*swapped, *_lines("Ada: five")]
    assert _counts(service.remember_conversation(grown, conversation="c"))[:2] == (1, 0)
    for _ in range(3):
        assert _counts(service.remember_conversation(grown, conversation="c"))[:2] == (0, 0)


def test_a_forgotten_anchor_keeps_the_turns_after_it_in_place(service: MemoryService) -> None:
    first = _lines("Ada: A", "Bob: B", "Ada: C", "Bob: D")
    service.remember_conversation(first, conversation="c")
    inserted = _lines("Ada: A", "Bob: B", "Ada: C", "Ada: X", "Bob: D")
    report = service.remember_conversation(inserted, conversation="c")
    service.forget(next(turn.receipt.id for turn in report.turns if turn.index == 2))
    # The client drops the forgotten turn too: X is still between B and D.
    without = _lines("Ada: A", "Bob: B", "Ada: X", "Bob: D")
    assert _counts(service.remember_conversation(without, conversation="c")) == (0, 0, 4)
    # A new message where C was does not take C's place before X.
    renewed = _lines("Ada: A", "Bob: B", "Ada: N", "Ada: X", "Bob: D")
    assert _counts(service.remember_conversation(renewed, conversation="c")) == (1, 0, 4)
    assert _counts(service.remember_conversation(renewed, conversation="c")) == (0, 0, 5)


def test_a_chat_without_an_id_is_not_taken_for_another_by_scattered_repeats(
    service: MemoryService,
) -> None:
    greeting = "Ada: hi", "Bot: Hello! How can I help?"
    first = _lines(
        *greeting, "Ada: Summarize this article", "Bot: Here is a summary.", "Ada: thanks",
        "Bot: You're welcome!", *greeting, "Ada: What's the weather?", "Bot: I can't check.",
    )  # fmt: skip
    one = service.remember_conversation(first)
    # Every line of this chat is in the first, in order, but never next to each other.
    second = service.remember_conversation(_lines(*greeting, "Ada: thanks", "Bot: You're welcome!"))
    assert second.conversation != one.conversation
    assert _counts(second) == (4, 0, 0)


def test_a_chunked_send_keeps_its_anchors_when_another_writer_takes_a_position(
    service: MemoryService,
) -> None:
    stored = [{"speaker": "Ada" if i % 2 else "Bob", "content": f"turn {i}"} for i in range(600)]
    service.remember_conversation(stored, conversation="big")
    mine = [*stored[:551], *_lines("Ada: X", "Bob: Y"), *stored[551:]]
    other = [*stored, *_lines("Cy: Z from another writer")]
    written: list[int] = []

    def progress(done: int, total: int) -> None:
        # Between this send's two chunks another writer takes the next free position.
        if done == 500 and not written:
            written.append(service.remember_conversation(other, conversation="big").created)

    first = service.remember_conversation(mine, conversation="big", progress=progress)
    assert (written, first.created) == ([1], 2)
    turns = {
        turn.content: turn.meta
        for turn in service.conversations.turns("recalld://conversation/big", limit=1000)
    }
    # Y follows X wherever X went, not the other writer's turn at X's planned position.
    assert turns["Y"]["after"] == turns["X"]["turn"]
    assert _counts(service.remember_conversation(mine, conversation="big"))[:2] == (0, 0)


def test_conversation_order_puts_anchored_turns_after_their_anchor() -> None:
    # 4 was sent after 1, then 5 between 1 and 4, 6 before the first turn; 7's anchor
    # (9) is gone, so it keeps its position.
    stored = [0, 1, 2, 3, 4, 5, 6, 7]
    after = {4: 1, 5: 1, 6: -1, 7: 9}
    assert conversation_order(stored, after) == [6, 0, 1, 5, 4, 2, 3, 7]
    # A forgotten anchor (2) still holds its place: what follows it stays before 3.
    assert conversation_order([0, 1, 3, 4], {4: 2}) == [0, 1, 4, 3]
    # Anchors in a cycle (never written so) leave their turns at their positions.
    assert conversation_order([0, 1, 2], {1: 2, 2: 1}) == [0, 1, 2]


# Random histories through placement() against an in-memory store: a send, then the
# same transcript sent again. Speakers and texts from a small set, so that short replies
# ("ok") repeat.
_SHORT: list[TurnKey] = [("u", "ok"), ("a", "ok"), ("u", "yes"), ("a", "Done.")]


def _send(
    stored: dict[int, TurnKey], after: dict[int, int], said: list[TurnKey]
) -> tuple[int, int]:
    """Place ``said`` as Conversations does; write it into ``stored``: (created, updated)."""
    placed, anchors = placement(stored, list(enumerate(said)), set(stored), after)
    created = updated = 0
    for row, position in placed.items():
        if position not in stored:
            created += 1
            if position in anchors:
                after[position] = anchors[position]
        elif stored[position] != said[row]:
            updated += 1
        stored[position] = said[row]
    return created, updated


def _edit(rng: random.Random, said: list[TurnKey], fresh: itertools.count[int]) -> list[TurnKey]:
    said = list(said)

    def message() -> TurnKey:
        return (
            rng.choice(_SHORT) if rng.random() < 0.25 else (rng.choice("ua"), f"text {next(fresh)}")
        )

    change = rng.choice(["insert", "delete", "swap", "edit", "append", "window", "same words"])
    if change == "insert":
        said.insert(rng.randrange(len(said) + 1), message())
    elif change == "delete" and len(said) > 1:
        del said[rng.randrange(len(said))]
    elif change == "swap" and len(said) > 1:
        at = rng.randrange(len(said) - 1)
        said[at], said[at + 1] = said[at + 1], said[at]
    elif change == "edit":
        said[rng.randrange(len(said))] = message()
    elif change == "window" and len(said) > 3:
        said = said[rng.randrange(1, len(said) - 1) :]
    elif change == "same words":
        said.insert(rng.randrange(len(said) + 1), rng.choice(said))
    else:
        said.append(message())
    return said


@examples(max_examples=300, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_the_same_transcript_sent_again_stops_changing_the_store(seed: int) -> None:
    rng = random.Random(seed)
    fresh = itertools.count()
    said: list[TurnKey] = [(rng.choice("ua"), f"text {next(fresh)}") for _ in range(4)]
    stored: dict[int, TurnKey] = {}
    after: dict[int, int] = {}
    _send(stored, after, said)
    for _ in range(6):
        said = _edit(rng, said, fresh)
        _send(stored, after, said)
        # A window read against scattered repeats may add its new turns once more (the
        # window wins: see placement); after that, nothing changes.
        _send(stored, after, said)
        for _ in range(2):
            assert _send(stored, after, said) == (0, 0), (said, stored, after)
