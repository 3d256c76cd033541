"""Calendar buckets of the memories-over-time counts (UTC days, ISO weeks, months)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from recalld.errors import ValidationError
from recalld.timeline import bucket_edges


def test_timeline_day_edges_end_after_the_day_that_holds_end() -> None:
    end = datetime(2026, 10, 25, 16, 20, tzinfo=UTC)
    edges = bucket_edges(end, "day", 3)
    assert edges == [datetime(2026, 10, day, tzinfo=UTC) for day in (23, 24, 25, 26)]


def test_timeline_edges_are_utc_whatever_the_offset_of_end() -> None:
    # 01:30 at +02:00 is still the previous day in UTC.
    end = datetime(2026, 10, 25, 1, 30, tzinfo=timezone(timedelta(hours=2)))
    assert bucket_edges(end, "day", 1) == [
        datetime(2026, 10, 24, tzinfo=UTC),
        datetime(2026, 10, 25, tzinfo=UTC),
    ]


def test_timeline_weeks_start_on_monday() -> None:
    end = datetime(2026, 10, 25, 12, tzinfo=UTC)  # a Sunday
    edges = bucket_edges(end, "week", 2)
    assert [edge.weekday() for edge in edges] == [0, 0, 0]
    assert edges[-2] == datetime(2026, 10, 19, tzinfo=UTC)
    assert edges[-1] - edges[0] == timedelta(weeks=2)


def test_timeline_months_wrap_across_years() -> None:
    edges = bucket_edges(datetime(2026, 1, 15, tzinfo=UTC), "month", 3)
    assert [(edge.year, edge.month) for edge in edges] == [
        (2025, 11),
        (2025, 12),
        (2026, 1),
        (2026, 2),
    ]


def test_timeline_refuses_a_naive_end_and_out_of_range_counts() -> None:
    with pytest.raises(ValidationError) as naive:
        bucket_edges(datetime(2026, 1, 15), "day", 3)
    assert naive.value.field == "end"
    for count in (0, 367):
        with pytest.raises(ValidationError) as refused:
            bucket_edges(datetime(2026, 1, 15, tzinfo=UTC), "day", count)
        assert refused.value.field == "buckets"
