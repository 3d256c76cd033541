"""The graph channel of hybrid recall: seeds from the query, the walk, candidates, features."""

from __future__ import annotations

from pathlib import Path

from recalld.config import Settings
from recalld.graph.query import query_keys
from recalld.retrieval.graph_channel import GraphChannel
from recalld.service import MemoryService
from recalld.store.base import Scope
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings


def _open(db_path: Path, clock: FakeClock, graph_recall: bool = True) -> MemoryService:
    settings = Settings(
        db=db_path,
        synchronous="NORMAL",
        embedder="none",
        graph_extractor="rules",
        graph_recall=graph_recall,
    )
    return MemoryService.open(settings, clock=clock)


def _story(service: MemoryService) -> tuple[str, str]:
    moved = service.remember("Kate: I moved to Lisbon last spring.").id
    tarts = service.remember("Lisbon bakeries sell the best custard tarts.").id
    for index in range(5):
        service.remember(f"Unrelated note number {index} about Tuesday plans.")
    service.new_worker().run_until_idle()
    return moved, tarts


def test_graph_query_keys_are_normalised_ngrams_without_stopword_edges() -> None:
    keys = query_keys("Where did Kate Smith go?")
    assert "kate smith" in keys
    assert "kate" in keys
    assert "did" not in keys
    assert "where did" not in keys


def test_graph_walk_brings_what_shares_an_entity_not_words(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock) as service:
        moved, tarts = _story(service)
        hits = service.search("Where did Kate move?", limit=5, min_score=0)
        by_id = {hit.memory.id: hit for hit in hits}
        assert hits[0].memory.id == moved
        assert "graph" in hits[0].backends
        assert hits[0].channels["graph"] > 0
        # No word of the question is in it: only the graph (Kate -> Lisbon -> it) finds it.
        assert tarts in by_id
        assert by_id[tarts].backends == ["graph"]
        assert by_id[tarts].channels["keyword"] == 0.0
        assert 0 < by_id[tarts].channels["graph"] < hits[0].channels["graph"]
        # Keyword-only mode has no graph channel.
        keyword_only = service.search("Kate", mode="keyword", min_score=0)
        assert all("graph" not in hit.backends for hit in keyword_only)


def test_graph_recall_off_turns_the_channel_off(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock, graph_recall=False) as service:
        moved, _ = _story(service)
        assert service.indexing.retriever.graph is None
        hits = service.search("Where did Kate move?", limit=5, min_score=0)
        assert [hit.memory.id for hit in hits] == [moved]
        assert all("graph" not in hit.channels for hit in hits)


def test_graph_recall_is_off_by_default_and_has_its_own_model(
    db_path: Path, clock: FakeClock
) -> None:
    assert Settings(db=db_path).graph_recall is False
    # With an embedder, hybrid recall with the graph is scored by the model fitted on
    # the graph's pools, without it by the plain hybrid model (these memories are plain
    # notes: no speaker, no source, so each model's notes twin).
    for graph_recall, model in (
        (False, "hashing-256/hybrid/notes"),
        (True, "hashing-256/hybrid+graph/notes"),
    ):
        path = db_path.with_name(f"graph-{graph_recall}.db")
        settings = semantic_settings(path, graph_recall=graph_recall)
        with MemoryService.open(settings, clock=clock) as service:
            moved, _ = _story(service)
            assert (service.indexing.retriever.graph is not None) is graph_recall
            explained = service.explain("Where did Kate move?", moved)
            assert explained.model == model
            assert ("graph_score" in explained.contributions) is graph_recall


def test_graph_features_report_entity_overlap_and_score(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock) as service:
        moved, tarts = _story(service)
        channel = service.indexing.retriever.graph
        assert isinstance(channel, GraphChannel)
        seqs = [service.get(moved).seq, service.get(tarts).seq]
        scope = Scope(namespaces=("default",), now=clock.now)
        features = channel.features(scope, "Where did Kate move?")
        first, second = features[seqs[0]], features[seqs[1]]
        assert first.entity_overlap == 1.0
        assert first.seed_entities == ("Kate",)
        assert first.graph_score == 1.0
        assert second.entity_overlap == 0.0
        assert 0 < second.graph_score < 1.0
        # The reranker sees both values as features of the pool's candidates.
        pool, _ = service.indexing.retriever.pool(scope, "Where did Kate move?", ["kate"], "hybrid")
        position = pool.index_of(seqs[1])
        assert position is not None
        assert pool.candidates[position].graph_score == second.graph_score


def test_graph_channel_respects_namespaces_and_filters(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock) as service:
        _story(service)
        service.remember("Kate: Lisbon again!", namespace="other", kind="secret")
        service.new_worker().run_until_idle()
        hits = service.search("Where did Kate move?", limit=10, min_score=0)
        assert all(hit.memory.namespace == "default" for hit in hits)
        other = service.search("Where did Kate move?", namespace="other", limit=10, min_score=0)
        assert [hit.memory.content for hit in other] == ["Kate: Lisbon again!"]
        from recalld.model import Filters

        filtered = service.search(
            "Where did Kate move?", filters=Filters(kind="none"), limit=10, min_score=0
        )
        assert filtered == []
