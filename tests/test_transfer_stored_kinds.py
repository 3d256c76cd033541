"""An export of kinds and categories an older version stored imports whole (adversarial
pass e66): one NFC writes longer than the limit, and one whose trimmed spelling is a kind
another structure owns (" intention", " observation", " turn")."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import apsw
import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.service import MemoryService
from tests.conftest import FakeClock

# Devanagari क़ (U+0958): NFC writes it as two code points, so 200 of them are stored 400 long.
LONG_STORED = unicodedata.normalize("NFC", "\u0958" * 200)
OLDER_KINDS = (" intention", " observation", " turn", LONG_STORED)


@pytest.fixture
def settings(db_path: Path) -> Settings:
    return Settings(db=db_path, synchronous="NORMAL", embedder="none")


def _stored_by_an_older_version(settings: Settings, clock: FakeClock) -> list[str]:
    """One memory per kind of :data:`OLDER_KINDS`, written as an older version stored it
    (the last one with a category as long too); their ids."""
    with MemoryService.open(settings, clock=clock) as service:
        ids = [service.remember(f"memory number {index}").id for index in range(len(OLDER_KINDS))]
    connection = apsw.Connection(str(settings.db))
    for memory_id, kind in zip(ids, OLDER_KINDS, strict=True):
        connection.execute("UPDATE memories SET kind = ? WHERE id = ?", (kind, memory_id))
    connection.execute("UPDATE memories SET category = ? WHERE id = ?", (LONG_STORED, ids[-1]))
    connection.close()
    return ids


def test_an_export_of_kinds_an_older_version_stored_gives_back_every_memory(
    settings: Settings, clock: FakeClock, tmp_path: Path
) -> None:
    ids = _stored_by_an_older_version(settings, clock)
    with MemoryService.open(settings, clock=clock) as service:
        exported = list(service.export())
        # A filter reaches the long kind and category typed in their shortest spelling.
        asked = {"kind": "\u0958" * 200, "category": "\u0958" * 200}
        assert [hit.id for hit in service.list_memories(filters=asked).memories] == [ids[-1]]
    fresh = Settings(db=tmp_path / "fresh.db", synchronous="NORMAL", embedder="none")
    with MemoryService.open(fresh, clock=clock) as service:
        report = service.import_lines(exported)
        assert (report.errors, report.created) == ([], len(ids))
        assert [service.get(memory_id).kind for memory_id in ids] == list(OLDER_KINDS)
        assert service.get(ids[-1]).category == LONG_STORED
        # Each stays a plain memory, not a reminder's, an entity's or a conversation's.
        assert service.stats().by_kind.get("intention") is None
        again = service.import_lines(exported)
        assert (again.errors, again.unchanged) == ([], len(ids))


def test_a_kind_past_every_spelling_of_the_limit_is_still_refused(
    settings: Settings, clock: FakeClock
) -> None:
    with MemoryService.open(settings, clock=clock) as service:
        lines = [
            json.dumps({"id": "01M98JGAZCVJZDQ3ZRZFB4QM0P", "content": "x", "kind": "k" * 201}),
            json.dumps({"content": "no id", "kind": "\u0958" * 201}),
            json.dumps({"content": "spaced", "kind": " intention"}),
            json.dumps({"id": "01M98JGAZG6WSAA04TRZEF0QG2", "content": "y", "category": "c" * 601}),
        ]
        report = service.import_lines(line + "\n" for line in lines)
        assert [error.line for error in report.errors] == [1, 2, 3, 4]
        messages = [error.error for error in report.errors]
        assert [message.split(":")[0] for message in messages] == [
            "kind",
            "kind",
            "kind",
            "category",
        ]
        # Each names the limit a kind or category is held to, however long it is.
        assert ["the limit is 200" in message for message in messages] == [True, True, False, True]
        assert "intention" in messages[2]
        assert service.list_memories(limit=10).memories == []
        with pytest.raises(ValidationError) as caught:
            service.list_memories(filters={"kind": "k" * 201})
        assert caught.value.field == "kind"
