"""A rule stepping hours or minutes counts elapsed time through the hour the clocks go
back over: "every 15 minutes" fell silent for the whole repeated hour (02:00-02:59 CET
after 02:59 CEST, Paris, 25 October 2026) and an hourly reminder skipped one, because
dateutil expands the wall clock and gives a repeated wall time once. A daily rule, or
one naming its hours (BYHOUR), still fires once at its wall time (adversarial pass e63)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from recalld.service import MemoryService
from tests.conftest import FakeClock


def _fired_each_five_minutes(
    memory: MemoryService, clock: FakeClock, start: datetime, end: datetime
) -> dict[str, list[str]]:
    fired: dict[str, list[str]] = {}
    clock.now = start
    while clock.now < end:
        for item in memory.intentions.run_due():
            fired.setdefault(item.memory.content, []).append(clock.now.strftime("%H:%M"))
        clock.now += timedelta(minutes=5)
    return fired


def test_sub_hourly_and_hourly_rules_fire_through_the_repeated_hour(
    memory: MemoryService, clock: FakeClock
) -> None:
    clock.now = datetime(2026, 10, 24, 22, 0, tzinfo=UTC)  # Paris, 00:00 CEST
    memory.remind("stretch", at="2026-10-25T01:30", every="FREQ=MINUTELY;INTERVAL=15")
    memory.remind("check the oven", at="2026-10-25T01:30", every="FREQ=HOURLY")
    memory.remind("night round", at="2026-10-25T02:30", every="FREQ=HOURLY;BYHOUR=2")
    memory.remind("take the pill", at="2026-10-24T02:30", every="daily")
    fired = _fired_each_five_minutes(
        memory,
        clock,
        datetime(2026, 10, 24, 23, 0, tzinfo=UTC),
        datetime(2026, 10, 25, 3, 0, tzinfo=UTC),
    )
    # In UTC: 23:30 is 01:30 CEST; 00:00-00:45 the first pass of 02:xx, 01:00-01:45 the
    # second (CET), 02:00 is 03:00 CET. Every quarter of an hour, none missed.
    quarters = [
        (datetime(2026, 10, 24, 23, 30, tzinfo=UTC) + timedelta(minutes=15 * step)).strftime(
            "%H:%M"
        )
        for step in range(14)
    ]
    assert fired["stretch"] == quarters
    assert fired["check the oven"] == ["23:30", "00:30", "01:30", "02:30"]
    assert fired["night round"] == ["00:30"]  # 02:30 on the wall, once
    assert fired["take the pill"] == ["00:30"]


def test_a_window_on_a_sub_hourly_rule_is_open_in_the_second_pass(
    memory: MemoryService, clock: FakeClock
) -> None:
    clock.now = datetime(2026, 10, 24, 22, 0, tzinfo=UTC)
    memory.remind(
        "drink some water",
        at="2026-10-25T01:00",
        every="FREQ=MINUTELY;INTERVAL=30",
        window_minutes=10,
        tags=["home"],
    )
    # 02:35 CET (01:35 UTC): the 02:30 CET occurrence opened the window 5 minutes ago
    # (read as 02:30 CEST, it had closed 55 minutes before).
    clock.now = datetime(2026, 10, 25, 1, 35, tzinfo=UTC)
    fired = memory.recollections.sense(memory.recollections.cue(tags=["home"]))
    assert [item.reminder.action for item in fired if item.reminder] == ["drink some water"]


def test_a_repeated_hour_keeps_to_the_rules_until_and_count(
    memory: MemoryService, clock: FakeClock
) -> None:
    # dateutil checks UNTIL on the first pass of a wall time and counts wall times for
    # COUNT: the second pass of 02:30 (01:30 UTC) came after UNTIL=01:00 UTC, and was a
    # fourth firing of COUNT=3 (review of pass e63).
    clock.now = datetime(2026, 10, 24, 22, 0, tzinfo=UTC)
    memory.remind("until", at="2026-10-25T01:30", every="FREQ=HOURLY;UNTIL=20261025T010000Z")
    memory.remind("count", at="2026-10-25T01:30", every="FREQ=HOURLY;COUNT=3")
    fired = _fired_each_five_minutes(
        memory,
        clock,
        datetime(2026, 10, 24, 23, 0, tzinfo=UTC),
        datetime(2026, 10, 25, 4, 0, tzinfo=UTC),
    )
    assert fired["until"] == ["23:30", "00:30"]
    assert len(fired["count"]) == 3
