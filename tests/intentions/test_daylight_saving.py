"""Recurrences on a zone's wall clock across daylight-saving changes.

A first occurrence that does not exist on the local clock (02:30 on the night the
clocks go forward) fires at the instant it names, and every later occurrence at the
wall time the caller gave, not an hour late.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from recalld.errors import ValidationError
from recalld.service import MemoryService
from tests.conftest import FakeClock


def _walk(memory: MemoryService, clock: FakeClock, intention_id: str, steps: int) -> list[str]:
    """Fire the intention at each of its next due times; those times, on its zone's clock."""
    seen = []
    for _ in range(steps):
        due = memory.intentions.get(intention_id).next_due
        assert due is not None
        seen.append(due.isoformat())
        clock.now = due.astimezone(UTC)
        assert len(memory.intentions.run_due()) == 1
    return seen


@pytest.mark.parametrize(
    ("zone", "at", "expected"),
    [
        # Paris goes from 02:00 to 03:00 on 28 March 2027.
        (
            "Europe/Paris",
            "2027-03-28T02:30",
            ["2027-03-28T03:30:00+02:00", "2027-03-29T02:30:00+02:00", "2027-03-30T02:30:00+02:00"],
        ),
        # New York goes from 02:00 to 03:00 on 14 March 2027.
        (
            "America/New_York",
            "2027-03-14T02:30",
            ["2027-03-14T03:30:00-04:00", "2027-03-15T02:30:00-04:00", "2027-03-16T02:30:00-04:00"],
        ),
        # Lord Howe Island moves by half an hour: 02:00 to 02:30 on 3 October 2027.
        (
            "Australia/Lord_Howe",
            "2027-10-03T02:15",
            ["2027-10-03T02:45:00+11:00", "2027-10-04T02:15:00+11:00", "2027-10-05T02:15:00+11:00"],
        ),
    ],
)
def test_a_daily_reminder_first_due_in_the_spring_gap_keeps_its_wall_time(
    memory: MemoryService, clock: FakeClock, zone: str, at: str, expected: list[str]
) -> None:
    clock.now = datetime(2027, 3, 1, tzinfo=UTC)
    intention = memory.remind("water the plants", at=at, every="daily", zone=zone)
    assert _walk(memory, clock, intention.id, 3) == expected


def test_a_sensed_daily_gate_first_due_in_the_spring_gap_opens_at_its_wall_time(
    memory: MemoryService, clock: FakeClock
) -> None:
    clock.now = datetime(2027, 3, 1, tzinfo=UTC)
    memory.remind(
        "water the plants", at="2027-03-28T02:30", every="daily", window_minutes=10, tags=["home"]
    )
    # 29 March, 02:35 in Paris: inside the window of that day's 02:30 occurrence.
    clock.now = datetime(2027, 3, 29, 0, 35, tzinfo=UTC)
    fired = memory.recollections.sense(memory.recollections.cue(tags=["home"]))
    assert [item.reminder.action for item in fired if item.reminder] == ["water the plants"]


@pytest.mark.parametrize(
    ("at", "expected"),
    [
        (
            "2027-01-31T09:00",
            [
                "2027-01-31T09:00:00+01:00",
                "2027-02-28T09:00:00+01:00",
                "2027-03-31T09:00:00+02:00",
                "2027-04-30T09:00:00+02:00",
            ],
        ),
        (
            "2028-01-30T09:00",
            [
                "2028-01-30T09:00:00+01:00",
                "2028-02-29T09:00:00+01:00",
                "2028-03-30T09:00:00+02:00",
                "2028-04-30T09:00:00+02:00",
            ],
        ),
        (
            "2027-01-28T09:00",
            [
                "2027-01-28T09:00:00+01:00",
                "2027-02-28T09:00:00+01:00",
                "2027-03-28T09:00:00+02:00",
                "2027-04-28T09:00:00+02:00",
            ],
        ),
    ],
)
def test_monthly_from_a_late_day_fires_every_month_on_the_last_day_of_shorter_ones(
    memory: MemoryService, clock: FakeClock, at: str, expected: list[str]
) -> None:
    clock.now = datetime(2027, 1, 1, tzinfo=UTC)
    intention = memory.remind("pay the rent", at=at, every="monthly")
    assert _walk(memory, clock, intention.id, 4) == expected


