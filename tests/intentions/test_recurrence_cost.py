"""A long-running recurrence costs the same at each firing as a new one.

dateutil walks every occurrence from the start it is given: expanded from ``at``, a
reminder every five minutes since 2020 walked 700,000 occurrences at each firing (in
the scheduler's write transaction). The expansion is counted here, not timed.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from dateutil import rrule as rrules

from recalld.errors import ValidationError
from recalld.service import MemoryService
from tests.conftest import FakeClock

# Far more than a few days of five-minute occurrences, far fewer than seven years'.
CAP = 20_000


@pytest.fixture
def capped(monkeypatch: pytest.MonkeyPatch) -> None:
    """dateutil's expansion, refusing to walk more than CAP occurrences at a time."""
    walk = rrules.rrule._iter

    def counted(self: Any) -> Iterator[datetime]:
        for count, occurrence in enumerate(walk(self)):
            if count >= CAP:
                raise AssertionError(f"walked more than {CAP} occurrences")
            yield occurrence

    monkeypatch.setattr(rrules.rrule, "_iter", counted)


@pytest.mark.usefixtures("capped")
def test_a_reminder_every_five_minutes_since_2020_fires_without_walking_its_past(
    memory: MemoryService, clock: FakeClock
) -> None:
    # The conftest's clock: 22 October 2026, 08:00 in Paris.
    intention = memory.remind("stretch", at="2020-01-01T09:02", every="FREQ=MINUTELY;INTERVAL=5")
    assert intention.next_due == datetime(2026, 10, 22, 6, 2, tzinfo=UTC)
    clock.now = datetime(2026, 10, 22, 6, 3, tzinfo=UTC)
    fired = memory.intentions.run_due()
    assert [item.reminder.due_at for item in fired if item.reminder] == [intention.next_due]
    assert memory.intentions.get(intention.id).next_due == datetime(2026, 10, 22, 6, 7, tzinfo=UTC)


@pytest.mark.usefixtures("capped")
def test_an_hourly_gate_since_2000_opens_without_walking_its_past(
    memory: MemoryService, clock: FakeClock
) -> None:
    memory.remind(
        "drink water", at="2000-01-01T00:15", every="FREQ=HOURLY", window_minutes=10, tags=["desk"]
    )
    clock.now = datetime(2026, 10, 22, 6, 20, tzinfo=UTC)  # 08:20 in Paris: the gate is open
    fired = memory.recollections.sense(memory.recollections.cue(tags=["desk"]))
    assert [item.reminder.action for item in fired if item.reminder] == ["drink water"]
    clock.now += timedelta(minutes=10)  # 08:30: closed until 09:15
    assert memory.recollections.sense(memory.recollections.cue(tags=["desk"])) == []


@pytest.fixture
def days_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    """dateutil's day-by-day search, refusing to look at more than CAP days at a time."""
    day_set = rrules._iterinfo.ddayset
    looked = {"days": 0}

    def counted(self: Any, year: int, month: int, day: int) -> Any:
        looked["days"] += 1
        if looked["days"] > CAP:
            raise AssertionError(f"looked at more than {CAP} days")
        return day_set(self, year, month, day)

    monkeypatch.setattr(rrules._iterinfo, "ddayset", counted)


