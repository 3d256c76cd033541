"""The knowledge graph: declared entities and relations, extracted mentions, reads, walls."""

from __future__ import annotations

from recalld.graph.types import ExtractedEntity, ExtractedRelation, Extraction
from recalld.store.base import Store
from tests.store.contract.conftest import NOW, record
from tests.store.contract.test_jobs import LEASE, MODEL


def extracted(store: Store, id: str, extraction: Extraction, namespace: str = "default") -> int:
    with store.transaction() as tx:
        memory = tx.insert(record(id=id, content=f"text {id}", namespace=namespace))
        tx.enqueue_graph(memory.seq, MODEL, NOW)
    jobs = store.graph.claim_jobs("w", MODEL, 10, NOW, LEASE, 5)
    store.graph.complete_jobs("w", MODEL, [(job, extraction) for job in jobs], NOW)
    return memory.seq


ANNA_PARIS = Extraction(
    entities=(ExtractedEntity("Anna", "person", 2), ExtractedEntity("Paris", "place")),
    relations=(
        ExtractedRelation("Anna", "move_to", "Paris"),
        ExtractedRelation("Anna", "likes", "jazz"),
    ),
)


def test_graph_extraction_builds_entities_mentions_relations(store: Store) -> None:
    seq = extracted(store, "g1", ANNA_PARIS)
    entities = store.graph.entities_by_key("default", ["anna", "paris", "jazz", "nobody"], NOW)
    assert sorted(entities) == ["anna", "jazz", "paris"]
    assert entities["anna"].mentions == 1
    assert entities["anna"].type == "person"
    assert entities["jazz"].type == "topic"
    mentions = {m.entity_id: m for m in store.graph.entities_of("default", [seq])}
    assert mentions[entities["anna"].id].count == 2
    assert (
        store.graph.entity_by_id("default", [entities["paris"].id], NOW)[entities["paris"].id].name
        == "Paris"
    )
    relations = store.graph.relations(
        "default", NOW, entity_ids=[entities["anna"].id], predicate=None, limit=10
    )
    assert sorted((r.subject, r.predicate, r.object) for r in relations) == [
        ("Anna", "likes", "jazz"),
        ("Anna", "move_to", "Paris"),
    ]
    assert [
        r.predicate for r in store.graph.relations_from("default", [entities["anna"].id], NOW)
    ] in (
        ["likes", "move_to"],
        ["move_to", "likes"],
    )
    listed = store.graph.list_entities("default", NOW, query=None, type=None, limit=2, after=None)
    assert [e.key for e in listed] == ["anna", "jazz"]
    rest = store.graph.list_entities(
        "default", NOW, query=None, type=None, limit=5, after=(listed[-1].key, listed[-1].id)
    )
    assert [e.key for e in rest] == ["paris"]
    assert [
        e.key
        for e in store.graph.list_entities(
            "default", NOW, query="par", type=None, limit=5, after=None
        )
    ] == ["paris"]
    assert [
        e.key
        for e in store.graph.list_entities(
            "default", NOW, query=None, type="PERSON", limit=5, after=None
        )
    ] == ["anna"]
    assert [m.seq for m in store.graph.mentions("default", [entities["anna"].id], NOW, 5)] == [seq]
    assert store.graph.entities_by_key("other", ["anna"], NOW) == {}


def test_graph_forget_drops_orphans_but_keeps_declared(store: Store) -> None:
    seq = extracted(store, "g1", ANNA_PARIS)
    with store.transaction() as tx:
        declared, changed = tx.graph.declare_entity("default", "Paris", "city", NOW)
        assert changed
        assert declared.declared
        assert declared.type == "city"
        assert tx.graph.declare_entity("default", "Paris", None, NOW)[1] is False
    with store.transaction() as tx:
        tx.delete(seq)
    remaining = store.graph.entities_by_key("default", ["anna", "paris", "jazz"], NOW)
    assert sorted(remaining) == ["paris"]
    assert store.graph.relations("default", NOW, entity_ids=None, predicate=None, limit=10) == []
    counts = store.graph.counts(["default"], 5)
    assert (counts.entities, counts.mentions, counts.relations) == (1, 0, 0)