@pytest.mark.parametrize(
    ("every", "part"),
    [
        ("FREQ=DAILY;INTERVAL=0", "INTERVAL"),
        ("FREQ=WEEKLY;INTERVAL=-1", "INTERVAL"),
        ("FREQ=MONTHLY;INTERVAL=-2", "INTERVAL"),
        ("FREQ=DAILY;COUNT=0", "COUNT"),
        ("FREQ=DAILY;COUNT=-3", "COUNT"),
    ],
)
def test_an_interval_or_count_under_one_is_refused_naming_it(
    memory: MemoryService, every: str, part: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.remind("water the plants", at="2027-01-05T09:00", every=every)
    assert caught.value.field == "every"
    assert f"{part} in {every!r} must be a whole number of at least 1" in str(caught.value)
    assert memory.intentions(state="all") == []


@pytest.mark.parametrize(
    ("zone", "message"),
    [
        (
            "europe/paris",
            "unknown time zone 'europe/paris'; give an IANA name such as Europe/Paris or"
            " +01:00; did you mean 'Europe/Paris'?",
        ),
        ("ASIA/KATHMANDU", "did you mean 'Asia/Kathmandu'?"),
        ("+05:30:15", "offset '+05:30:15' has seconds; give hours and minutes, such as +05:30"),
        ("-0330:00", "offset '-0330:00' has seconds"),
        # This machine's own zone file: another zone where an exported reminder is read.
        ("localtime", "'localtime' is this machine's own zone file"),
        ("posixrules", "give an IANA name such as Europe/Paris"),
    ],
)
def test_a_zone_in_the_wrong_case_or_with_seconds_is_refused_saying_what_to_give(
    memory: MemoryService, zone: str, message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.remind("call home", at="2027-01-05T09:00", zone=zone)
    assert caught.value.field == "zone"
    assert message in caught.value.message
    assert memory.intentions(state="all") == []


def test_a_daily_reminder_first_due_at_the_second_of_a_repeated_hour_starts_there(
    memory: MemoryService, clock: FakeClock
) -> None:
    # New York's clocks go back from 02:00 EDT to 01:00 EST on 7 November 2027: 01:30
    # happens twice, and -05:00 names the second.
    clock.now = datetime(2027, 11, 1, tzinfo=UTC)
    intention = memory.remind(
        "take the pill", at="2027-11-07T01:30-05:00", every="daily", zone="America/New_York"
    )
    assert intention.next_due is not None
    assert intention.next_due.astimezone(UTC) == datetime(2027, 11, 7, 6, 30, tzinfo=UTC)
    assert _walk(memory, clock, intention.id, 3) == [
        "2027-11-07T01:30:00-05:00",
        "2027-11-08T01:30:00-05:00",
        "2027-11-09T01:30:00-05:00",
    ]


def test_a_sensed_gate_first_due_at_the_second_of_a_repeated_hour_opens_then(
    memory: MemoryService, clock: FakeClock
) -> None:
    clock.now = datetime(2027, 11, 1, tzinfo=UTC)
    memory.remind(
        "take the pill",
        at="2027-11-07T01:30-05:00",
        every="daily",
        zone="America/New_York",
        window_minutes=20,
        tags=["home"],
    )
    clock.now = datetime(2027, 11, 7, 5, 40, tzinfo=UTC)  # the first 01:40, before at
    assert memory.recollections.sense(memory.recollections.cue(tags=["home"])) == []
    clock.now = datetime(2027, 11, 7, 6, 40, tzinfo=UTC)  # the second 01:40
    fired = memory.recollections.sense(memory.recollections.cue(tags=["home"]))
    assert [item.reminder.action for item in fired if item.reminder] == ["take the pill"]


def test_a_gate_whose_window_reaches_past_the_year_9999_opens_without_breaking_sense(
    memory: MemoryService, clock: FakeClock
) -> None:
    clock.now = datetime(9999, 12, 31, 20, tzinfo=UTC)
    memory.remind("last call", at="9999-12-31T23:30Z", every="daily", tags=["bar"])
    clock.now = datetime(9999, 12, 31, 23, 40, tzinfo=UTC)
    fired = memory.recollections.sense(memory.recollections.cue(tags=["bar"]))
    assert [item.reminder.action for item in fired if item.reminder] == ["last call"]


@pytest.mark.parametrize(
    ("now", "zone", "phrase", "expected"),
    [
        # 01:30 in Paris on 28 March 2027; at 02:00 the clocks go to 03:00.
        (datetime(2027, 3, 28, 0, 30, tzinfo=UTC), "Europe/Paris", "in 2 hours", (2, 30)),
        (datetime(2027, 3, 28, 0, 30, tzinfo=UTC), "Europe/Paris", "in 90 minutes", (2, 0)),
        # 01:30 EDT in New York on 7 November 2027; at 02:00 the clocks go back to 01:00.
        (datetime(2027, 11, 7, 5, 30, tzinfo=UTC), "America/New_York", "in 1 hour", (6, 30)),
        # The second 01:30 (EST): ten minutes on, not 50 minutes back.
        (datetime(2027, 11, 7, 6, 30, tzinfo=UTC), "America/New_York", "in 10 minutes", (6, 40)),
        # Lord Howe Island: 02:00 becomes 02:30 on 3 October 2027.
        (datetime(2027, 10, 2, 15, 0, tzinfo=UTC), "Australia/Lord_Howe", "in 1 hour", (16, 0)),
    ],
)
def test_a_duration_in_hours_or_minutes_counts_elapsed_time_across_a_clock_change(
    memory: MemoryService,
    clock: FakeClock,
    now: datetime,
    zone: str,
    phrase: str,
    expected: tuple[int, int],
) -> None:
    clock.now = now
    intention = memory.remind("check the oven", at=phrase, zone=zone)
    hour, minute = expected
    assert intention.resolved[0].instant.astimezone(UTC) == now.replace(hour=hour, minute=minute)


def test_a_duration_in_days_keeps_the_time_of_day_across_a_clock_change(
    memory: MemoryService, clock: FakeClock
) -> None:
    clock.now = datetime(2027, 3, 27, 8, 0, tzinfo=UTC)  # 09:00 in Paris, winter time
    intention = memory.remind("call the plumber", at="in 1 day")
    assert intention.resolved[0].instant.isoformat() == "2027-03-28T09:00:00+02:00"


def test_an_expiry_in_the_first_pass_of_a_repeated_hour_before_at_in_the_second_is_refused(
    memory: MemoryService, clock: FakeClock
) -> None:
    clock.now = datetime(2027, 11, 1, tzinfo=UTC)
    with pytest.raises(ValidationError) as caught:
        memory.remind(
            "take the pill",
            at="2027-11-07T01:30-05:00",  # the second 01:30 (06:30 UTC)
            every="daily",
            zone="America/New_York",
            expires="2027-11-07T01:45-04:00",  # the first 01:45 (05:45 UTC): before it
        )
    assert caught.value.field == "expires"
    assert memory.intentions(state="all") == []


def test_a_window_ending_in_the_first_pass_of_a_repeated_hour_before_it_starts_is_refused(
    memory: MemoryService, clock: FakeClock
) -> None:
    clock.now = datetime(2027, 11, 1, tzinfo=UTC)
    with pytest.raises(ValidationError) as caught:
        memory.remind(
            "take the pill",
            at="2027-11-07T01:30-05:00",
            until="2027-11-07T01:45-04:00",
            zone="America/New_York",
        )
    assert caught.value.field == "until"
    assert memory.intentions(state="all") == []


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("tomorrow at 9 PST", datetime(2026, 10, 23, 17, 0, tzinfo=UTC)),
        ("tomorrow at 9:00 UTC", datetime(2026, 10, 23, 9, 0, tzinfo=UTC)),
        ("tomorrow 9:00 +05:00", datetime(2026, 10, 23, 4, 0, tzinfo=UTC)),
        ("October 24 2026 09:00 CET", datetime(2026, 10, 24, 8, 0, tzinfo=UTC)),
        # Without a zone of its own, a phrase is read on the caller's clock (Paris, +02:00).
        ("tomorrow at 9", datetime(2026, 10, 23, 7, 0, tzinfo=UTC)),
        # A duration is the same on every clock.
        ("in 2 hours UTC", datetime(2026, 10, 22, 8, 0, tzinfo=UTC)),
        ("in 2 hours PST", datetime(2026, 10, 22, 8, 0, tzinfo=UTC)),
        # A day without a time: RECALLD_REMINDER_DEFAULT_TIME (09:00) on that zone's clock.
        ("tomorrow UTC", datetime(2026, 10, 23, 9, 0, tzinfo=UTC)),
        ("tomorrow PST", datetime(2026, 10, 23, 17, 0, tzinfo=UTC)),
        ("tomorrow +05:00", datetime(2026, 10, 23, 4, 0, tzinfo=UTC)),
    ],
)
def test_a_phrase_naming_its_own_zone_means_that_zone_s_time(
    memory: MemoryService, phrase: str, expected: datetime
) -> None:
    # The conftest's clock: 22 October 2026, 08:00 in Paris.
    intention = memory.remind("join the call", at=phrase)
    assert intention.resolved[0].instant.astimezone(UTC) == expected
    assert intention.next_due is not None
    assert intention.next_due.astimezone(UTC) == expected


