""" "Why not recalled?": the stage and the filter reported for each exclusion case."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.errors import NotFoundError, ValidationError
from recalld.model import Filters
from recalld.retrieval.features import FEATURES
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

QUERY = "where does the staging database live?"


@pytest.fixture
def service(db_path: Path, clock: FakeClock) -> MemoryService:
    opened = MemoryService.open(semantic_settings(db_path), clock=clock)
    opened.remember_many(
        [
            {"content": "The staging database lives in the Melbourne region", "tags": ["infra"]},
            {"content": "The production database runs in Sydney", "tags": ["infra"]},
            {"content": "Grandma grows roses in her garden", "kind": "experience"},
        ]
    )
    opened.new_worker().run_until_idle()
    return opened


def _id(service: MemoryService, content_start: str) -> str:
    for memory in service.list_memories(limit=100).memories:
        if memory.content.startswith(content_start):
            return memory.id
    raise AssertionError(content_start)


def test_explain_returned_memory_reports_rank_channels_and_features(
    service: MemoryService,
) -> None:
    with service:
        target = _id(service, "The staging")
        explained = service.explain(QUERY, target)
        assert explained.stage == "returned"
        assert explained.rank == 1
        assert explained.found_by == ["fts", "vector"]
        assert explained.excluded_by == []
        assert set(explained.channels) == {"keyword", "text"}
        assert set(explained.features) <= set(FEATURES)
        assert {"keyword", "cosine", "keyword_rank", "cosine_rank"} <= set(explained.features)
        assert explained.score >= explained.min_score == service.settings.min_score
        hit = service.search(QUERY)[0]
        assert hit.memory.id == target
        assert hit.score == explained.score
        assert hit.channels == explained.channels
        assert set(explained.contributions) <= set(explained.features)


def test_explain_below_threshold_and_beyond_limit(service: MemoryService) -> None:
    with service:
        weak = _id(service, "The production")
        below = service.explain(QUERY, weak)
        assert below.stage == "below_threshold"
        assert below.score < below.min_score
        assert weak not in {hit.memory.id for hit in service.search(QUERY)}
        beyond = service.explain(QUERY, weak, min_score=0, limit=1)
        assert beyond.stage == "beyond_limit"
        assert beyond.rank == 2
        assert service.explain(QUERY, weak, min_score=0, limit=2).stage == "returned"


def test_explain_not_in_pool_and_still_queued(db_path: Path, clock: FakeClock) -> None:
    with MemoryService.open(semantic_settings(db_path, vector_candidates=1), clock=clock) as svc:
        svc.remember("The staging database lives in the Melbourne region")
        svc.remember("Grandma grows roses in her garden")
        svc.new_worker().run_until_idle()
        queued = svc.remember("Tulips and daffodils bloom in spring").id
        garden = _id(svc, "Grandma")
        outside = svc.explain(QUERY, garden)
        assert outside.stage == "not_in_pool"
        assert outside.found_by == []
        assert "shares no word" in outside.reason
        assert "nearest vectors" in outside.reason
        waiting = svc.explain(QUERY, queued)
        assert waiting.stage == "not_in_pool"
        assert waiting.index_state == "queued"
        assert "queued for embedding" in waiting.reason
        assert "text" not in waiting.channels


def test_explain_reports_the_filter_that_excludes(service: MemoryService) -> None:
    with service:
        target = _id(service, "The staging")
        cases = {
            "kind": Filters(kind="experience"),
            "category": Filters(category="spatial"),
            "speaker": Filters(speaker="Ana"),
            "tags_any": Filters(tags_any=["garden"]),
            "tags_all": Filters(tags_all=["infra", "garden"]),
            "since": Filters(since="2030-01-01T00:00:00Z"),
            "until": Filters(until="2000-01-01T00:00:00Z"),
            "created_since": Filters(created_since="2030-01-01T00:00:00Z"),
            "created_until": Filters(created_until="2000-01-01T00:00:00Z"),
        }
        for name, filters in cases.items():
            explained = service.explain(QUERY, target, filters=filters)
            assert explained.stage == "excluded", name
            assert explained.excluded_by == [name]
            assert explained.found_by == []
            assert target not in {hit.memory.id for hit in service.search(QUERY, filters=filters)}
        allowed = service.explain(QUERY, target, filters=Filters(tags_any=["infra"]))
        assert allowed.stage == "returned"


def test_explain_expired_memory(db_path: Path, clock: FakeClock) -> None:
    with MemoryService.open(semantic_settings(db_path), clock=clock) as service:
        fleeting = service.remember(
            "The staging database lives in the Melbourne region", ttl_seconds=30
        )
        service.new_worker().run_until_idle()
        assert service.explain(QUERY, fleeting.id).stage == "returned"
        clock.advance(60)
        explained = service.explain(QUERY, fleeting.id)
        assert explained.stage == "excluded"
        assert explained.excluded_by == ["expired"]
        # Nothing it said is shown, not even as a score that tells a right guess from a wrong.
        assert (explained.rank, explained.score, explained.found_by) == (None, 0.0, [])
        assert (explained.channels, explained.features, explained.contributions) == ({}, {}, {})
        assert service.search(QUERY) == []


def test_explain_other_namespace_looks_like_an_unknown_id(service: MemoryService) -> None:
    with service:
        hidden = service.remember("staging database notes of another tenant", namespace="other")
        service.new_worker().run_until_idle()
        with pytest.raises(NotFoundError) as other:
            service.explain(QUERY, hidden.id)
        with pytest.raises(NotFoundError) as unknown:
            service.explain(QUERY, "01NOTANIDTHATEXISTS000000")
        assert "not visible" in str(other.value)
        assert str(other.value).replace(hidden.id, "ID") == str(unknown.value).replace(
            "01NOTANIDTHATEXISTS000000", "ID"
        )
        assert service.explain(QUERY, hidden.id, namespace="other").stage == "returned"


def test_explain_bad_input_changes_nothing(service: MemoryService) -> None:
    with service:
        target = _id(service, "The staging")
        for bad in (-1.0, 1.01):
            with pytest.raises(ValidationError) as caught:
                service.explain(QUERY, target, min_score=bad)
            assert caught.value.field == "min_score"
        with pytest.raises(ValidationError) as limit:
            service.explain(QUERY, target, limit=0)
        assert limit.value.field == "limit"
        with pytest.raises(NotFoundError):
            service.explain(QUERY, "")
        service.explain(QUERY, target)
        memory = service.get(target)
        assert memory.access_count == 0
        assert memory.last_accessed_at is None


def test_explain_rank_is_the_position_recall_returns_it_at(service: MemoryService) -> None:
    # A near-duplicate ranked above a memory collapses into its twin and takes no
    # place among the hits: explain's rank must not count it, or a memory returned
    # third reads as rank 4 beside a limit of 3.
    with service:
        service.remember("The staging database lives in the Melbourne region!", source="x://a")
        service.remember("The staging database lives in the Melbourne region.", source="x://a")
        service.new_worker().run_until_idle()
        hits = service.search(QUERY, min_score=0, limit=3)
        assert len(hits) == 3
        assert any(hit.channels.get("duplicates") for hit in hits)
        for position, hit in enumerate(hits, start=1):
            explained = service.explain(QUERY, hit.memory.id, min_score=0, limit=3)
            assert explained.stage == "returned"
            assert (explained.rank, explained.score) == (position, hit.score)


def test_explain_rank_past_the_limit_counts_the_hits_tied_with_it(
    service: MemoryService,
) -> None:
    # The same words from two sources score alike and are not near-duplicates (each
    # source is kept): recall returns them in turn, so one left out by the limit is
    # ranked after the hits, not beside the first at rank 1.
    with service:
        for source in ("x://a", "x://b"):
            service.remember("The staging database lives in the Melbourne region", source=source)
        service.new_worker().run_until_idle()
        hits = service.search(QUERY, min_score=0, limit=10)
        assert hits[0].score == hits[1].score == hits[2].score
        for limit in (1, 2):
            for position, hit in enumerate(hits, start=1):
                explained = service.explain(QUERY, hit.memory.id, min_score=0, limit=limit)
                assert explained.stage == ("returned" if position <= limit else "beyond_limit")
                assert explained.rank == position


def test_explain_not_in_pool_names_only_the_searches_that_ran(
    db_path: Path, clock: FakeClock
) -> None:
    """Adversarial pass c58: keyword mode, a store without an embedder and a stop-word
    query were told "not among the 100 nearest vectors" (or "best keyword matches") for a
    search that never ran; the reason now says which channel was not asked, and why."""
    with MemoryService.open(semantic_settings(db_path, vector_candidates=1), clock=clock) as svc:
        svc.remember("The staging database lives in the Melbourne region")
        svc.remember("Grandma grows roses in her garden")
        svc.new_worker().run_until_idle()
        garden = _id(svc, "Grandma")
        keyword = svc.explain(QUERY, garden, mode="keyword")
        assert keyword.stage == "not_in_pool"
        assert "nearest vectors" not in keyword.reason
        assert "vectors are not searched in keyword mode" in keyword.reason
        vector = svc.explain("zzqx", garden, mode="vector", min_score=0)
        assert "keyword matches" not in vector.reason
        assert "shares no word" not in vector.reason
        # "the" is in the staging note, yet only the query's meaning is compared.
        staging = _id(svc, "The staging")
        nearest = svc.search("the", min_score=0)[0].memory.id
        left_out = staging if nearest != staging else garden
        stop_words = svc.explain("the", left_out, min_score=0)
        assert stop_words.stage == "not_in_pool"
        assert "only stop words" in stop_words.reason
        assert "keyword matches" not in stop_words.reason
        assert "nearest vectors" in stop_words.reason
    with MemoryService.open(semantic_settings(db_path, embedder="none"), clock=clock) as svc:
        keyword_only = svc.explain(QUERY, garden)
        assert keyword_only.stage == "not_in_pool"
        assert "shares no word" in keyword_only.reason
        assert "nearest vectors" not in keyword_only.reason
        assert "no embedder is configured" in keyword_only.reason
