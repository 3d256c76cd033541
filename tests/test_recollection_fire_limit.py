"""A sense fires at most ``fire_limit`` memories (the strongest): walking into a place
where much happened brings back a few of its memories, not all of them at once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock

CAFE = {"lat": 48.86420, "lon": 2.34750}
WEEKDAYS = (1, 2, 5, 6, 7, 8, 9)  # of October 2026 (Thursday 1st): breakfasts on weekdays
NOW = "2026-11-05T08:05:00+01:00"  # a Thursday morning at the café


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 11, 5, 7, 5, tzinfo=UTC))  # 08:05 in Paris


def _open(db_path: Path, clock: FakeClock, **settings: object) -> MemoryService:
    return MemoryService.open(
        Settings(db=db_path, synchronous="NORMAL", embedder="none", **settings),  # type: ignore[arg-type]
        clock=clock,
    )


@pytest.fixture
def memory(db_path: Path, clock: FakeClock) -> Iterator[MemoryService]:
    with _open(db_path, clock) as service:
        yield service


def _mornings_at_the_cafe(memory: MemoryService, count: int) -> list[int]:
    """``count`` breakfasts at the café, the later ones more salient (so stronger)."""
    return [
        memory.recollections.remember(
            f"breakfast number {day} at the corner café",
            place=CAFE,
            at=f"2026-10-{WEEKDAYS[day]:02d}T08:10:00+01:00",
            salience=day / count,
        ).seq
        for day in range(count)
    ]


def test_a_sense_fires_at_most_the_limit_the_strongest_first(
    memory: MemoryService, clock: FakeClock
) -> None:
    seqs = _mornings_at_the_cafe(memory, 7)
    assert memory.settings.fire_limit == 3
    first = memory.recollections.sense(memory.recollections.cue(place=CAFE, at=NOW))
    assert [item.memory.seq for item in first] == seqs[::-1][:3]
    # The next sense brings the next strongest (the first three are habituated) ...
    second = memory.recollections.sense(memory.recollections.cue(place=CAFE, at=NOW))
    assert [item.memory.seq for item in second] == seqs[::-1][3:6]
    # ... and the queue holds exactly what fired, once.
    pending = memory.recollections.pending()
    assert sorted(item.memory.seq for item in pending) == sorted(seqs[1:])
    clock.advance(timedelta(hours=4).total_seconds())
    again = memory.recollections.sense(memory.recollections.cue(place=CAFE, at=NOW))
    assert len(again) == 3


def test_the_fire_limit_is_a_setting(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock, fire_limit=10) as service:
        seqs = _mornings_at_the_cafe(service, 7)
        fired = service.recollections.sense(service.recollections.cue(place=CAFE, at=NOW))
        assert sorted(item.memory.seq for item in fired) == seqs
    with pytest.raises(ValueError, match="fire_limit"):
        Settings(db=db_path, fire_limit=0)