def _monthly_lines(memory: MemoryService, rrule: str) -> list[str]:
    """The export of a `monthly` reminder from 31 January, its rule stored as ``rrule``;
    the reminder forgotten."""
    intention = memory.remind("pay the rent", at="2027-01-31T09:00", every="monthly")
    lines = [json.loads(line) for line in memory.export()]
    memory.forget(intention.id)
    for line in lines:
        if line.get("type") == "recalld.intention":
            line["triggers"][0]["rrule"] = rrule
    return [json.dumps(line) for line in lines]


@pytest.mark.parametrize(
    ("rrule", "months"),
    [
        # What `monthly` from the 31st stores now: every month.
        ("FREQ=MONTHLY;BYMONTHDAY=31,-1;BYSETPOS=1", ["01-31", "02-28", "03-31", "04-30"]),
        # What it stored before: months with a 31st only, as then.
        ("FREQ=MONTHLY", ["01-31", "03-31", "05-31", "07-31"]),
    ],
)
def test_an_exported_monthly_reminder_keeps_its_meaning_through_import(
    memory: MemoryService, clock: FakeClock, rrule: str, months: list[str]
) -> None:
    clock.now = datetime(2027, 1, 1, tzinfo=UTC)
    assert memory.import_lines(_monthly_lines(memory, rrule)).errors == []
    [intention] = memory.intentions()
    assert [day[5:10] for day in _walk(memory, clock, intention.id, 4)] == months


@pytest.mark.parametrize(
    ("rrule", "stored"),
    [("monthly", "FREQ=MONTHLY;BYMONTHDAY=31,-1;BYSETPOS=1"), ("RRULE:FREQ=DAILY", "FREQ=DAILY")],
)
def test_an_imported_rrule_given_as_remind_reads_it_is_a_bad_line(
    memory: MemoryService, clock: FakeClock, rrule: str, stored: str
) -> None:
    # Kept as given, "monthly" made every firing fail in dateutil.
    clock.now = datetime(2027, 1, 1, tzinfo=UTC)
    report = memory.import_lines(_monthly_lines(memory, rrule))
    assert [error.error.split(":")[0] for error in report.errors] == ["kind", "triggers[0].rrule"]
    assert f"give the rule itself, such as {stored!r}, not {rrule!r}" in report.errors[1].error
    assert memory.intentions(state="all") == []
