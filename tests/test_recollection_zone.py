"""The present moment on the user's clock: with ``RECALLD_ZONE`` set, a sense without
``at`` and a memory written without ``at`` read the time of day there, not on the
machine's clock (adversarial pass f60: a server keeping UTC read 08:05 in Paris as
06:05, two hours from the café memory written at 08:10+02:00, which never fired)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock

CAFE = {"lat": 48.86420, "lon": 2.34750}


@pytest.fixture
def machine_in_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # A container's usual clock; the test must not depend on where it runs.
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def clock() -> FakeClock:
    # Thursday 2 July 2026, 06:05 UTC = 08:05 in Paris (summer time, +02:00).
    return FakeClock(datetime(2026, 7, 2, 6, 5, tzinfo=UTC))


def _open(db_path: Path, clock: FakeClock, zone: str | None) -> MemoryService:
    settings = Settings(db=db_path, synchronous="NORMAL", embedder="none", zone=zone)
    return MemoryService.open(settings, clock=clock)


def test_sense_without_at_reads_now_on_the_user_zone(
    machine_in_utc: None, db_path: Path, clock: FakeClock
) -> None:
    with _open(db_path, clock, "Europe/Paris") as memory:
        seq = memory.recollections.remember(
            "Croissant with Léa; she is moving to Lyon",
            place=CAFE,
            at="2026-07-01T08:10:00+02:00",  # the Wednesday before, at the café
        ).seq

        fired = memory.recollections.sense(memory.recollections.cue(place=CAFE))

        assert [item.memory.seq for item in fired] == [seq]
        assert fired[0].channels["time"] > 0.95


def test_memory_without_at_is_written_on_the_user_zone(
    machine_in_utc: None, db_path: Path, clock: FakeClock
) -> None:
    with _open(db_path, clock, "Europe/Paris") as memory:
        written = memory.recollections.remember("Croissant with Léa", place=CAFE)

        assert written.at == datetime(2026, 7, 2, 6, 5, tzinfo=UTC)
        assert written.at is not None
        assert written.at.isoformat() == "2026-07-02T08:05:00+02:00"
        stored = memory.get(written.id).at
        assert stored is not None
        assert stored.isoformat() == "2026-07-02T08:05:00+02:00"

        # The next morning at the same café: both times defaulted, on the same clock.
        clock.advance(24 * 3600 - 300)
        fired = memory.recollections.sense(memory.recollections.cue(place=CAFE))
        assert [item.memory.seq for item in fired] == [written.seq]


def test_without_a_zone_now_is_on_the_machine_clock(
    machine_in_utc: None, db_path: Path, clock: FakeClock
) -> None:
    with _open(db_path, clock, None) as memory:
        written = memory.recollections.remember("Croissant with Léa", place=CAFE)

        assert written.at is not None
        assert written.at.isoformat() == "2026-07-02T06:05:00+00:00"


def test_a_write_in_the_calendars_last_hours_east_of_utc_keeps_utc(
    db_path: Path, clock: FakeClock
) -> None:
    # 9999-12-31 23:40 UTC is already the year 10000 in Paris, which no datetime holds:
    # the write (and a sense) read the moment on UTC instead of failing (OverflowError).
    clock.now = datetime(9999, 12, 31, 23, 40, tzinfo=UTC)
    with _open(db_path, clock, "Europe/Paris") as memory:
        receipt = memory.remember("the last note")
        assert memory.get(receipt.id).at == datetime(9999, 12, 31, 23, 40, tzinfo=UTC)
        memory.recollections.sense(memory.recollections.cue(text="the last note"))