@pytest.mark.usefixtures("days_capped")
@pytest.mark.parametrize(
    "every",
    ["FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", "FREQ=HOURLY;BYMONTH=4;BYMONTHDAY=31;BYHOUR=9"],
)
def test_a_rule_that_never_occurs_is_refused_without_searching_to_the_year_9999(
    memory: MemoryService, every: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.remind("water the plants", at="2027-01-05T09:00", every=every)
    assert caught.value.field == "every"
    assert caught.value.message == f"the recurrence {every!r} has no occurrence"
    assert memory.intentions(state="all") == []


@pytest.mark.usefixtures("days_capped")
def test_a_rare_rule_that_does_occur_is_kept(memory: MemoryService) -> None:
    # 29 February on a Monday: first in 2044.
    intention = memory.remind(
        "leap Monday", at="2027-01-05T09:00", every="FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO"
    )
    assert intention.next_due is not None
    assert intention.next_due.date().isoformat() == "2044-02-29"


@pytest.mark.parametrize(
    ("every", "first"),
    [
        # No day named: every day (or that weekday, or hour) of the months named, whatever
        # the day of at; a yearly search from 31 January looked for 31 June.
        ("FREQ=DAILY;BYMONTH=6", "2027-06-01"),
        ("FREQ=WEEKLY;BYMONTH=2", "2027-02-07"),
        ("FREQ=HOURLY;BYMONTH=4;BYHOUR=9", "2027-04-01"),
        ("FREQ=DAILY;BYYEARDAY=366", "2028-12-31"),
        ("FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13", "2027-08-13"),
        ("FREQ=WEEKLY;BYWEEKNO=53;BYDAY=TH", "2032-12-30"),
    ],
)
def test_a_rule_whose_days_differ_from_at_is_kept(
    memory: MemoryService, every: str, first: str
) -> None:
    intention = memory.remind("seasonal", at="2027-01-31T09:00", every=every)
    assert intention.next_due is not None
    assert intention.next_due.date().isoformat() == first


@pytest.mark.parametrize(
    ("every", "words"),
    [
        ("FREQ=MONTHLY;BYMONTHDAY=32", "BYMONTHDAY=32 in 'FREQ=MONTHLY;BYMONTHDAY=32' is out"),
        ("FREQ=MONTHLY;BYMONTHDAY=-32", "BYMONTHDAY=-32 in"),
        ("FREQ=MONTHLY;BYMONTHDAY=0", "BYMONTHDAY=0 in"),
        ("FREQ=YEARLY;BYYEARDAY=367", "BYYEARDAY=367 in"),
        ("FREQ=YEARLY;BYWEEKNO=54", "BYWEEKNO=54 in"),
        ("FREQ=MONTHLY;BYMONTH=4;BYMONTHDAY=31", "has no occurrence"),
        ("FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30,31", "has no occurrence"),
        ("FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=-31", "has no occurrence"),
        ("FREQ=MONTHLY;BYDAY=6MO", "BYDAY=6MO in 'FREQ=MONTHLY;BYDAY=6MO' is out of range"),
        ("FREQ=YEARLY;BYMONTH=3;BYDAY=-6FR", "BYDAY=-6FR in"),
        ("FREQ=YEARLY;BYDAY=60MO", "BYDAY=60MO in"),
    ],
)
def test_an_impossible_day_filter_is_refused_before_any_expansion(
    memory: MemoryService, monkeypatch: pytest.MonkeyPatch, every: str, words: str
) -> None:
    # dateutil looked for an occurrence day by day until the year 9999: one to two
    # seconds of CPU for each such request. Refused now without expanding the rule.
    from recalld.intentions import timing

    def expanded(*arguments: Any) -> Any:
        raise AssertionError("the rule was expanded")

    monkeypatch.setattr(timing, "_yearly_superset", expanded)
    with pytest.raises(ValidationError) as caught:
        memory.remind("pay the rent", at="2027-01-01T09:00", every=every)
    assert caught.value.field == "every"
    assert words in caught.value.message
    assert memory.intentions(state="all") == []


def test_possible_day_filters_are_kept(memory: MemoryService) -> None:
    for every in (
        "FREQ=MONTHLY;BYMONTH=4,6;BYMONTHDAY=30,31",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
        "FREQ=MONTHLY;BYMONTHDAY=-31",
        "FREQ=YEARLY;BYWEEKNO=53;BYDAY=TH",
    ):
        assert memory.remind("check", at="2027-01-01T09:00", every=every).next_due is not None


def test_a_rule_past_dateutil_s_tables_is_refused_naming_every(memory: MemoryService) -> None:
    # dateutil's IndexError reached the caller bare (a 500 over REST).
    with pytest.raises(ValidationError) as caught:
        memory.remind("hunt the eggs", at="2027-01-01T09:00", every="FREQ=YEARLY;BYEASTER=500")
    assert caught.value.field == "every"
    assert memory.intentions(state="all") == []
