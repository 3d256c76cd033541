"""An edit keeps a kind an older version stored, or an import kept, as it is (review of
pass e66): an edit of any other field trimmed " intention" to the reminders' kind, and the
memory became a reminder's without its reminder, whose kind no edit could change."""

from __future__ import annotations

import json
from pathlib import Path

from recalld.config import Settings
from recalld.service import MemoryService

MEMORY_ID = "01M98JGAZCVJZDQ3ZRZFB4QM0Q"


def test_an_edit_keeps_an_imported_kind_as_stored(any_database: Path | str) -> None:
    settings = Settings(db=any_database, synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings) as service:
        line = json.dumps({"id": MEMORY_ID, "content": "water the plants", "kind": " intention"})
        assert service.import_lines([line + "\n"]).created == 1
        service.update(MEMORY_ID, content="water the plants twice")
        service.update(MEMORY_ID, kind=" intention", tags=["home"])
        assert service.get(MEMORY_ID).kind == " intention"
        assert "intention" not in service.stats().by_kind
        # Still a plain memory: its kind can be changed.
        assert service.update(MEMORY_ID, kind="todo").kind == "todo"


def test_a_kind_filter_reaches_a_spaced_reminders_kind_as_stored(any_database: Path | str) -> None:
    # Adversarial pass a67: the filter " intention" was trimmed to the reminders' kind, so
    # no kind filter found the memory stats counted under " intention".
    settings = Settings(db=any_database, synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings) as service:
        line = json.dumps({"id": MEMORY_ID, "content": "water the plants", "kind": " intention"})
        assert service.import_lines([line + "\n"]).created == 1
        other = service.remember("water the roses", kind="work").id
        assert service.stats().by_kind == {" intention": 1, "work": 1}
        spaced = {"kind": " intention"}
        assert [m.id for m in service.list_memories(filters=spaced).memories] == [MEMORY_ID]
        assert [hit.memory.id for hit in service.search("water", filters=spaced)] == [MEMORY_ID]
        assert service.list_memories(filters={"kind": "intention"}).memories == []
        # Every other kind is still found trimmed.
        found = service.list_memories(filters={"kind": " work "}).memories
        assert [memory.id for memory in found] == [other]


def test_a_kind_filter_given_with_spaces_still_finds_the_reminders(
    any_database: Path | str,
) -> None:
    # Review of pass a67: "intention " (a trailing space typed by accident) was kept as
    # given, so it found no reminder's memory (it found them before pass a67, trimmed as
    # every kind filter is). It finds them still; " intention" finds the memory stored so too.
    settings = Settings(db=any_database, synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings) as service:
        reminder = service.remind("water the plants", at="2030-01-01T09:00:00Z")
        line = json.dumps({"id": MEMORY_ID, "content": "water the roses", "kind": " intention"})
        assert service.import_lines([line + "\n"]).created == 1
        for spelling, wanted in (
            ("intention ", {reminder.id}),
            ("  intention  ", {reminder.id}),
            (" intention", {reminder.id, MEMORY_ID}),  # the stored spelling, and trimmed
        ):
            found = service.list_memories(filters={"kind": spelling}).memories
            assert {memory.id for memory in found} == wanted
            hits = service.search("water", filters={"kind": spelling})
            assert {hit.memory.id for hit in hits} == wanted
        trimmed = service.list_memories(filters={"kind": "intention"}).memories
        assert [memory.id for memory in trimmed] == [reminder.id]
