"""A kind is kept in one Unicode spelling (NFC), as a category and a tag are: "réunion"
written decomposed (as macOS and some tools send it) and typed precomposed in a filter
name one kind (adversarial pass d64), on both stores."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.service import MemoryService
from tests.conftest import FakeClock

COMPOSED = "réunion"
DECOMPOSED = unicodedata.normalize("NFD", COMPOSED)


@pytest.fixture
def service(any_database: Path | str, clock: FakeClock) -> Iterator[MemoryService]:
    settings = Settings(db=any_database, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as opened:
        yield opened


@pytest.mark.parametrize(("written", "asked"), [(DECOMPOSED, COMPOSED), (COMPOSED, DECOMPOSED)])
def test_a_kind_filter_finds_the_kind_written_in_the_other_spelling(
    service: MemoryService, written: str, asked: str
) -> None:
    receipt = service.remember("budget review with the finance team", kind=written)
    service.remember("budget notes of another kind", kind="note")
    assert service.get(receipt.id).kind == COMPOSED
    hits = service.search("budget", filters={"kind": asked}, mode="keyword", min_score=0)
    assert [hit.memory.id for hit in hits] == [receipt.id]
    listed = service.list_memories(filters={"kind": asked}).memories
    assert [memory.id for memory in listed] == [receipt.id]
    explained = service.explain("budget", receipt.id, filters={"kind": asked}, min_score=0)
    assert explained.stage == "returned"
    assert service.stats().by_kind == {"note": 1, COMPOSED: 1}


def test_an_update_and_an_import_keep_the_kind_composed(service: MemoryService) -> None:
    memory_id = service.remember("budget review", kind="note").id
    assert service.update(memory_id, kind=DECOMPOSED).kind == COMPOSED
    line = json.dumps({"id": "imported", "content": "imported budget", "kind": DECOMPOSED})
    service.import_lines([line])
    assert service.get("imported").kind == COMPOSED
    listed = service.list_memories(filters={"kind": COMPOSED}).memories
    assert {memory.id for memory in listed} == {memory_id, "imported"}


def test_a_kind_stored_decomposed_by_an_earlier_version_is_still_found(
    db_path: Path, clock: FakeClock
) -> None:
    import apsw

    settings = Settings(db=db_path, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as opened:
        memory_id = opened.remember("budget review", kind=COMPOSED).id
    # As an earlier version kept it: the kind as written.
    connection = apsw.Connection(str(db_path))
    connection.execute("UPDATE memories SET kind = ? WHERE id = ?", (DECOMPOSED, memory_id))
    connection.close()
    with MemoryService.open(settings, clock=clock) as opened:
        for asked in (COMPOSED, DECOMPOSED):
            listed = opened.list_memories(filters={"kind": asked}).memories
            assert [memory.id for memory in listed] == [memory_id]
            explained = opened.explain("budget", memory_id, filters={"kind": asked}, min_score=0)
            assert explained.stage == "returned"
        # Review of pass d64: stats showed the two spellings as two kinds that look alike.
        opened.remember("budget notes", kind=COMPOSED)
        assert opened.stats().by_kind == {COMPOSED: 2}


# Devanagari क़ (U+0958): NFC writes it as two code points (क + U+093C).
EXPANDING = "\u0958"


@pytest.mark.parametrize("field", ["kind", "category"])
def test_a_name_composing_past_its_limit_is_refused_and_a_shorter_one_round_trips(
    service: MemoryService, field: str
) -> None:
    # Review of pass d64: a 200-character kind was stored 400 long, and the import of its
    # own export refused it ("kind: String should have at most 200 characters").
    too_long: dict[str, Any] = {field: EXPANDING * 200}
    with pytest.raises(ValidationError) as caught:
        service.remember("too long once composed", **too_long)
    assert caught.value.field == field
    assert "400 characters once composed (NFC)" in caught.value.message
    assert "the limit is 200" in caught.value.message
    assert service.list_memories(limit=10).memories == []
    fits: dict[str, Any] = {field: EXPANDING * 100}
    memory_id = service.remember("fits once composed", **fits).id
    exported = list(service.export())
    service.forget(memory_id)
    report = service.import_lines(exported)
    assert report.errors == []
    assert getattr(service.get(memory_id), field) == unicodedata.normalize("NFC", EXPANDING * 100)


@pytest.mark.parametrize("stored", [DECOMPOSED, EXPANDING])
def test_migration_29_composes_a_kind_an_older_version_stored(
    db_path: Path, clock: FakeClock, stored: str
) -> None:
    # Review of pass d64: U+0958 is neither NFC nor NFD, so the kind filter (composed,
    # then matched in either spelling) found it by no spelling, though the version
    # before found it typed as stored.
    import apsw

    settings = Settings(db=db_path, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as opened:
        memory_id = opened.remember("budget review", kind="note").id
        before = opened.get(memory_id).updated_at
    connection = apsw.Connection(str(db_path))  # as a version before migration 29 kept it
    connection.execute("UPDATE memories SET kind = ? WHERE id = ?", (stored, memory_id))
    connection.execute("DELETE FROM schema_migrations WHERE version = 29")
    connection.execute("PRAGMA user_version = 28")
    connection.close()
    composed = unicodedata.normalize("NFC", stored)
    with MemoryService.open(settings, clock=clock) as opened:
        memory = opened.get(memory_id)
        assert (memory.kind, memory.updated_at) == (composed, before)
        listed = opened.list_memories(filters={"kind": stored}).memories
        assert [memory.id for memory in listed] == [memory_id]
        assert opened.stats().by_kind == {composed: 1}


@pytest.mark.postgres
def test_postgres_migration_29_composes_a_kind_an_older_version_stored(
    postgres_url: str, clock: FakeClock
) -> None:
    import psycopg

    from recalld.store.migrations_spelling import postgres_migration_29

    settings = Settings(db=postgres_url, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as opened:
        ids = [opened.remember(f"budget {index}").id for index in range(3)]
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            for memory_id, stored in zip(ids, (DECOMPOSED, EXPANDING, "plain"), strict=True):
                connection.execute(
                    "UPDATE memories SET kind = %s WHERE id = %s", (stored, memory_id)
                )
            postgres_migration_29(connection.execute)
        kinds = [opened.get(memory_id).kind for memory_id in ids]
        assert kinds == [COMPOSED, unicodedata.normalize("NFC", EXPANDING), "plain"]
        listed = opened.list_memories(filters={"kind": EXPANDING}).memories
        assert [memory.id for memory in listed] == [ids[1]]


@pytest.mark.parametrize("field", ["kind", "category"])
def test_a_kind_or_category_is_trimmed_as_a_tag_is(service: MemoryService, field: str) -> None:
    # Adversarial pass a65: tags were trimmed, kinds and categories not, so " work" was
    # stored as given, a category of its own that the filter "work" did not find.
    spaced: dict[str, Any] = {field: " work  "}
    memory_id = service.remember("budget review", tags=[" work "], **spaced).id
    assert getattr(service.get(memory_id), field) == "work"
    assert service.get(memory_id).tags == ["work"]
    for asked in ("work", "  work "):
        listed = service.list_memories(filters={field: asked}).memories
        assert [memory.id for memory in listed] == [memory_id]
    service.update(memory_id, **{field: " home "})
    assert getattr(service.get(memory_id), field) == "home"
    exported = [json.loads(line) for line in service.export()]
    for line in exported:
        if line.get("id") == memory_id:
            line[field] = " imported "
    service.forget(memory_id)
    report = service.import_lines(json.dumps(line) + "\n" for line in exported)
    assert report.errors == []
    assert getattr(service.get(memory_id), field) == "imported"
    counts = service.stats().by_kind if field == "kind" else service.stats().by_category
    assert counts == {"imported": 1}
    blank: dict[str, Any] = {field: "   "}
    with pytest.raises(ValidationError) as caught:
        service.remember("blank", **blank)
    assert caught.value.field == field
