"""A long send of ``remember_conversation`` whose later chunk meets a database failure
(adversarial pass a68): the answer says which turns were written and kept, not "nothing
was written"; a chunk PostgreSQL broke as a deadlock is run again, counting each turn
once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recalld import conversations
from recalld.config import Settings
from recalld.conversation_stops import stopped_conversation_told
from recalld.errors import DatabaseBusyError, WriteConflictError
from recalld.service import MemoryService
from tests.conversation_support import failing_turn

MESSAGES = [
    {"role": "user", "content": f"Note number {number} about the garden"} for number in range(7)
]


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """The keyword-only settings of tests/conftest.py, on SQLite and on PostgreSQL."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="none")


def _stored(service: MemoryService, conversation: str) -> list[str]:
    turns = service.conversations.turns(f"recalld://conversation/{conversation}")
    return [turn.content for turn in turns]


def test_a_busy_database_in_a_later_chunk_says_what_was_kept(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy = DatabaseBusyError("the database stayed locked for 30 s: nothing was written")
    failing_turn(monkeypatch, chunk_turns=3, failing_index=4, error=busy, once=True)
    with pytest.raises(DatabaseBusyError) as caught:
        service.remember_conversation(MESSAGES, conversation="garden")
    message = str(caught.value)
    # Before: only "... nothing was written", though the first chunk was kept.
    assert message.startswith("the conversation 'garden' stopped at message 3,")
    assert "The 3 turns before it are written and kept (3 created, 0 updated" in message
    assert _stored(service, "garden") == [item["content"] for item in MESSAGES[:3]]
    told = stopped_conversation_told(caught.value, "the database is busy")
    assert told is not None
    assert "nothing was written" not in told
    assert "The 3 turns before it are written and kept" in told
    # The answer's advice holds: the same send writes the rest, the kept turns unchanged.
    again = service.remember_conversation(MESSAGES, conversation="garden")
    assert (again.created, again.updated, again.unchanged) == (4, 0, 3)
    assert _stored(service, "garden") == [item["content"] for item in MESSAGES]


def test_a_busy_database_in_the_first_chunk_still_says_nothing_was_written(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy = DatabaseBusyError("the database stayed locked for 30 s: nothing was written")
    failing_turn(monkeypatch, chunk_turns=3, failing_index=1, error=busy, once=True)
    with pytest.raises(DatabaseBusyError) as caught:
        service.remember_conversation(MESSAGES, conversation="garden")
    assert caught.value is busy
    assert stopped_conversation_told(caught.value, "busy") is None
    assert _stored(service, "garden") == []


@pytest.mark.parametrize("failing_index", [1, 4])
def test_a_chunk_broken_as_a_deadlock_is_run_again_counting_each_turn_once(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch, failing_index: int
) -> None:
    failing_turn(
        monkeypatch,
        chunk_turns=3,
        failing_index=failing_index,
        error=WriteConflictError("deadlock: rolled back"),
        once=True,
    )
    report = service.remember_conversation(MESSAGES, conversation="garden")
    assert (report.created, report.updated, report.unchanged) == (7, 0, 0)
    assert [turn.index for turn in report.turns] == list(range(7))
    assert _stored(service, "garden") == [item["content"] for item in MESSAGES]


def _moving_send(
    service: MemoryService, conversation: str, monkeypatch: pytest.MonkeyPatch, conflict: bool
) -> list[tuple[str, Any, Any]]:
    """A send of 8 messages in chunks of 3 whose two new ones (X, then Y anchored after it)
    lose their planned positions to another writer's turn between the first two chunks, so
    the second chunk moves them; with ``conflict``, that chunk is broken as a deadlock once
    after it moved X and Y. The stored conversation: (content, position, anchor) each."""
    stored = [{"role": "user", "content": f"turn {number}"} for number in range(6)]
    service.remember_conversation(stored, conversation=conversation)
    mine = [
        *stored[:4],
        {"role": "user", "content": "X"},
        {"role": "user", "content": "Y"},
        *stored[4:],
    ]
    other = [*stored, {"role": "assistant", "content": "Z from another writer"}]
    with monkeypatch.context() as patched:
        if conflict:
            failing_turn(
                patched,
                chunk_turns=3,
                failing_index=5,
                error=WriteConflictError("deadlock: rolled back"),
                once=True,
            )
        else:
            patched.setattr(conversations, "CHUNK_TURNS", 3)
        written: list[int] = []

        def progress(done: int, total: int) -> None:
            if done == 3 and not written:
                written.append(
                    service.remember_conversation(other, conversation=conversation).created
                )

        report = service.remember_conversation(mine, conversation=conversation, progress=progress)
    assert written == [1]
    assert (report.created, report.updated, report.unchanged) == (2, 0, 6)
    assert [turn.index for turn in report.turns] == list(range(8))
    turns = service.conversations.turns(f"recalld://conversation/{conversation}")
    return [(turn.content, turn.meta.get("turn"), turn.meta.get("after")) for turn in turns]


def test_a_later_chunk_whose_turns_moved_run_again_stores_what_a_clean_run_does(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The re-run starts from copies of the plan the first chunk left: the rolled-back
    # attempt's moves (positions, anchors, the next free position) are not kept, or X
    # and Y moved twice, past a gap (review of pass a68).
    clean = _moving_send(service, "clean", monkeypatch, conflict=False)
    rerun = _moving_send(service, "rerun", monkeypatch, conflict=True)
    assert rerun == clean
    contents = [content for content, _, _ in clean]
    assert contents.index("Y") == contents.index("X") + 1
    positions = {content: position for content, position, _ in clean}
    assert positions["X"] > positions["Z from another writer"]
