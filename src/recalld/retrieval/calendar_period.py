"""A period of time on the user's calendar: what a question names ("last weekend"),
what a memory's text states, and how a memory's time compares with it.

:mod:`recalld.retrieval.periods` reads periods from text; this module holds the
value itself (``[start, end)`` in UTC, read in whole days of its zone).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta, tzinfo

__all__ = ["STATED_REACH", "TOLD_AFTER", "Period", "midnight", "years_on"]

# What a memory written this long after a period most likely tells of it ("yesterday I ...").
TOLD_AFTER = timedelta(days=7)
# How long after a period a memory's text is read for a time inside it: what a memory
# states is read as past ("yesterday", "last week", "two weeks ago"), so one written before
# the period, or more than a month after it, is not read at all (~0.1 ms a text saved).
STATED_REACH = timedelta(days=31)


@dataclass(frozen=True)
class Period:
    """``[start, end)`` in UTC: the period a question names (either end may be open)."""

    start: datetime | None
    end: datetime | None
    phrases: tuple[str, ...]
    yearless: bool = False
    """Named by days or months without a year ("in June", "on May 5"), read as the latest
    not after today: recall may look further back (see :meth:`years_back`)."""
    zone: tzinfo = field(default=UTC, compare=False, repr=False)
    """The calendar it was read on (whole days of this zone)."""
    core: tuple[datetime, datetime] | None = None
    """``[start, end)`` of the day the phrase names when the period is read wider around
    it ("two days ago" covers a day either side; None: the period is what it names)."""
    relative: bool = False
    """Named only by phrases relative to when it was read ("yesterday", "last week",
    "on Monday"), none of them a date or a bound."""
    opens_at: int | None = field(default=None, compare=False, repr=False)
    """For a :attr:`relative` period: where in the text its first phrase starts."""

    def years_back(self, years: int) -> Period:
        """The same days ``years`` earlier on the same calendar (February 29 becomes the
        28th; whole months stay whole: February 2025 goes back to all of February 2024)."""
        months = self.start is None or self.start.astimezone(self.zone).day == 1
        return replace(
            self,
            start=None if self.start is None else _back(self.start, years, self.zone),
            end=None if self.end is None else _back_end(self.end, years, self.zone, months),
            core=None
            if self.core is None
            else (
                _back(self.core[0], years, self.zone),
                _back_end(self.core[1], years, self.zone),
            ),
        )

    def days(self) -> int | None:
        """How many days of its calendar it covers (None: an open end). Counted in whole
        days, so a change of daylight saving time inside it does not count an hour more."""
        if self.start is None or self.end is None:
            return None
        zone = self.zone
        return (self.end.astimezone(zone).date() - self.start.astimezone(zone).date()).days

    def exact(self) -> Period:
        """The period without the slack around what its phrase names (see :attr:`core`)."""
        if self.core is None:
            return self
        return replace(self, start=self.core[0], end=self.core[1], core=None)

    def contains(self, other: Period) -> bool:
        """Whether ``other`` lies wholly inside this period (an open end reaches any
        time; an open ``other`` only fits an end as open)."""
        starts = self.start is None or (other.start is not None and other.start >= self.start)
        ends = self.end is None or (other.end is not None and other.end <= self.end)
        return starts and ends

    def holds(self, moment: datetime) -> bool:
        """Whether ``moment`` (aware) falls inside the period."""
        return (self.start is None or moment >= self.start) and (
            self.end is None or moment < self.end
        )

    def overlaps(self, other: Period) -> bool:
        """Whether the two periods share a moment (an open end reaches any time)."""
        return (self.start is None or other.end is None or self.start < other.end) and (
            other.start is None or self.end is None or other.start < self.end
        )

    def may_be_stated_at(self, moment: datetime) -> bool:
        """Whether a memory written at ``moment`` is read for a time it states inside the
        period: written inside it or at most :data:`STATED_REACH` after it."""
        return (self.start is None or moment >= self.start) and (
            # A difference, not a sum: a period ending 9999-12-31 has no month after it.
            self.end is None or moment - self.end < STATED_REACH
        )

    def told_after(self, moment: datetime) -> float:
        """How soon after a closed period of at most :data:`TOLD_AFTER` ``moment`` comes: 1
        at its end, falling to 0 :data:`TOLD_AFTER` later (0 inside, before, or for an open
        or longer period). People write about a weekend on the Monday; a memory of the
        first days of July says little about June."""
        days = self.days()
        if days is None or self.end is None or moment < self.end:
            return 0.0
        # Counted in days of its calendar: the week that ends daylight saving time is
        # 7 days and an hour long, and is still a week.
        if days > TOLD_AFTER.days:
            return 0.0
        return max(0.0, 1.0 - (moment - self.end) / TOLD_AFTER)


def _back(moment: datetime, years: int, zone: tzinfo) -> datetime:
    """The midnight starting the same day ``years`` earlier (February 29: the 28th)."""
    return midnight(years_on(moment.astimezone(zone).date(), -years), zone)


def _back_end(moment: datetime, years: int, zone: tzinfo, months: bool = False) -> datetime:
    """The midnight ending the same last day ``years`` earlier: a period up to February 29
    ends after the 28th, not before it, and with ``months`` (a period of whole months) one
    up to the end of a month ends with that month (a winter that ends on February 28 goes
    back to one ending on the 29th)."""
    following = moment.astimezone(zone).date()
    if months and following.day == 1:
        return midnight(following.replace(year=following.year - years), zone)
    last = following - timedelta(days=1)
    return midnight(years_on(last, -years) + timedelta(days=1), zone)


def years_on(day: date, years: int) -> date:
    """``day`` ``years`` later (earlier when negative; February 29 in a year without one:
    the 28th)."""
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # February 29
        return day.replace(year=day.year + years, day=28)


def midnight(day: date, zone: tzinfo) -> datetime:
    """The start of ``day`` on ``zone``'s calendar, in UTC."""
    return datetime.combine(day, time(), zone).astimezone(UTC)
