"""A time window alone with ``repeat="every_time"`` fires every ``min_interval_seconds``
while the window lasts (the README: it fires "whenever the triggers hold again"), and an
instant alone, which holds once, is refused with that repeat."""

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
