"""Tags and categories in one Unicode spelling (NFC), on either store: the memories and
the reminder an older version could have stored decomposed, and what must hold once
migration 28 has composed them (tests/test_tag_spelling.py, tests/postgres/)."""

from __future__ import annotations

from recalld.model import Filters
from recalld.recollection import Recollection
from recalld.service import MemoryService

__all__ = ["COMPOSED", "DECOMPOSED", "assert_composed", "write_decomposable"]

COMPOSED = "caf\u00e9"  # "café" as one character
DECOMPOSED = "cafe\u0301"  # "e" + COMBINING ACUTE ACCENT: how macOS and some tools send it


def write_decomposable(service: MemoryService) -> tuple[str, str]:
    """A memory tagged and categorised ``café``, and a reminder on the tag: the ids of the
    memory and of the reminder, for a test to give them the decomposed spelling."""
    tagged = service.remember("the espresso machine is descaled", tags=[COMPOSED, "kitchen"])
    service.update(tagged.id, category=COMPOSED)
    reminder = service.remind("order more beans", tags=[COMPOSED])
    return tagged.id, reminder.id


def _reminders(items: list[Recollection]) -> list[str]:
    return [item.memory.content for item in items if item.kind == "reminder"]


def assert_composed(service: MemoryService, memory_id: str) -> None:
    """The memory ``write_decomposable`` wrote holds one spelling, found by either, and its
    reminder fires on either spelling of the tag."""
    memory = service.get(memory_id)
    assert (memory.tags, memory.category) == ([COMPOSED, "kitchen"], COMPOSED)
    for spelling in (COMPOSED, DECOMPOSED):
        for filters in (
            Filters(tags_any=[spelling]),
            Filters(tags_all=[spelling, "kitchen"]),
            Filters(category=spelling),
        ):
            listed = service.list_memories(filters=filters).memories
            assert [found.id for found in listed] == [memory_id], (spelling, filters)
    by_category = service.stats().by_category
    assert (by_category[COMPOSED], DECOMPOSED in by_category) == (1, False)
    sensed = service.recollections.sense(service.recollections.cue(tags=[DECOMPOSED]))
    assert _reminders(sensed) == ["order more beans"]
