"""Periods on the user's calendar: their length counted in its days, whatever daylight saving
time does, and times at the ends of the calendar."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from recalld.retrieval.periods import query_period
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.mark.parametrize(
    ("asked", "first_day"),
    [
        # The week of October 19-25, 2026 ends daylight saving time: 7 days and an hour.
        (datetime(2026, 10, 26, 10, 0, tzinfo=BERLIN), date(2026, 10, 19)),
        # An ordinary week, and the week that starts it (7 days less an hour).
        (datetime(2026, 10, 19, 10, 0, tzinfo=BERLIN), date(2026, 10, 12)),
        (datetime(2026, 3, 30, 10, 0, tzinfo=BERLIN), date(2026, 3, 23)),
    ],
)
def test_a_week_is_told_of_after_it_whatever_its_length_in_hours(
    asked: datetime, first_day: date
) -> None:
    period = query_period("what did I do last week?", asked, BERLIN)
    assert period is not None
    assert period.start is not None
    assert period.end is not None
    assert period.start.astimezone(BERLIN).date() == first_day
    assert period.days() == 7
    assert period.told_after(period.end) == 1.0
    half_a_week = period.end + timedelta(days=3, hours=12)
    assert period.told_after(half_a_week) == pytest.approx(0.5)


def test_the_period_search_counts_days_of_the_calendar(db_path: Path) -> None:
    # "The past 99 days" asked on November 20, 2026 covers August 13 to November 20: 100
    # days of Berlin's calendar, October 25 among them (25 hours long).
    clock = FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))
    summer = FakeClock(datetime(2026, 8, 20, 12, 0, tzinfo=UTC))
    settings = semantic_settings(db_path, zone="Europe/Berlin")
    with MemoryService.open(settings, clock=clock) as memory:
        retriever = memory.indexing.retriever
        across = retriever.period_of("what did I do in the past 99 days?", clock())
        plain = retriever.period_of("what did I do in the past 99 days?", summer())
        assert across is not None
        assert plain is not None
        assert across.days() == plain.days() == 100
        assert retriever.searches_period(plain)
        assert retriever.searches_period(across)


@pytest.mark.parametrize(
    ("zone", "at"),
    [
        # Valid instants whose day on the user's calendar is the year 10000 or the year 0.
        ("Europe/Berlin", "9999-12-31T23:30:00Z"),
        ("America/Sao_Paulo", "0001-01-01T01:00:00Z"),
    ],
)
def test_a_memory_at_the_end_of_the_calendar_states_no_period(
    db_path: Path, zone: str, at: str
) -> None:
    clock = FakeClock(datetime(2026, 10, 26, 9, 0, tzinfo=UTC))
    with MemoryService.open(semantic_settings(db_path, zone=zone), clock=clock) as memory:
        far = memory.remember("yesterday I walked the dog", at=at)
        near = memory.remember("walked the dog in the park", at="2026-10-24T10:00:00Z")
        memory.new_worker().run_until_idle()
        for question in ("where did I walk the dog since last week?", "the dog before 2027"):
            for mode in ("hybrid", "keyword", "vector"):
                found = {hit.memory.id for hit in memory.search(question, mode=mode, min_score=0)}
                assert near.id in found, (question, mode)
        assert memory.explain("what did I do since last week?", far.id).stage != "excluded"


@pytest.mark.parametrize(
    ("now", "question"),
    [
        # The week after "yesterday" leaves the calendar; so do ten years before June.
        (datetime(9999, 12, 31, 12, 0, tzinfo=UTC), "where did I walk the dog yesterday?"),
        (datetime(9999, 12, 31, 12, 0, tzinfo=UTC), "where did I walk the dog last week?"),
        (datetime(5, 7, 10, 12, 0, tzinfo=UTC), "where did I walk the dog in June?"),
    ],
)
def test_a_clock_at_the_ends_of_the_calendar_reads_periods_inside_it(
    db_path: Path, now: datetime, question: str
) -> None:
    clock = FakeClock(now)
    with MemoryService.open(semantic_settings(db_path, embedder="none"), clock=clock) as memory:
        dated = (now - timedelta(days=1)).replace(hour=9)
        if "June" in question:  # no June holds a memory: every year back is looked at
            dated = now.replace(month=3, day=12)
        walk = memory.remember("walked the dog", at=dated)
        found = [hit.memory.id for hit in memory.search(question, mode="keyword", min_score=0)]
        assert found == [walk.id]
        assert memory.explain(question, walk.id).stage == "returned"
