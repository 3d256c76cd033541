"""Which stored turns a transcript may change: derived conversation ids, message ids,
sources, long sends written in chunks while another writer writes, and speaker names
in one Unicode spelling (the outside review of stop 50, findings 1, 2, 4, 5 and 9)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import ConflictError
from recalld.model import Filters
from recalld.service import MemoryService


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """The keyword-only settings of tests/conftest.py, on SQLite and on PostgreSQL."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def _lines(*lines: str) -> list[dict[str, Any]]:
    return [
        {"speaker": line.split(": ", 1)[0], "content": line.split(": ", 1)[1]} for line in lines
    ]


def _contents(service: MemoryService) -> list[str]:
    return sorted(memory.content for memory in service.list_memories(limit=1000).memories)


def test_conversation_speaker_in_either_unicode_form_is_one_speaker(
    service: MemoryService,
) -> None:
    # "Zoë" decomposed (as macOS tools write it) was another speaker than "Zoë" typed:
    # the filter missed her turn, and the same transcript re-sent duplicated both turns.
    decomposed, composed = "Zoe\u0308", "Zo\u00eb"
    pets = [
        {"speaker": decomposed, "content": "I have a parrot called Kiwi."},
        {"speaker": "Bob", "content": "Nice bird."},
    ]
    service.remember_conversation(pets, conversation="pets")
    for typed in (composed, decomposed):
        found = service.list_memories(filters=Filters(speaker=typed)).memories
        assert [memory.speaker for memory in found] == [composed]
    again = [{**pets[0], "speaker": composed}, pets[1]]
    report = service.remember_conversation(again, conversation="pets")
    assert (report.created, report.updated, report.unchanged) == (0, 0, 2)
    note = service.remember("Zoë's parrot is green", speaker=decomposed)
    assert service.get(note.id).speaker == composed
