"""Tags and categories are kept in one Unicode spelling (NFC), as keys and speakers are:
"café" typed precomposed and "cafe" + U+0301 are one tag, found by either."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.model import Filters
from recalld.service import MemoryService
from recalld.store.migrations_spelling import migration_28
from tests.conftest import FakeClock
from tests.spelling_support import COMPOSED, DECOMPOSED, assert_composed, write_decomposable


@pytest.fixture
def memory(db_path: Path, clock: FakeClock) -> Iterator[MemoryService]:
    settings = Settings(db=db_path, synchronous="NORMAL", embedder="none", zone="Europe/Paris")
    with MemoryService.open(settings, clock=clock) as service:
        yield service


def test_a_tag_and_a_category_written_decomposed_are_kept_composed(memory: MemoryService) -> None:
    receipt = memory.remember("descaled", tags=[DECOMPOSED, "kitchen"], category=DECOMPOSED)
    stored = memory.get(receipt.id)
    assert (stored.tags, stored.category) == ([COMPOSED, "kitchen"], COMPOSED)
    for spelling in (COMPOSED, DECOMPOSED):
        found = memory.list_memories(filters=Filters(tags_any=[spelling], category=spelling))
        assert [hit.id for hit in found.memories] == [receipt.id]
        assert [
            hit.memory.id for hit in memory.search("descaled", filters=Filters(tags_all=[spelling]))
        ] == [receipt.id]
    # Two spellings of one tag in one write are one tag.
    both = memory.remember("two spellings", tags=[COMPOSED, DECOMPOSED])
    assert memory.get(both.id).tags == [COMPOSED]
    assert memory.update(both.id, tags=[DECOMPOSED, "x"]).tags == [COMPOSED, "x"]
    by_category = memory.stats().by_category
    assert (by_category[COMPOSED], DECOMPOSED in by_category) == (1, False)


def test_a_reminder_on_a_decomposed_tag_fires_on_either_spelling(memory: MemoryService) -> None:
    memory.remind("order more beans", tags=[DECOMPOSED])
    sensed = memory.recollections.sense(memory.recollections.cue(tags=[COMPOSED]))
    assert [item.memory.content for item in sensed if item.kind == "reminder"] == [
        "order more beans"
    ]


def test_tag_limits_still_apply_to_the_tags_as_given(memory: MemoryService) -> None:
    # Composing never lets a longer tag through: the limit counts what was given.
    limit = memory.settings.max_tag_chars
    with pytest.raises(ValidationError) as caught:
        memory.remember("long", tags=["e" + "\u0301" * limit])
    assert caught.value.field == "tags"


def _decompose_as_before(db_path: Path, memory_id: str, reminder_id: str) -> None:
    """Store the memory's tag and category and the reminder's tag trigger decomposed, as
    a version before the rule wrote them, and mark migration 28 not yet applied."""
    connection = apsw.Connection(str(db_path))
    seq = connection.execute("SELECT seq FROM memories WHERE id = ?", (memory_id,)).fetchall()
    connection.execute(
        "UPDATE memories SET tags = ?, category = ? WHERE id = ?",
        (f'["{DECOMPOSED}", "kitchen", "{COMPOSED}"]', DECOMPOSED, memory_id),
    )
    connection.execute("DELETE FROM memory_tags WHERE seq = ?", (seq[0][0],))
    for tag in (DECOMPOSED, "kitchen", COMPOSED):
        connection.execute("INSERT INTO memory_tags(seq, tag) VALUES (?, ?)", (seq[0][0], tag))
    connection.execute(
        "UPDATE intention_triggers SET term = ?, spec = ? WHERE type = 'tag' AND seq ="
        " (SELECT seq FROM memories WHERE id = ?)",
        (DECOMPOSED, f'{{"type": "tag", "tag": "{DECOMPOSED}"}}', reminder_id),
    )
    connection.execute("DELETE FROM schema_migrations WHERE version = 28")
    connection.execute("PRAGMA user_version = 27")
    connection.close()


def test_migration_28_composes_what_an_older_version_stored(
    db_path: Path, clock: FakeClock
) -> None:
    settings = Settings(db=db_path, synchronous="NORMAL", embedder="none", zone="Europe/Paris")
    with MemoryService.open(settings, clock=clock) as service:
        memory_id, reminder_id = write_decomposable(service)
        before = service.get(memory_id).updated_at
    _decompose_as_before(db_path, memory_id, reminder_id)
    with MemoryService.open(settings, clock=clock) as service:
        assert_composed(service, memory_id)
        assert service.get(memory_id).updated_at == before  # no one wrote it
    connection = apsw.Connection(str(db_path))
    rows = connection.execute("SELECT tag FROM memory_tags ORDER BY tag").fetchall()
    connection.close()
    assert rows == [(COMPOSED,), ("kitchen",)]


def test_migration_28_leaves_ascii_and_composed_rows_alone(db_path: Path) -> None:
    settings = Settings(db=db_path, synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings) as service:
        plain = service.remember("plain", tags=["a", "b"], category="c")
        composed = service.remember("composed", tags=[COMPOSED], category=COMPOSED)
    connection = apsw.Connection(str(db_path))
    changes = connection.totalchanges()
    migration_28(connection.execute)
    assert connection.totalchanges() == changes  # nothing needed composing
    connection.close()
    with MemoryService.open(settings) as service:
        assert service.get(plain.id).tags == ["a", "b"]
        assert service.get(composed.id).tags == [COMPOSED]


# Devanagari क़ (U+0958): NFC writes it as two code points (क + U+093C).
EXPANDING = "\u0958"


def test_a_tag_composing_past_its_limit_is_refused_and_a_shorter_one_round_trips(
    memory: MemoryService,
) -> None:
    # Adversarial pass a65: a 100-character tag was stored 200 long, and the import of
    # its own export refused the whole memory ("tags: ... is 200 chars; the limit is 100").
    with pytest.raises(ValidationError) as caught:
        memory.remember("too long once composed", tags=[EXPANDING * 100])
    assert caught.value.field == "tags"
    assert "200 chars once composed (NFC)" in caught.value.message
    assert "the limit is 100" in caught.value.message
    assert memory.list_memories(limit=10).memories == []
    # A filter reaches the tag an older version stored so (review of pass a65, below).
    assert memory.list_memories(filters=Filters(tags_any=[EXPANDING * 100])).memories == []
    memory_id = memory.remember("fits once composed", tags=[EXPANDING * 50]).id
    exported = list(memory.export())
    memory.forget(memory_id)
    report = memory.import_lines(exported)
    assert report.errors == []
    assert [len(tag) for tag in memory.get(memory_id).tags] == [100]


def test_an_export_line_with_a_tag_stored_before_it_was_measured_composed_imports(
    memory: MemoryService,
) -> None:
    # Review of pass a65: a tag of 100 क़ written before that pass is stored 200 code points
    # long (its composed spelling); the import of its export refused the line ("is 200
    # chars; the limit is 100"), so the memory was lost on export -> import. A tag is held
    # there to the limit its shortest spelling met, as the write that stored it was.
    legacy = unicodedata.normalize("NFC", EXPANDING * 100)
    memory_id = memory.remember("written by an older version", tags=["plain"]).id
    lines = [json.loads(line) for line in memory.export()]
    for line in lines:
        if line.get("id") == memory_id:
            line["tags"] = [legacy, "plain"]
    memory.forget(memory_id)
    report = memory.import_lines(json.dumps(line) + "\n" for line in lines)
    assert report.errors == []
    assert memory.get(memory_id).tags == [legacy, "plain"]
    for spelling in (legacy, EXPANDING * 100):
        found = memory.list_memories(filters=Filters(tags_any=[spelling])).memories
        assert [hit.id for hit in found] == [memory_id]
    # No longer than the old write took: 101 letters, or 101 क़ composed, are refused.
    for too_long in ("x" * 101, unicodedata.normalize("NFC", EXPANDING * 101)):
        for line in lines:
            if line.get("id") == memory_id:
                line["tags"] = [too_long]
        refused = memory.import_lines(json.dumps(line) + "\n" for line in lines)
        assert [error.error.split(":")[0] for error in refused.errors] == ["tags"]
        assert memory.get(memory_id).tags == [legacy, "plain"]
        with pytest.raises(ValidationError) as caught:
            memory.list_memories(filters=Filters(tags_any=[too_long]))
        assert caught.value.field == "tags_any"


def test_a_huge_tag_filter_is_refused_without_being_spelled_out(
    memory: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass a65: a filter's tag is measured by its shortest spelling, counted a
    # character at a time; one longer than three times the limit has none within it, and
    # counting a 10 MB one took a minute.
    from recalld import _validate as check

    counted: list[int] = []
    spell = check.shortest_spelling

    def counting(tag: str) -> int:
        counted.append(len(tag))
        return spell(tag)

    monkeypatch.setattr(check, "shortest_spelling", counting)
    for huge in ("x" * 10_000_000, unicodedata.normalize("NFC", EXPANDING * 5_000_000)):
        with pytest.raises(ValidationError) as caught:
            memory.list_memories(filters=Filters(tags_all=[huge]))
        assert caught.value.field == "tags_all"
        assert "the limit is 100" in caught.value.message
    assert all(length <= 300 for length in counted)