def test_graph_drop_extraction_keeps_the_memory_and_what_others_say(store: Store) -> None:
    # A memory whose text changed: what its extraction found goes, the memory stays, and
    # entities declared or still mentioned by another memory stay.
    seq = extracted(store, "g1", ANNA_PARIS)
    other = extracted(store, "g2", Extraction(entities=(ExtractedEntity("Anna", "person"),)))
    with store.transaction() as tx:
        tx.graph.declare_entity("default", "Paris", None, NOW)
    with store.transaction() as tx:
        tx.graph.drop_extraction(seq)
        assert tx.find("default", id="g1") is not None
    remaining = store.graph.entities_by_key("default", ["anna", "paris", "jazz"], NOW)
    assert sorted(remaining) == ["anna", "paris"]
    assert remaining["anna"].mentions == 1
    assert store.graph.entities_of("default", [seq]) == []
    assert store.graph.entities_of("default", [other])
    assert store.graph.relations("default", NOW, entity_ids=None, predicate=None, limit=10) == []
    counts = store.graph.counts(["default"], 5)
    assert (counts.entities, counts.mentions, counts.relations) == (2, 1, 0)
    assert counts.extracted == {MODEL: 1}  # g1's text is to be extracted again


def test_graph_declared_relations_and_observations(store: Store) -> None:
    with store.transaction() as tx:
        anna, _ = tx.graph.declare_entity("default", "Anna", "person", NOW)
        bob, _ = tx.graph.declare_entity("default", "Bob", None, NOW)
        assert tx.graph.find_entity("default", "bob", NOW) is not None
        assert tx.graph.declare_relation("default", anna.id, "knows", bob.id, NOW) is True
        assert tx.graph.declare_relation("default", anna.id, "knows", bob.id, NOW) is False
        note = tx.insert(record(id="obs", content="Anna plays the cello", kind="observation"))
        tx.graph.link_observation(anna.id, note.seq)
        tx.graph.link_observation(anna.id, note.seq)
        assert tx.graph.observations(anna.id, NOW) == [(note.seq, "Anna plays the cello")]
    assert store.graph.observation_memories("default", [anna.id], NOW) == {
        anna.id: [(note.seq, "Anna plays the cello")]
    }
    assert [e.key for e in store.graph.search_entities("default", "cello", NOW, 5)] == ["anna"]
    assert [e.key for e in store.graph.search_entities("default", "bob", NOW, 5)] == ["bob"]
    with store.transaction() as tx:
        assert tx.graph.delete_relation("default", anna.id, "knows", bob.id) is True
        assert tx.graph.delete_relation("default", anna.id, "knows", bob.id) is False
        tx.graph.delete_entity(bob.id)
    assert sorted(store.graph.entities_by_key("default", ["anna", "bob"], NOW)) == ["anna"]


def test_graph_observations_among_given_texts_compares_in_the_database(store: Store) -> None:
    # The knowledge writes ask only for the texts they were given (adversarial pass f64):
    # add_observations read every observation of the entity to find the few it had, 180 MB
    # for 3,000 observations of 60,000 characters (1.5 s a call of one).
    with store.transaction() as tx:
        anna, _ = tx.graph.declare_entity("default", "Anna", "person", NOW)
        for number, text in enumerate(["plays the cello", "lives in Porto", "plays chess"]):
            note = tx.insert(record(id=f"obs{number}", content=text, kind="observation"))
            tx.graph.link_observation(anna.id, note.seq)
        found = tx.graph.observations(anna.id, NOW, ["plays chess", "plays the cello", "absent"])
        assert [text for _, text in found] == ["plays the cello", "plays chess"]
        assert tx.graph.observations(anna.id, NOW, []) == []
        assert len(tx.graph.observations(anna.id, NOW)) == 3
