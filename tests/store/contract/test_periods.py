"""Recall of a question that names a period, on every store kind (``database``: a SQLite
file, or PostgreSQL with ``--postgres``): the period's own nearest memories are searched
within the caller's filters (this process's index on SQLite, the database's own vector
search on PostgreSQL), a month named without a year is the latest one the namespace holds,
and a question that asks only about the period is answered by its memories."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from recalld.model import Filters
from recalld.retrieval.pool import PERIOD_ONLY_SCORE
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

# clock fixture: Sunday 2026-10-25 16:20 UTC, so "last weekend" is October 17-18.
WEEKEND = datetime.fromisoformat("2026-10-17T11:00:00+00:00")


def _open(database: str | Path, clock: FakeClock, **settings: object) -> MemoryService:
    return MemoryService.open(semantic_settings(database, zone="UTC", **settings), clock=clock)


def _remember(service: MemoryService) -> tuple[str, str]:
    """Twelve older memories, one of last weekend and one that states it on the Monday."""
    service.remember_many(
        [
            {
                "content": f"Bought groceries and paid the bills, week {number}",
                "at": (WEEKEND - timedelta(days=10 + 3 * number)).isoformat(),
                "tags": ["errands"],
            }
            for number in range(12)
        ]
    )
    hiked = service.remember(
        "Hiked Mount Tamalpais with Sam", at=WEEKEND.isoformat(), tags=["outdoors"]
    )
    stated = service.remember(
        "Yesterday I fixed the brakes of my bike", at=(WEEKEND + timedelta(days=2)).isoformat()
    )
    service.new_worker().run_until_idle()
    return hiked.id, stated.id


def test_the_periods_own_search_on_every_store(database: str | Path, clock: FakeClock) -> None:
    # One vector candidate only: the weekend's memory shares no word with the question, so
    # it joins the pool through the period's own search or not at all.
    service = _open(database, clock, vector_candidates=1)
    with service:
        hiked, _ = _remember(service)
        question = "What did I do last weekend?"
        explained = service.explain(question, hiked)
        assert explained.stage == "returned"
        assert explained.features["in_period"] == 1.0
        # The caller's filters hold inside the period's search too.
        errands = service.recall(question, filters=Filters(tags_any=["errands"]), min_score=0)
        assert errands
        assert all(hit.memory.id != hiked for hit in errands)
        kept = service.recall(question, filters=Filters(tags_any=["outdoors"]))
        assert [hit.memory.id for hit in kept] == [hiked]


def test_a_question_about_a_period_alone_on_every_store(
    database: str | Path, clock: FakeClock
) -> None:
    # One vector candidate: the Monday note stating the weekend joins through the search
    # of what was written after the period, the weekend's through the period's own.
    service = _open(database, clock, vector_candidates=1)
    with service:
        hiked, stated = _remember(service)
        hits = {hit.memory.id: hit for hit in service.recall("What did I do last weekend?")}
        for member in (hiked, stated):
            assert hits[member].score >= PERIOD_ONLY_SCORE
            assert hits[member].channels["period_only"] == 1.0
        assert all(
            hit.score < PERIOD_ONLY_SCORE for key, hit in hits.items() if key not in (hiked, stated)
        )


def test_a_month_without_a_year_on_every_store(database: str | Path, clock: FakeClock) -> None:
    service = _open(database, clock, vector_candidates=1)
    with service:
        camping = service.remember("Went camping by the lake", at="2023-06-20T10:00:00Z")
        service.new_worker().run_until_idle()
        assert service.explain("Where did I go in June?", camping.id).features["in_period"] == 1.0
        later = service.remember("Painted the fence", at="2026-06-03T10:00:00Z")
        service.new_worker().run_until_idle()
        assert service.explain("What did I do in June?", later.id).features["in_period"] == 1.0
        assert service.explain("What did I do in June?", camping.id).features["in_period"] == 0.0
