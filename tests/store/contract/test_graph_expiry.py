"""The graph reads at ``now``: what only an expired memory (not purged yet) said is hidden,
and counts are those of live memories; declared entities and relations stay."""

from __future__ import annotations

from datetime import datetime, timedelta

from recalld.graph.types import ExtractedEntity, ExtractedRelation, Extraction
from recalld.store.base import Store
from tests.store.contract.conftest import NOW, record
from tests.store.contract.test_jobs import LEASE, MODEL

EXPIRES = NOW + timedelta(seconds=5)
LATER = NOW + timedelta(seconds=6)

QUAGMIRE = Extraction(
    entities=(
        ExtractedEntity("Bartholomew Quagmire", "person"),
        ExtractedEntity("Ouagadougou", "place"),
    ),
    relations=(ExtractedRelation("Bartholomew Quagmire", "visit", "Ouagadougou"),),
)


def extracted(
    store: Store,
    id: str,
    extraction: Extraction,
    *,
    expires_at: datetime | None = None,
    at: datetime | None = None,
) -> int:
    with store.transaction() as tx:
        memory = tx.insert(record(id=id, content=f"text {id}", expires_at=expires_at, at=at))
        tx.enqueue_graph(memory.seq, MODEL, NOW)
    jobs = store.graph.claim_jobs("w", MODEL, 10, NOW, LEASE, 5)
    store.graph.complete_jobs("w", MODEL, [(job, extraction) for job in jobs], NOW)
    return memory.seq


def _everything(store: Store, now: datetime) -> tuple[set[str], set[tuple[str, str, str]]]:
    """The entity keys and relations every graph read shows at ``now``."""
    graph = store.graph
    keys = ["bartholomew quagmire", "ouagadougou"]
    by_key = graph.entities_by_key("default", keys, now)
    listed = graph.list_entities("default", now, query=None, type=None, limit=10, after=None)
    searched = graph.search_entities("default", "o", now, 10)
    every_id = [
        record.id
        for record in graph.list_entities(
            "default", NOW, query=None, type=None, limit=10, after=None
        )
    ]
    by_id = graph.entity_by_id("default", every_id, now)
    relations = graph.relations("default", now, entity_ids=None, predicate=None, limit=10)
    touching = graph.relations("default", now, entity_ids=every_id, predicate=None, limit=10)
    starting = graph.relations_from("default", every_id, now)
    entity_views = [
        set(by_key),
        {record.key for record in listed},
        {record.key for record in searched},
        {record.key for record in by_id.values()},
    ]
    relation_views = [
        {(r.subject, r.predicate, r.object) for r in found}
        for found in (relations, touching, starting)
    ]
    assert all(view == entity_views[0] for view in entity_views), entity_views
    assert all(view == relation_views[0] for view in relation_views), relation_views
    return entity_views[0], relation_views[0]


def test_graph_reads_hide_what_only_an_expired_memory_said(store: Store) -> None:
    extracted(store, "ttl", QUAGMIRE, expires_at=EXPIRES)
    assert _everything(store, NOW) == (
        {"bartholomew quagmire", "ouagadougou"},
        {("Bartholomew Quagmire", "visit", "Ouagadougou")},
    )
    # Past its TTL, not purged yet: the memory is hidden, and so is what it said.
    assert _everything(store, LATER) == (set(), set())
    counts = store.graph.counts(["default"], 5)
    assert (counts.entities, counts.relations) == (2, 1)  # still stored until the purge


def test_graph_counts_only_live_memories(store: Store) -> None:
    early, late = NOW - timedelta(days=2), NOW - timedelta(days=1)
    extracted(store, "live", QUAGMIRE, at=early)
    extracted(store, "ttl", QUAGMIRE, expires_at=EXPIRES, at=late)
    before = store.graph.entities_by_key("default", ["ouagadougou"], NOW)["ouagadougou"]
    after = store.graph.entities_by_key("default", ["ouagadougou"], LATER)["ouagadougou"]
    assert (before.mentions, after.mentions) == (2, 1)
    ids = [before.id]
    [relation_before] = store.graph.relations(
        "default", NOW, entity_ids=ids, predicate=None, limit=5
    )
    [relation_after] = store.graph.relations(
        "default", LATER, entity_ids=ids, predicate=None, limit=5
    )
    assert (relation_before.sources, relation_before.at) == (2, late)
    assert (relation_after.sources, relation_after.at) == (1, early)


def test_graph_declared_entity_stays_without_its_expired_observation(store: Store) -> None:
    extracted(store, "ttl", QUAGMIRE, expires_at=EXPIRES)
    with store.transaction() as tx:
        ada, _ = tx.graph.declare_entity("default", "Ada", "person", NOW)
        bob, _ = tx.graph.declare_entity("default", "Bob", "person", NOW)
        quagmire = tx.graph.find_entity("default", "bartholomew quagmire", NOW)
        assert quagmire is not None
        tx.graph.declare_relation("default", ada.id, "knows", bob.id, NOW)
        tx.graph.declare_relation("default", ada.id, "met", quagmire.id, NOW)
        kept = tx.insert(record(id="kept", content="Ada plays the cello", kind="observation"))
        fading = tx.insert(
            record(id="fading", content="Ada is in Lisbon", kind="observation", expires_at=EXPIRES)
        )
        tx.graph.link_observation(ada.id, kept.seq)
        tx.graph.link_observation(ada.id, fading.seq)
    graph = store.graph
    assert graph.entities_by_key("default", ["ada"], NOW)["ada"].observations == 2
    assert [e.key for e in graph.search_entities("default", "lisbon", NOW, 5)] == ["ada"]
    shown = graph.entities_by_key("default", ["ada", "bob", "bartholomew quagmire"], LATER)
    assert sorted(shown) == ["ada", "bob"]
    assert (shown["ada"].declared, shown["ada"].observations) == (True, 1)
    assert graph.search_entities("default", "lisbon", LATER, 5) == []
    assert [e.key for e in graph.search_entities("default", "cello", LATER, 5)] == ["ada"]
    # A declared relation stays while both its entities do: the one to an entity only the
    # expired memory mentioned goes (the purge deletes that entity, and the relation with it).
    relations = graph.relations_from("default", [ada.id], LATER)
    assert [(r.object, r.declared, r.sources) for r in relations] == [("Bob", True, 0)]
