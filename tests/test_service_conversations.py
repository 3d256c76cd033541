"""Conversation ingestion: a turn per kept message, its speaker, its conversation as source,
order kept, idempotent by message id, system and tool messages skipped unless asked for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.service import MemoryService
from tests.conftest import FakeClock


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """The keyword-only settings of tests/conftest.py, on SQLite and on PostgreSQL."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful assistant.", "id": "m0"},
    {"speaker": "Ada", "role": "user", "content": "I moved to Hobart last spring.", "id": "m1"},
    {"role": "assistant", "content": "How are you finding Hobart?", "id": "m2"},
    {"role": "tool", "content": '{"weather": "cold"}', "id": "m3"},
    {"speaker": "Ada", "content": "Cold, but I love the harbour.", "id": "m4"},
]


def test_conversation_turns_keep_speaker_source_and_order(service: MemoryService) -> None:
    report = service.remember_conversation(MESSAGES, conversation="chat-1", title="Moving")
    assert (report.created, report.skipped) == (3, 2)
    assert [skipped.index for skipped in report.skipped_messages] == [0, 3]
    memories = [service.get(turn.receipt.id) for turn in report.turns]
    assert [memory.speaker for memory in memories] == ["Ada", "assistant", "Ada"]
    assert {memory.source for memory in memories} == {"recalld://conversation/chat-1"}
    assert [memory.seq for memory in memories] == sorted(memory.seq for memory in memories)
    around = service.turns(memories[1].id, before=1, after=1)
    assert [memory.id for memory in around] == [memory.id for memory in memories]


def test_conversation_reingestion_is_idempotent(service: MemoryService) -> None:
    service.remember_conversation(MESSAGES, conversation="chat-1")
    again = service.remember_conversation(MESSAGES, conversation="chat-1")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 3)
    grown = [*MESSAGES, {"role": "assistant", "content": "The harbour is lovely.", "id": "m5"}]
    more = service.remember_conversation(grown, conversation="chat-1")
    assert (more.created, more.unchanged) == (1, 3)
    edited = [dict(message) for message in grown]
    edited[4]["content"] = "Cold, but I adore the harbour."
    changed = service.remember_conversation(edited, conversation="chat-1")
    assert changed.updated == 1
    assert service.stats().count == 4


def test_conversation_edited_turn_keeps_its_time_and_an_expired_turn_comes_back(
    service: MemoryService, clock: FakeClock
) -> None:
    turns = [{"speaker": "Ada", "content": text} for text in ("one", "two", "three")]
    first = service.remember_conversation(turns, conversation="c")
    ids = [turn.receipt.id for turn in first.turns]
    times = [service.get(memory_id).at for memory_id in ids]
    clock.advance(60)
    edited = [dict(turn) for turn in turns]
    edited[1]["content"] = "two (edited)"
    assert service.remember_conversation(edited, conversation="c").updated == 1
    assert [service.get(memory_id).at for memory_id in ids] == times
    around = service.turns(ids[0], before=3, after=3)
    assert [memory.content for memory in around] == ["one", "two (edited)", "three"]
    # A turn whose TTL passed (not purged yet) is written again by a re-send.
    service.update(ids[2], ttl_seconds=1)
    clock.advance(2)
    again = service.remember_conversation(edited, conversation="c")
    assert (again.created, again.unchanged) == (1, 2)
    assert service.get(ids[2]).content == "three"


def test_conversation_keeps_system_and_tool_messages_when_asked(service: MemoryService) -> None:
    report = service.remember_conversation(
        MESSAGES, conversation="chat-2", include_system=True, include_tools=True
    )
    assert (report.created, report.skipped) == (5, 0)


def test_conversation_speaker_filters_recall(service: MemoryService) -> None:
    service.remember_conversation(MESSAGES, conversation="chat-1")
    hits = service.search("harbour Hobart")
    assert hits
    assert {hit.memory.speaker for hit in hits} <= {"Ada", "assistant"}


def test_conversation_bad_message_writes_nothing(service: MemoryService) -> None:
    bad: list[dict[str, Any]] = [*MESSAGES, {"role": "user", "content": "x", "unknown": 1}]
    with pytest.raises(ValidationError):
        service.remember_conversation(bad, conversation="chat-3")
    assert service.stats().count == 0


def test_conversation_speaker_is_a_filter(service: MemoryService) -> None:
    from recalld.model import Filters

    service.remember_conversation(MESSAGES, conversation="chat-1")
    ada = service.list_memories(filters=Filters(speaker="Ada")).memories
    assert sorted(memory.content for memory in ada) == [
        "Cold, but I love the harbour.",
        "I moved to Hobart last spring.",
    ]
    hits = service.search("Hobart", filters=Filters(speaker="assistant"), min_score=0)
    assert [hit.memory.speaker for hit in hits] == ["assistant"]
