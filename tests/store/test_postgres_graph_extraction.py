"""Graph rows written in one global order: a batch of extractions (and a write dropping
one) takes shared entities by key across the whole batch, not job by job.

Each test holds one entity row in a transaction of its own, lets the code under test run
into it, and then asks which other rows it already holds (a NOWAIT lock fails on them).
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from recalld.graph.types import ExtractedEntity, Extraction
from recalld.store.postgres import PostgresStore
from tests.store.contract.conftest import NOW, record
from tests.store.contract.test_jobs import LEASE, MODEL
from tests.store.postgres_interleaving import (
    Running,
    finished_or_blocked,
    held_elsewhere,
    opened_store,
)

pytestmark = pytest.mark.postgres

AMY = Extraction(entities=(ExtractedEntity("Amy", "person"),))
ZED = Extraction(entities=(ExtractedEntity("Zed", "person"),))
BOTH = Extraction(entities=(ExtractedEntity("Amy", "person"), ExtractedEntity("Zed", "person")))
ENTITY = "SELECT 1 FROM graph_entities WHERE key = %s"


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresStore]:
    yield from opened_store(postgres_url, graph_extractor="rules")


def _queued(store: PostgresStore, *ids: str) -> list[int]:
    seqs = []
    with store.transaction() as tx:
        for id in ids:
            memory = tx.insert(record(id=id, content=f"text {id}"))
            tx.enqueue_graph(memory.seq, MODEL, NOW)
            seqs.append(memory.seq)
    return seqs


def _requeued(store: PostgresStore, seq: int) -> None:
    with store.transaction() as tx:
        tx.enqueue_graph(seq, MODEL, NOW)


def _extract(store: PostgresStore, extractions: dict[int, Extraction]) -> int:
    jobs = store.graph.claim_jobs("worker", MODEL, 10, NOW, LEASE, 5)
    assert sorted(job.seq for job in jobs) == sorted(extractions)
    return store.graph.complete_jobs(
        "worker", MODEL, [(job, extractions[job.seq]) for job in jobs], NOW
    )


def test_postgres_graph_extraction_a_batch_takes_entities_in_key_order(
    store: PostgresStore, postgres_url: str
) -> None:
    (first,) = _queued(store, "first")
    _extract(store, {first: BOTH})
    # The older memory names Zed, the younger Amy: job by job, Zed would be taken first.
    older, younger = _queued(store, "older", "younger")
    with psycopg.connect(postgres_url) as holder:
        holder.execute(f"{ENTITY} FOR UPDATE", ("zed",))
        completing = Running(lambda: _extract(store, {older: ZED, younger: AMY}))
        assert finished_or_blocked(completing, postgres_url) == "blocked"
        assert held_elsewhere(postgres_url, ENTITY, ("amy",))
        holder.rollback()
    assert completing.outcome() == 2
    entities = store.graph.entities_by_key("default", ["amy", "zed"], NOW)
    assert {key: entity.mentions for key, entity in entities.items()} == {"amy": 2, "zed": 2}


def test_postgres_graph_extraction_an_entity_a_memory_stops_naming_is_taken_in_order(
    store: PostgresStore, postgres_url: str
) -> None:
    (seq,) = _queued(store, "renamed")
    _extract(store, {seq: AMY})
    (other,) = _queued(store, "other")
    _extract(store, {other: ZED})
    _requeued(store, seq)
    with psycopg.connect(postgres_url) as holder:
        holder.execute(f"{ENTITY} FOR UPDATE", ("zed",))
        # Amy loses its only mention (and goes): it is taken before Zed, not at the delete.
        completing = Running(lambda: _extract(store, {seq: ZED}))
        assert finished_or_blocked(completing, postgres_url) == "blocked"
        assert held_elsewhere(postgres_url, ENTITY, ("amy",))
        holder.rollback()
    assert completing.outcome() == 1
    entities = store.graph.entities_by_key("default", ["amy", "zed"], NOW)
    assert {key: entity.mentions for key, entity in entities.items()} == {"zed": 2}


def test_postgres_graph_extraction_forget_takes_entities_in_key_order(
    store: PostgresStore, postgres_url: str
) -> None:
    (seq,) = _queued(store, "forgotten")
    _extract(store, {seq: BOTH})
    with psycopg.connect(postgres_url) as holder:
        holder.execute(f"{ENTITY} FOR UPDATE", ("zed",))

        def forget() -> None:
            with store.transaction() as tx:
                tx.delete(seq)

        forgetting = Running(forget)
        assert finished_or_blocked(forgetting, postgres_url) == "blocked"
        assert held_elsewhere(postgres_url, ENTITY, ("amy",))
        holder.rollback()
    forgetting.outcome()
    assert store.graph.entities_by_key("default", ["amy", "zed"], NOW) == {}


def test_postgres_graph_extraction_an_entity_passed_on_in_a_batch_keeps_its_id(
    store: PostgresStore,
) -> None:
    (leaving,) = _queued(store, "leaving")
    _extract(store, {leaving: AMY})
    before = store.graph.entities_by_key("default", ["amy"], NOW)["amy"]
    (arriving,) = _queued(store, "arriving")
    _requeued(store, leaving)
    # In one batch the older memory stops naming Amy and the younger starts.
    assert _extract(store, {leaving: ZED, arriving: AMY}) == 2
    entities = store.graph.entities_by_key("default", ["amy", "zed"], NOW)
    assert entities["amy"].id == before.id
    assert {key: entity.mentions for key, entity in entities.items()} == {"amy": 1, "zed": 1}
    mentions = store.graph.entities_of("default", [leaving, arriving])
    assert sorted((mention.seq, mention.entity_id) for mention in mentions) == [
        (leaving, entities["zed"].id),
        (arriving, before.id),
    ]
