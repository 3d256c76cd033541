"""Bad input to remind names the field and stores nothing; times are read as the caller means."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from recalld.errors import ValidationError
from recalld.intentions.timing import PhraseParser, Recurrence, parse_clock_time, parse_zone
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.intentions.conftest import PHARMACY


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "triggers"),
        ({"place": PHARMACY, "radius_m": 0}, "radius_m"),
        ({"place": PHARMACY, "radius_m": -5}, "radius_m"),
        ({"place": PHARMACY, "radius_m": 50_001}, "radius_m"),
        ({"radius_m": 100}, "radius_m"),
        ({"place": {"lat": 91, "lon": 0}}, "place.lat"),
        ({"at": "2026-10-21T09:00+02:00"}, "at"),  # yesterday, once
        ({"at": "yesterday at 9"}, "at"),
        ({"at": "when pigs fly"}, "at"),
        ({"at": "tomorrow at 25:99"}, "at"),  # dateparser would keep "tomorrow", at 09:00
        ({"at": "tomorrow at 13:75"}, "at"),
        ({"at": "0001-01-01T00:00:00+14:00"}, "at"),  # no UTC time: year 0
        ({"at": "9999-12-31T23:59:59-14:00"}, "at"),
        ({"place": PHARMACY, "expires": "9999-12-31T23:59:59-14:00"}, "expires"),
        ({"at": "2026-10-30T09:00", "until": "2026-10-30T08:00"}, "until"),
        ({"until": "2026-10-30T08:00"}, "at"),
        # A window that has ended, whatever the repeat: it would never fire.
        (
            {
                "place": PHARMACY,
                "at": "2026-10-20T09:00",
                "until": "2026-10-21T09:00",
                "repeat": "every_time",
            },
            "until",
        ),
        ({"at": "2026-10-20T09:00", "until": "2026-10-21T09:00", "repeat": "every_time"}, "until"),
        ({"at": "2026-10-30T09:00", "every": "fortnightly-ish"}, "every"),
        ({"at": "2026-10-30T09:00", "every": "FREQ=WEEKLY;BYDAY=XX"}, "every"),
        ({"at": "2026-10-30T09:00", "every": "FREQ=SECONDLY"}, "every"),
        ({"at": "2026-10-30T09:00", "every": "FREQ=MINUTELY;BYSECOND=0,30"}, "every"),
        ({"every": "daily"}, "at"),
        ({"at": "2026-10-30T09:00", "zone": "Mars/Olympus"}, "zone"),
        ({"at": "2026-10-30T09:00", "zone": "+05:75"}, "zone"),  # not +06:15
        ({"at": "2030-10-30T09:00+05:75"}, "at"),  # the zone of its offset was +06:15
        ({"mention": ["  ...  "]}, "mention[0]"),
        ({"mention": ["Anna", "a" * 201]}, "mention[1]"),  # was "mention", unlike the rest
        ({"signals": ["heart_rate=150"]}, "signals"),
        ({"signals": [{"signal": "heart_rate"}]}, "signals"),
        # All must hold in one sense: above 150 and below 100 never do.
        ({"signals": ["heart_rate>150", "heart_rate<100"]}, "signals"),
        ({"signals": ["heart_rate<100", "heart_rate>60", "heart_rate>100"]}, "signals"),
        (
            {"signals": [{"signal": "heart_rate", "above": 150, "readings": 0}]},
            "signals[0].SignalCondition.readings",
        ),
        # Signals on more readings than a sense reports (32): all must hold, so it never fires.
        ({"signals": [f"sensor_{index}>1" for index in range(33)]}, "signals"),
        # A range on each of them at most (each signal is a stored trigger row).
        ({"signals": [f"sensor_{index % 4}>{index}" for index in range(65)]}, "signals"),
        ({"tags": [" "]}, "tags"),
        ({"place": PHARMACY, "expires": "2026-10-01T00:00Z"}, "expires"),
        # A time beside a place is a gate: one opening after the expiry could never fire.
        ({"place": PHARMACY, "at": "2026-10-23T09:00", "expires": "2026-10-23T08:00"}, "expires"),
        (
            {
                "place": PHARMACY,
                "at": "2026-10-23T09:00",
                "every": "daily",
                "expires": "2026-10-23T08:00",
            },
            "expires",
        ),
        ({"place": PHARMACY, "min_interval_seconds": 60}, "min_interval_seconds"),
        ({"place": PHARMACY, "window_minutes": 30}, "window_minutes"),
    ],
)
def test_remind_bad_input_names_the_field_and_stores_nothing(
    memory: MemoryService, arguments: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.remind("do the thing", **arguments)
    assert caught.value.field == field
    assert memory.intentions(state="all") == []
    assert memory.list_memories().memories == []


def test_remind_a_gate_open_now_or_opening_before_the_expiry_is_stored(
    memory: MemoryService,
) -> None:
    # 08:00 in Paris: today's 07:30 occurrence holds its window (60 min) open until 08:30.
    open_now = memory.remind(
        "buy bread",
        place=PHARMACY,
        at="2026-10-22T07:30",
        every="daily",
        expires="2026-10-22T08:15",
    )
    later = memory.remind(
        "pick up the parcel",
        place=PHARMACY,
        at="2026-10-23T09:00",
        expires="2026-10-23T10:00",
    )
    assert [open_now.state, later.state] == ["active", "active"]
    fired = memory.recollections.sense(memory.recollections.cue(place=PHARMACY))
    assert [item.memory.id for item in fired] == [open_now.id]


def test_remind_a_range_on_one_reading_fires_inside_it(memory: MemoryService) -> None:
    calm = memory.remind("all is well", signals=["heart_rate>60", "heart_rate<100"])
    assert calm.state == "active"
    assert (
        memory.recollections.sense(memory.recollections.cue(biometrics={"heart_rate": 120})) == []
    )
    fired = memory.recollections.sense(memory.recollections.cue(biometrics={"heart_rate": 80}))
    assert [item.memory.id for item in fired] == [calm.id]


def test_remind_as_many_signals_as_a_sense_reports_can_fire(memory: MemoryService) -> None:
    signals = [f"sensor_{index}>1" for index in range(32)]
    intention = memory.remind("check the sensors", signals=signals)
    readings = {f"sensor_{index}": 2.0 for index in range(32)}
    fired = memory.recollections.sense(memory.recollections.cue(biometrics=readings))
    assert [item.memory.id for item in fired] == [intention.id]


def test_remind_a_range_on_as_many_readings_as_a_sense_reports_can_fire(
    memory: MemoryService,
) -> None:
    # 64 signals on 32 readings: the limit counted the signals, and refused a reminder
    # (of an older version's export too) that fires.
    signals = [f"sensor_{index}>1" for index in range(32)]
    signals += [f"sensor_{index}<5" for index in range(32)]
    intention = memory.remind("the sensors are in range", signals=signals)
    readings = {f"sensor_{index}": 2.0 for index in range(32)}
    fired = memory.recollections.sense(memory.recollections.cue(biometrics=readings))
    assert [item.memory.id for item in fired] == [intention.id]
    lines = list(memory.export())
    memory.forget(intention.id)
    assert memory.import_lines(lines).errors == []
    assert [item.id for item in memory.intentions(state="all")] == [intention.id]


def test_an_imported_reminder_with_more_signals_than_a_sense_reports_is_a_bad_line(
    memory: MemoryService,
) -> None:
    intention = memory.remind("check the sensors", signals=["sensor_0>1"])
    lines = [json.loads(line) for line in memory.export()]
    memory.forget(intention.id)
    for line in lines:
        if line.get("type") == "recalld.intention":
            signal = line["triggers"][0]
            line["triggers"] = [{**signal, "signal": f"sensor_{index}"} for index in range(33)]
    report = memory.import_lines([json.dumps(line) for line in lines])
    # The intention line is refused, and with it its memory's line (kind 'intention').
    assert [error.error.split(":")[0] for error in report.errors] == ["kind", "triggers"]
    assert "signals on 33 readings; a sense reports at most 32" in report.errors[1].error
    assert memory.intentions(state="all") == []
    assert memory.list_memories().memories == []


def test_an_imported_active_time_reminder_without_its_next_due_is_a_bad_line(
    memory: MemoryService,
) -> None:
    # Stored, it stayed active and never fired: the scheduler fires at next_due.
    intention = memory.remind("send the report", at="2026-12-04T09:00+01:00")
    lines = [json.loads(line) for line in memory.export()]
    memory.forget(intention.id)
    for line in lines:
        if line.get("type") == "recalld.intention":
            line["next_due"] = None
    report = memory.import_lines([json.dumps(line) for line in lines])
    assert [error.error.split(":")[0] for error in report.errors] == ["kind", "next_due"]
    assert memory.intentions(state="all") == []


def test_remind_reads_an_rfc_3339_time_as_a_memory_s_at_does(memory: MemoryService) -> None:
    # A leap second and a lower-case t and z: a memory's at took them, a reminder said
    # "cannot read" (they went to the phrase parser).
    for text in ("2027-06-30T23:59:60Z", "2027-06-30t23:59:59.999999z"):
        intention = memory.remind("end of the half year", at=text)
        assert intention.next_due is not None
        assert intention.next_due.astimezone(UTC) == datetime(
            2027, 6, 30, 23, 59, 59, 999999, tzinfo=UTC
        )


def test_remind_empty_action_is_refused(memory: MemoryService) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.remind("   ", place=PHARMACY)
    assert caught.value.field == "action"


def test_remind_echoes_natural_language_times_as_resolved(memory: MemoryService) -> None:
    # The clock reads Thursday 22 October 2026, 08:00 in Paris.
    tomorrow = memory.remind("call the bank", at="tomorrow at 9")
    assert [(item.field, item.text) for item in tomorrow.resolved] == [("at", "tomorrow at 9")]
    assert tomorrow.resolved[0].instant.isoformat() == "2026-10-23T09:00:00+02:00"
    assert tomorrow.zone == "Europe/Paris"
    friday = memory.remind("send the report", at="next Friday", zone="+05:30")
    assert friday.resolved[0].instant.isoformat() == "2026-10-23T09:00:00+05:30"  # day only: 09:00
    later = memory.remind("check the oven", at="in 2 hours", expires="tomorrow")
    assert later.resolved[0].instant.isoformat() == "2026-10-22T10:00:00+02:00"
    assert later.expires_at is not None
    assert later.expires_at.isoformat() == "2026-10-23T09:00:00+02:00"


def test_remind_an_offset_in_at_is_the_callers_zone(memory: MemoryService) -> None:
    intention = memory.remind("send the report", at="2026-12-04T09:00+01:00")
    assert intention.zone == "+01:00"
    assert intention.next_due is not None
    assert intention.next_due.isoformat() == "2026-12-04T09:00:00+01:00"


def test_recurrence_words_and_rrules(clock: FakeClock) -> None:
    zone = parse_zone("Europe/Paris")
    start = datetime(2026, 10, 23, 9, 0, tzinfo=zone)  # a Friday
    weekdays = Recurrence.parse("weekdays", start)
    assert weekdays.next_after(start) == datetime(2026, 10, 26, 9, 0, tzinfo=zone)  # Monday
    rule = Recurrence.parse("RRULE:FREQ=WEEKLY;BYDAY=TU,TH", start)
    assert rule.next_after(start) == datetime(2026, 10, 27, 9, 0, tzinfo=zone)
    daily = Recurrence.parse("daily", start)
    assert daily.last_at_or_before(datetime(2026, 10, 25, 12, 0, tzinfo=UTC)) == datetime(
        2026, 10, 25, 9, 0, tzinfo=zone
    )
    with pytest.raises(ValidationError) as caught:
        Recurrence.parse("DTSTART:20261023T090000\nRRULE:FREQ=DAILY", start)
    assert caught.value.field == "every"


def test_zones_names_and_offsets() -> None:
    assert str(parse_zone("Europe/Paris")) == "Europe/Paris"
    assert parse_zone("+05:30").utcoffset(None).total_seconds() == 5.5 * 3600  # type: ignore[union-attr]
    assert parse_zone("UTC") is UTC
    with pytest.raises(ValidationError):
        parse_zone("+25:00")
    for minutes_out_of_range in ("+05:60", "-0399", "UTC+00:75"):
        with pytest.raises(ValidationError) as caught:
            parse_zone(minutes_out_of_range, "RECALLD_ZONE")
        assert caught.value.field == "RECALLD_ZONE"
        assert "00-59" in str(caught.value)


def test_phrases_read_a_bare_hour_as_an_hour() -> None:
    parser = PhraseParser(parse_clock_time("09:00", "default"))
    now = datetime(2026, 10, 22, 6, 0, tzinfo=UTC)
    zone = parse_zone("+02:00")
    assert parser.resolve("at", "tomorrow at 9", zone, now).hour == 9
    assert parser.resolve("at", "tomorrow at 21:30", zone, now).minute == 30
    assert parser.resolve("at", "2026-12-04 09:00", zone, now).isoformat() == (
        "2026-12-04T09:00:00+02:00"
    )


def test_phrases_a_day_means_the_default_time_a_duration_keeps_the_time_of_day() -> None:
    parser = PhraseParser(parse_clock_time("09:00", "default"))
    now = datetime(2026, 12, 4, 18, 40, 12, tzinfo=UTC)  # Friday, 19:40:12 in Paris
    zone = parse_zone("Europe/Paris")
    expected = {
        # A day without a time, ISO or phrase, is that day at the default time.
        "2027-01-01": "2027-01-01T09:00:00+01:00",
        "20270101": "2027-01-01T09:00:00+01:00",
        "next Friday": "2026-12-11T09:00:00+01:00",
        "tomorrow": "2026-12-05T09:00:00+01:00",
        "next week": "2026-12-11T09:00:00+01:00",
        # A duration counts from now, to the second, as "in 2 hours" does.
        "in 2 hours": "2026-12-04T21:40:12+01:00",
        "in a week": "2026-12-11T19:40:12+01:00",
        "In 3  days": "2026-12-07T19:40:12+01:00",
        "a week from now": "2026-12-11T19:40:12+01:00",
        "in 2 weeks and 3 days": "2026-12-21T19:40:12+01:00",
        "in a month": "2027-01-04T19:40:12+01:00",
        "in 3 days at 18:00": "2026-12-07T18:00:00+01:00",
    }
    resolved = {phrase: parser.resolve("at", phrase, zone, now).isoformat() for phrase in expected}
    assert resolved == expected


def test_remind_an_iso_date_means_the_default_time_in_the_zone(memory: MemoryService) -> None:
    intention = memory.remind("renew the passport", at="2027-01-01", expires="2027-01-02")
    assert intention.next_due is not None
    assert intention.next_due.isoformat() == "2027-01-01T09:00:00+01:00"
    assert [item.instant.isoformat() for item in intention.resolved] == [
        "2027-01-01T09:00:00+01:00",
        "2027-01-02T09:00:00+01:00",
    ]
