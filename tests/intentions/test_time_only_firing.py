"""Reminders with a time alone, fired by the scheduler (``run_due``): a window with
``repeat="every_time"`` fires every ``min_interval_seconds`` while it lasts (the README:
it fires "whenever the triggers hold again"), an instant alone with that repeat is
refused, and ``run_due`` takes only an aware datetime."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from recalld.errors import ValidationError
from recalld.service import MemoryService
from tests.conftest import FakeClock


def _fired(memory: MemoryService) -> list[str]:
    return [item.memory.content for item in memory.intentions.run_due()]


def test_a_window_every_time_fires_each_interval_until_it_ends(
    memory: MemoryService, clock: FakeClock
) -> None:
    clock.now = datetime(2027, 1, 10, 7, 0, tzinfo=UTC)  # 08:00 in Paris
    intention = memory.remind(
        "drink some water",
        at="2027-01-10T09:00",
        until="2027-01-10T12:00",
        repeat="every_time",
        min_interval_seconds=3600,
    )
    assert _fired(memory) == []
    moments = []
    for minutes in range(60, 5 * 60, 15):  # 09:00 to 12:45 Paris, every quarter of an hour
        clock.now = datetime(2027, 1, 10, 7, 0, tzinfo=UTC) + timedelta(minutes=minutes)
        if _fired(memory):
            moments.append(clock.now.astimezone(UTC).strftime("%H:%M"))
    assert moments == ["08:00", "09:00", "10:00"]  # 09:00, 10:00, 11:00 in Paris
    stored = memory.intentions.get(intention.id)
    assert (stored.state, stored.fire_count) == ("done", 3)


def test_every_time_on_an_instant_alone_is_refused_naming_repeat(
    memory: MemoryService, clock: FakeClock
) -> None:
    clock.now = datetime(2027, 1, 10, 7, 0, tzinfo=UTC)
    with pytest.raises(ValidationError) as caught:
        memory.remind("drink", at="2027-01-10T09:00", repeat="every_time")
    assert caught.value.field == "repeat"
    assert sum(memory.intentions.counts().values()) == 0


@pytest.mark.parametrize("now", ["2027-01-12T00:00Z", datetime(2027, 1, 12, 0, 0)])
def test_run_due_refuses_a_time_that_is_no_aware_datetime(
    memory: MemoryService, now: object
) -> None:
    # Text failed deep inside (AttributeError); a naive time was read on this machine's clock.
    with pytest.raises(ValidationError) as caught:
        memory.intentions.run_due(now)  # type: ignore[arg-type]
    assert caught.value.field == "now"


@pytest.mark.parametrize("interval", [1e12, 1e300])
def test_an_interval_past_the_window_fires_once_and_stops_no_other_reminder(
    memory: MemoryService, clock: FakeClock, interval: float
) -> None:
    # The next firing, now + 1e12 s, overflowed the datetime: the OverflowError rolled
    # back the whole run, so no reminder due with it ever fired.
    clock.now = datetime(2027, 1, 10, 7, 0, tzinfo=UTC)  # 08:00 in Paris
    rarely = memory.remind(
        "stretch",
        at="2027-01-10T09:00",
        until="2027-01-10T12:00",
        repeat="every_time",
        min_interval_seconds=interval,
    )
    memory.remind("call the plumber", at="2027-01-10T09:00")
    clock.now = datetime(2027, 1, 10, 8, 30, tzinfo=UTC)
    assert sorted(_fired(memory)) == ["call the plumber", "stretch"]
    stored = memory.intentions.get(rarely.id)
    assert (stored.state, stored.fire_count, stored.next_due) == ("done", 1, None)
