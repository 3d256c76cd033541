"""Memories over time: how many visible memories fall in each calendar bucket.

A read-only companion of :class:`~recalld.service.MemoryService` (kept in its
own module so the facade stays small): the memory browser's status chart and
``GET /v1/stats/timeline`` use it. Buckets are calendar days, ISO weeks
(starting Monday) or months, in UTC, so every caller sees the same edges
whatever its own time zone. Memories are counted by ``created_at`` (when
recalld stored them) or by ``at`` (when they happened).

Each bucket is one count over the store's existing filters (``created_since``/
``created_until`` or ``since``/``until``), so no store needs a new query; the
number of buckets is bounded by :data:`MAX_BUCKETS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Literal

from pydantic import BaseModel

from recalld.errors import ValidationError
from recalld.store.base import Scope, Store

__all__ = [
    "MAX_BUCKETS",
    "Timeline",
    "TimelineBucket",
    "TimelineField",
    "TimelineUnit",
    "bucket_edges",
    "memories_over_time",
]

TimelineUnit = Literal["day", "week", "month"]
TimelineField = Literal["created", "at"]
MAX_BUCKETS = 366


class TimelineBucket(BaseModel):
    """One bucket: memories with ``start <= time < end``."""

    start: datetime
    end: datetime
    count: int


class Timeline(BaseModel):
    """Counts per bucket, oldest first; the last bucket holds ``end``."""

    unit: TimelineUnit
    field: TimelineField
    buckets: list[TimelineBucket]
    total: int


def _start_of(moment: datetime, unit: TimelineUnit) -> datetime:
    """The UTC start of the bucket holding ``moment``."""
    day = moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        return day
    if unit == "week":
        return day - timedelta(days=day.weekday())
    return day.replace(day=1)


def _shift(start: datetime, unit: TimelineUnit, steps: int) -> datetime:
    """The bucket start ``steps`` buckets after (negative: before) ``start``."""
    if unit == "day":
        return start + timedelta(days=steps)
    if unit == "week":
        return start + timedelta(weeks=steps)
    months = start.year * 12 + (start.month - 1) + steps
    return start.replace(year=months // 12, month=months % 12 + 1)


def bucket_edges(end: datetime, unit: TimelineUnit, buckets: int) -> list[datetime]:
    """``buckets + 1`` ascending edges; the last bucket is the one that holds ``end``."""
    if not 1 <= buckets <= MAX_BUCKETS:
        raise ValidationError("buckets", f"must be 1-{MAX_BUCKETS}, got {buckets}")
    if end.tzinfo is None:
        raise ValidationError("end", "needs a UTC offset (e.g. 2026-10-25T16:20:00Z)")
    try:
        last = _start_of(end, unit)
        return [_shift(last, unit, step) for step in range(1 - buckets, 2)]
    except (OverflowError, ValueError):
        raise ValidationError(
            "end", f"{buckets} {unit} buckets around {end.isoformat()} leave the calendar"
        ) from None


def memories_over_time(
    store: Store,
    namespaces: Sequence[str],
    *,
    now: datetime,
    end: datetime,
    unit: TimelineUnit = "day",
    buckets: int = 30,
    field: TimelineField = "created",
) -> Timeline:
    """Visible memories of ``namespaces`` per bucket (expired ones at ``now`` excluded).

    ``namespaces`` must already be validated and authorised by the caller.
    """
    edges = bucket_edges(end, unit, buckets)
    counted: list[TimelineBucket] = []
    for start, stop in pairwise(edges):
        if field == "created":
            scope = Scope(
                namespaces=tuple(namespaces), now=now, created_since=start, created_until=stop
            )
        else:
            scope = Scope(namespaces=tuple(namespaces), now=now, since=start, until=stop)
        counted.append(TimelineBucket(start=start, end=stop, count=store.counts(scope).count))
    return Timeline(
        unit=unit,
        field=field,
        buckets=counted,
        total=sum(bucket.count for bucket in counted),
    )
