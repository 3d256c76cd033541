"""Times for intentions: the caller's zone, natural-language phrases and recurrences.

- **Zones.** A zone is an IANA name (``Europe/Paris``: its wall clock, daylight
  saving included) or a fixed offset (``+01:00``, ``UTC``). A bare offset stays a
  fixed offset: a daily 09:00 at ``+01:00`` is 08:00 UTC all year, so it reads
  10:00 on a Paris clock in summer. Give a zone name for recurrences that must
  follow a local clock across a DST change.
- **Phrases.** ``at``, ``until`` and ``expires`` take ISO 8601 (a time without
  an offset is read in the caller's zone) or English phrases ("tomorrow at 9",
  "next Friday 18:00", "in 2 hours") parsed by ``dateparser`` against the
  caller's wall clock, preferring the future. A day without a time, as a phrase
  ("next Friday", "tomorrow") or an ISO date (``2027-01-01``), means that day at
  ``default_time`` (09:00); a duration counts from now: in hours, minutes or
  seconds ("in 2 hours") as elapsed time, across a clock change too, and in days
  or longer ("in 3 days", "a week from now") keeping the time of day. The resolved instant is
  echoed back by every surface.
- **Recurrences.** ``daily``, ``weekdays``, ``weekly``, ``monthly`` or an RFC 5545
  RRULE (``FREQ=WEEKLY;BYDAY=MO,WE``), expanded by ``python-dateutil`` from the
  first occurrence ``at`` on the zone's wall clock. ``monthly`` from the 29th, 30th or
  31st fires every month, on the last day of a month too short for it (an RRULE
  ``FREQ=MONTHLY`` skips those months, as RFC 5545 says).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

from dateutil import rrule as rrules

from recalld._time import from_iso_text, parse_clock_time, parse_zone, rfc3339_text
from recalld.errors import ValidationError

__all__ = [
    "PhraseParser",
    "Recurrence",
    "parse_clock_time",
    "parse_zone",
    "wall_anchor",
    "zone_label",
]

# A clock time inside a phrase ("at 25:99"): hours and minutes.
# A phrase that is a number alone ("99", "1234567890", "9"): dateparser reads it as a
# year (2099), a Unix time (2009) or a month (September): none a time anyone meant, so it
# is refused (review of pass e62). Digits that are ISO 8601's basic form (20261204) were
# read before.
BARE_NUMBER = re.compile(r"[+-]?\d[\d\s]*")
CLOCK_TIME = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])")
# How many first occurrences of a rule are checked against the shortest gap allowed.
GAP_SAMPLE = 10
# dateparser reads a bare number after "at" as a day or a month ("at 9" -> the 9th);
# people mean an hour, so "at 9" becomes "at 9:00" before parsing.
BARE_HOUR = re.compile(
    r"\b(at|@)\s*(\d{1,2})(?![\d:.])(?!\s*(?:am|pm|a\.m\.|p\.m\.|h)\b)", re.IGNORECASE
)
# Periods dateparser reports for a phrase that names a day (or longer) but no time.
DAY_PERIODS = frozenset({"day", "week", "month", "year"})
# A duration from now ("in 3 days", "a week from now", "in 2 weeks and 3 days"): dateparser
# reports it with a day period too, but it names no day, so it keeps the time of day.
_QUANTITY = r"(?:\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|fortnights?|months?|years?)"
_SPANS = rf"{_QUANTITY}\s+{_UNIT}(?:\s*(?:,|and)?\s*{_QUANTITY}\s+{_UNIT})*"
DURATION = re.compile(
    rf"^(?:(?:in|after)\s+{_SPANS}|{_SPANS}(?:\s+(?:from\s+now|later|hence))?)$", re.IGNORECASE
)
# A unit of a day or longer in a duration: "in 3 days" keeps the time of day.
DAY_UNITS = re.compile(r"\b(?:days?|weeks?|fortnights?|months?|years?)\b", re.IGNORECASE)
RECURRENCE_WORDS = {
    "daily": "FREQ=DAILY",
    "weekdays": "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR",
    "weekly": "FREQ=WEEKLY",
    "monthly": "FREQ=MONTHLY",
}
PHRASE_MAX_CHARS = 200
# Frequencies that step a fixed span of the wall clock, and that span in seconds.
STEP_SECONDS = {
    rrules.SECONDLY: 1,
    rrules.MINUTELY: 60,
    rrules.HOURLY: 3_600,
    rrules.DAILY: 86_400,
    rrules.WEEKLY: 604_800,
}
# How far before the moment asked about a long-running recurrence is expanded from:
# more than any daylight-saving shift, so no occurrence near the moment is missed.
REBASE_MARGIN = timedelta(days=2)
# Wider than any clock change (an hour, two in some zones' past): how far around a
# moment a sub-daily rule's occurrences are looked at for a repeated wall time.
CLOCK_SHIFT_MARGIN = timedelta(hours=3)
# Every month has this many days; "monthly" from a later day falls back to the last one.
SHORTEST_MONTH_DAYS = 28
# The parts of an RRULE that pick days; a yearly rule naming none falls on at's date.
DAY_FILTERS = ("bymonthday", "byyearday", "byweekno", "byweekday", "byeaster")


def zone_label(zone: tzinfo) -> str:
    """How a zone is stored and shown: its IANA name, or ``±HH:MM`` for a fixed offset."""
    if isinstance(zone, ZoneInfo):
        return zone.key
    offset = zone.utcoffset(None) or timedelta(0)
    if offset == timedelta(0):
        return "UTC"
    sign = "-" if offset < timedelta(0) else "+"
    minutes = int(abs(offset).total_seconds()) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def wall_anchor(moment: datetime, zone: tzinfo) -> datetime:
    """A stored first occurrence on ``zone``'s wall clock, at the wall time it was given.

    ``at`` is stored as the caller's wall time with the offset the zone gives it, so
    02:30 on the night the clocks go forward (a time the local clock skips) is kept as
    02:30 with the offset before the change. Converting it with ``astimezone`` would
    read 03:30, and a daily 02:30 would fire at 03:30 every day after; the wall time
    whose offset (either of a repeated hour) is the stored one names the same instant.
    A time stored on another offset is converted.
    """
    for fold in (0, 1):
        wall = moment.replace(tzinfo=zone, fold=fold)
        if wall.utcoffset() == moment.utcoffset():
            return wall
    return moment.astimezone(zone)


class PhraseParser:
    """Instants from ISO 8601 or English phrases, against the caller's wall clock."""

    def __init__(self, default_time: time) -> None:
        self._default_time = default_time

    def resolve(self, field: str, value: str | datetime, zone: tzinfo, now: datetime) -> datetime:
        """The instant ``value`` names, as an aware datetime on ``zone``'s clock.

        An aware ISO time keeps its own offset; a naive one is read in ``zone``.
        """
        if isinstance(value, datetime):
            moment = value if value.tzinfo is not None else value.replace(tzinfo=zone)
            return _representable(field, moment, zone)
        text = value.strip()
        if not text:
            raise ValidationError(field, "must not be empty")
        if len(text) > PHRASE_MAX_CHARS:
            raise ValidationError(field, f"is {len(text)} chars; the limit is {PHRASE_MAX_CHARS}")
        try:
            day = date.fromisoformat(text)
        except ValueError:
            pass
        else:  # an ISO date names a day but no time, as "next Friday" does
            return _representable(field, datetime.combine(day, self._default_time, zone), zone)
        try:
            # As a memory's at reads it (a leap second, a lower-case t or z included).
            moment = from_iso_text(rfc3339_text(text))
        except ValueError:
            if BARE_NUMBER.fullmatch(text):
                raise ValidationError(
                    field,
                    f"cannot read {text!r} as a time: a number alone names no day or hour;"
                    " give ISO 8601 (2026-12-04T09:00+01:00) or a phrase such as"
                    " 'tomorrow at 9' or 'next Friday 18:00'",
                ) from None
            return _representable(field, self._phrase(field, text, zone, now), zone)
        moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=zone)
        return _representable(field, moment, zone)

    def _phrase(self, field: str, text: str, zone: tzinfo, now: datetime) -> datetime:
        from dateparser.date import DateDataParser

        # dateparser is given the caller's wall clock as naive UTC and its answer is
        # put back on the zone's clock: its own zone handling shifts relative phrases.
        # A phrase naming its own zone ("tomorrow at 9 PST") comes back aware: asked to
        # convert to UTC, it came back naive, and was read on the caller's clock.
        wall_now = now.astimezone(zone).replace(tzinfo=None, microsecond=0)
        parser = DateDataParser(
            languages=["en"],
            settings={
                "RELATIVE_BASE": wall_now,
                "PREFER_DATES_FROM": "future",
                "TIMEZONE": "UTC",
                "RETURN_TIME_AS_PERIOD": True,
            },
        )
        data = parser.get_date_data(BARE_HOUR.sub(r"\1 \2:00", text))
        if data.date_obj is None or _impossible_clock(text):
            raise ValidationError(
                field,
                f"cannot read {text!r} as a time; give ISO 8601 (2026-12-04T09:00+01:00) or a"
                " phrase such as 'tomorrow at 9' or 'next Friday 18:00'",
            )
        named: datetime = data.date_obj
        spoken = " ".join(text.split())
        if named.tzinfo is not None:
            if not DURATION.match(spoken.rpartition(" ")[0]):
                if data.period in DAY_PERIODS:  # "tomorrow UTC": 09:00 on that zone's clock
                    named = datetime.combine(named.date(), self._default_time, named.tzinfo)
                return named.astimezone(zone)  # the instant of the zone or offset it names
            # "in 2 hours UTC": a duration is the same on every clock; the zone is moot
            # (dateparser counted it from the wall clock given as UTC, then converted).
            spoken = spoken.rpartition(" ")[0]
            named = named.astimezone(UTC)
        wall = named.replace(tzinfo=None)
        if DURATION.match(spoken) and not DAY_UNITS.search(spoken):
            # Hours, minutes and seconds pass alike on every clock: counted from now, not
            # on the wall clock, where "in 2 hours" across the night the clocks go forward
            # came an hour early (and "in 10 minutes" at a repeated 01:30, 50 minutes back).
            return (now.astimezone(UTC) + (wall - wall_now)).astimezone(zone)
        if data.period in DAY_PERIODS and not DURATION.match(spoken):
            wall = datetime.combine(wall.date(), self._default_time)
        return wall.replace(tzinfo=zone)


def _impossible_clock(text: str) -> bool:
    """Whether ``text`` holds a clock time dateparser cannot read ("25:99", "13:75", and
    "24:00": say 00:00): it drops one and keeps the rest of the phrase, which would
    silently mean the default time, 09:00."""
    return any(int(hours) > 23 or int(minutes) > 59 for hours, minutes in CLOCK_TIME.findall(text))


def _representable(field: str, moment: datetime, zone: tzinfo) -> datetime:
    """``moment``, refused (naming ``field``) when it has no UTC or zone time, as at the
    ends of the calendar (0001-01-01T00:00+14:00 is still year 0 in UTC)."""
    try:
        moment.astimezone(UTC)
        moment.astimezone(zone)
    except OverflowError:
        raise ValidationError(
            field, f"{moment.isoformat()} is out of the representable range"
        ) from None
    return moment


@dataclass(frozen=True)
class Recurrence:
    """An RRULE expanded on a zone's wall clock from its first occurrence."""

    rule: str
    anchor: datetime

    @classmethod
    def parse(
        cls, every: str, anchor: datetime, field: str = "every", shortest_gap: float = 0.0
    ) -> Recurrence:
        """``daily``/``weekdays``/``weekly``/``monthly`` or an RRULE, from ``anchor``; a
        rule whose first occurrences come less than ``shortest_gap`` seconds apart is
        refused (each occurrence is a durable write and a reminder)."""
        text = every.strip()
        rule = RECURRENCE_WORDS.get(text.lower())
        if text.lower() == "monthly" and anchor.day > SHORTEST_MONTH_DAYS:
            # RFC 5545 skips months without the day: "monthly" from 31 January would
            # miss February, April, June, September and November. It means every month,
            # on the last day of those too short for the day.
            rule = f"FREQ=MONTHLY;BYMONTHDAY={anchor.day},-1;BYSETPOS=1"
        if rule is None:
            rule = text[len("RRULE:") :] if text.upper().startswith("RRULE:") else text
            if not rule or "\n" in rule or "DTSTART" in rule.upper():
                raise ValidationError(
                    field,
                    "give daily, weekdays, weekly, monthly or one RRULE such as"
                    " FREQ=WEEKLY;BYDAY=FR (the first occurrence comes from at)",
                )
        _check_counts(rule, text, field)
        _check_day_filters(rule, text, field)
        recurrence = cls(rule=rule, anchor=anchor)
        try:
            built = recurrence._built()
            if next(iter(_yearly_superset(built)), None) is None:
                raise ValidationError(field, f"the recurrence {text!r} has no occurrence")
            first = [
                _as_datetime(found) for found in built.xafter(anchor, count=GAP_SAMPLE, inc=True)
            ]
        # IndexError: dateutil's own, for an ordinal past its tables (BYEASTER=500,
        # BYDAY=60MO), which reached callers as a bare IndexError (a 500 over REST).
        except (ValueError, TypeError, OverflowError, IndexError) as error:
            if "FREQ=" not in rule.upper():  # no RRULE at all: dateutil's own words would puzzle
                raise ValidationError(
                    field,
                    f"cannot read {text!r}: give daily, weekdays, weekly, monthly or one RRULE"
                    " such as FREQ=WEEKLY;BYDAY=FR",
                ) from None
            raise ValidationError(field, f"cannot use the recurrence {text!r}: {error}") from None
        gap = timedelta(seconds=shortest_gap)
        if any(later - earlier < gap for earlier, later in pairwise(first)):
            raise ValidationError(
                field,
                f"occurrences of {text!r} come less than {shortest_gap:g} seconds apart"
                " (RECALLD_INTENTION_MIN_RECURRENCE_SECONDS)",
            )
        return recurrence

    def _built(self) -> Any:
        return rrules.rrulestr(self.rule, dtstart=self.anchor, forceset=False)

    def _near(self, moment: datetime) -> Any:
        """The rule expanded from a start shortly before ``moment`` instead of from ``at``.

        dateutil walks every occurrence from the start: a minutely reminder two years
        old took seconds at each firing (in the scheduler's write transaction), one
        given a first occurrence decades back minutes. A rule stepping a fixed span of
        the wall clock (seconds to weeks) with no COUNT has the same occurrences from
        any start a whole number of its steps later, so it starts from the last such
        start :data:`REBASE_MARGIN` before ``moment``; a COUNT counts from ``at``, and
        months and years are few.
        """
        built = self._built()
        span = STEP_SECONDS.get(built._freq)
        if span is None or built._count is not None:
            return built
        step = timedelta(seconds=span * built._interval)
        start = self.anchor.replace(tzinfo=None)
        try:
            wall = moment.astimezone(self.anchor.tzinfo).replace(tzinfo=None) - REBASE_MARGIN
        except OverflowError:  # a moment at the ends of the calendar: no shortcut
            return built
        steps = (wall - start) // step
        if steps <= 0:
            return built
        later = (start + steps * step).replace(tzinfo=self.anchor.tzinfo)
        return built.replace(dtstart=later)

    def _second_anchor(self) -> bool:
        """Whether ``at`` is the second of a wall time the clocks go back over (01:30
        EST after 01:30 EDT) and an occurrence. dateutil drops ``fold``: it gives that
        wall time as its first instant, an hour before ``at``."""
        if not self.anchor.fold:
            return False
        twin = self.anchor.replace(fold=0)
        found = self._built().after(twin, inc=True)
        return found is not None and found.replace(tzinfo=None) == twin.replace(tzinfo=None)

    def _sub_daily(self) -> bool:
        """Whether the rule steps hours, minutes or seconds of elapsed time (see
        :meth:`_next_instant`): not when it names its hours (BYHOUR=2 is a wall time,
        met once a day as a daily rule's is), nor when it has a COUNT, which counts
        dateutil's wall occurrences: both passes of a repeated hour made COUNT=3 fire
        four times (review of pass e63)."""
        built = self._built()
        return bool(
            built._freq > rrules.DAILY
            and not built._original_rule.get("byhour")
            and built._count is None
        )

    def _until(self) -> datetime | None:
        """The rule's UNTIL, an instant (dateutil refuses one without an offset)."""
        until: datetime | None = self._built()._until
        return until

    @staticmethod
    def _instants(occurrence: datetime, until: datetime | None) -> list[datetime]:
        """The passes of ``occurrence`` (see :func:`_passes`) up to ``until``, the rule's
        UNTIL: dateutil checks it on the first pass only, so the second of a repeated
        wall time fired after it (review of pass e63)."""
        passes = _passes(occurrence)
        if until is None or len(passes) == 1:
            return passes
        return [instant for instant in passes if instant.astimezone(UTC) <= until]

    def _next_instant(self, moment: datetime, *, inclusive: bool) -> datetime | None:
        """A sub-daily rule's first occurrence after ``moment`` (at it, ``inclusive``),
        counting a wall time the clocks go back over twice (see :func:`_passes`)."""
        target, first = moment.astimezone(UTC), self.anchor.astimezone(UTC)
        wall = moment.astimezone(self.anchor.tzinfo).replace(tzinfo=None)
        start = (wall - CLOCK_SHIFT_MARGIN).replace(tzinfo=self.anchor.tzinfo)
        best: datetime | None = None
        until = self._until()
        for found in self._near(moment).xafter(start, inc=True):
            occurrence = _as_datetime(found)
            for instant in self._instants(occurrence, until):
                utc = instant.astimezone(UTC)
                if (utc > target or (inclusive and utc == target)) and (
                    best is None or utc < best.astimezone(UTC)
                ):
                    best = instant if utc >= first else best
            # Later wall times are later instants: nothing after this one comes sooner.
            if occurrence.astimezone(UTC) > target:
                break
        return best

    def _last_instant(self, moment: datetime) -> datetime | None:
        """A sub-daily rule's latest occurrence at or before ``moment``, counting a wall
        time the clocks go back over twice (see :func:`_passes`)."""
        target = moment.astimezone(UTC)
        zone = self.anchor.tzinfo
        wall = moment.astimezone(zone).replace(tzinfo=None)
        around = self._near(moment).between(
            (wall - CLOCK_SHIFT_MARGIN).replace(tzinfo=zone),
            (wall + CLOCK_SHIFT_MARGIN).replace(tzinfo=zone),
            inc=True,
        )
        until = self._until()
        instants = [
            instant
            for found in around
            for instant in self._instants(_as_datetime(found), until)
            # Not the first pass of an at given in the second: nothing comes before at.
            if self.anchor.astimezone(UTC) <= instant.astimezone(UTC) <= target
        ]
        if instants:
            return max(instants, key=lambda instant: instant.astimezone(UTC))
        found = self._last_wall(moment)  # none near: the last is long before
        return None if found is None else self._instants(found, until)[-1]

    def next_after(self, moment: datetime, *, inclusive: bool = False) -> datetime | None:
        """The first occurrence after ``moment`` (or at it, when ``inclusive``)."""
        if self._second_anchor():
            anchor, now = self.anchor.astimezone(UTC), moment.astimezone(UTC)
            if anchor > now or (inclusive and anchor == now):
                return self.anchor  # nothing comes before at
        if self._sub_daily():
            return self._next_instant(moment, inclusive=inclusive)
        found = self._near(moment).after(moment, inc=inclusive)
        return None if found is None else _as_datetime(found)

    def last_at_or_before(self, moment: datetime) -> datetime | None:
        """The latest occurrence at or before ``moment``."""
        if self._second_anchor() and moment.astimezone(UTC) < self.anchor.astimezone(UTC):
            return None  # nothing comes before at
        if self._sub_daily():
            return self._last_instant(moment)
        return self._last_wall(moment)

    def _last_wall(self, moment: datetime) -> datetime | None:
        """The latest occurrence at or before ``moment`` as dateutil finds it (a wall
        time the clocks go back over as its first pass)."""
        near = self._near(moment)
        found = near.before(moment, inc=True)
        if found is None and near._dtstart != self.anchor:
            # None since the shortened start: a sparse rule's last may come before it.
            found = self._built().before(moment, inc=True)
        if found is not None and found.replace(tzinfo=None) == self.anchor.replace(tzinfo=None):
            return self.anchor  # at itself, with its fold
        return None if found is None else _as_datetime(found)


def _yearly_superset(built: Any) -> Any:
    """A yearly rule holding every occurrence of ``built`` and more: its day and time
    filters without its INTERVAL, COUNT, UNTIL, BYSETPOS or the ordinals of BYDAY
    ("1MO": every Monday).

    dateutil looks for a first occurrence until the year 9999, one day (or hour) at a
    time: a rule that has none ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30") took 10 s and
    more to refuse. Year by year, its superset's emptiness shows in a fraction of that.
    """
    filters = {name: value for name, value in built._original_rule.items() if name != "bysetpos"}
    if filters.get("byweekday"):
        filters["byweekday"] = tuple(rrules.weekday(day.weekday) for day in filters["byweekday"])
    if built._freq >= rrules.WEEKLY and not any(filters.get(name) for name in DAY_FILTERS):
        # A yearly rule naming no day takes at's day of the month (and month): "every day
        # in February" from 31 January would be 31 February, and refused. A weekly or
        # finer rule naming none falls on any day of its months.
        filters["bymonthday"] = tuple(range(1, 32))
    return rrules.rrule(rrules.YEARLY, dtstart=built._dtstart, wkst=built._wkst, **filters)


# RFC 5545's bounds of the day filters (a negative value counts from the end), and the
# longest each month may be.
DAY_FILTER_BOUNDS = {"BYMONTHDAY": 31, "BYYEARDAY": 366, "BYWEEKNO": 53, "BYMONTH": 12}
LONGEST_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _check_day_filters(rule: str, text: str, field: str) -> None:
    """Refuse a day filter out of RFC 5545's bounds (BYMONTHDAY=32), or a day of the
    month no month named has (BYMONTH=4;BYMONTHDAY=31), at once: dateutil took them and
    looked for an occurrence day by day until the year 9999, one to two seconds of CPU
    for each such request before "has no occurrence" (adversarial pass e63)."""
    given: dict[str, list[int]] = {}
    for part in rule.split(";"):
        name, _, value = part.partition("=")
        name = name.strip().upper()
        if name not in DAY_FILTER_BOUNDS:
            continue
        try:
            numbers = [int(item) for item in value.split(",")]
        except ValueError:
            continue  # not numbers: dateutil's own words name them
        bound = DAY_FILTER_BOUNDS[name]
        low = 1 if name == "BYMONTH" else -bound
        for number in numbers:
            if not low <= number <= bound or number == 0:
                span = f"1 to {bound}" if name == "BYMONTH" else f"1 to {bound} or -{bound} to -1"
                raise ValidationError(
                    field, f"{name}={number} in {text!r} is out of range: give {span}"
                )
        given[name] = numbers
    _check_weekday_ordinals(rule, text, field)
    # Without other day filters, a day of the month is possible when a month named has it.
    others = ("BYYEARDAY", "BYWEEKNO", "BYDAY", "BYEASTER")
    months, days = given.get("BYMONTH"), given.get("BYMONTHDAY")
    alone = not any(f"{other}=" in rule.upper() for other in others)
    possible = any(
        abs(day) <= LONGEST_MONTH[month - 1] for month in months or () for day in days or ()
    )
    if months and days and alone and not possible:
        raise ValidationError(field, f"the recurrence {text!r} has no occurrence")


def _check_weekday_ordinals(rule: str, text: str, field: str) -> None:
    """Refuse a BYDAY ordinal past RFC 5545's bounds: the 6th Monday of a month (5 at
    most in a MONTHLY rule or a YEARLY one naming months), the 54th of a year (53)."""
    parts = {
        name.strip().upper(): value.strip().upper()
        for name, _, value in (part.partition("=") for part in rule.split(";"))
    }
    monthly = parts.get("FREQ") == "MONTHLY" or (
        parts.get("FREQ") == "YEARLY" and "BYMONTH" in parts
    )
    bound = 5 if monthly else 53
    for day in parts.get("BYDAY", "").split(","):
        ordinal = re.match(r"([+-]?\d+)", day.strip())
        if ordinal is not None and not 1 <= abs(int(ordinal.group(1))) <= bound:
            raise ValidationError(
                field,
                f"BYDAY={day.strip()} in {text!r} is out of range: give an ordinal from 1 to"
                f" {bound} or -{bound} to -1{' (weeks of a month)' if monthly else ''}",
            )


def _check_counts(rule: str, text: str, field: str) -> None:
    """Refuse an INTERVAL or COUNT under 1 with its own words: dateutil steps backwards
    from a negative INTERVAL and said "day is out of range for month", repeats the first
    occurrence forever at 0, and a COUNT of 0 has no occurrence at all."""
    for part in rule.split(";"):
        name, _, value = part.partition("=")
        if name.strip().upper() not in ("INTERVAL", "COUNT"):
            continue
        try:
            number = int(value.strip())
        except ValueError:
            continue  # not a number: dateutil's own "invalid 'INTERVAL'" names it
        if number < 1:
            raise ValidationError(
                field,
                f"{name.strip().upper()} in {text!r} must be a whole number of at least 1,"
                f" got {number}",
            )


def _passes(occurrence: datetime) -> list[datetime]:
    """The instants a wall-clock occurrence names: two when the clocks go back over it
    (01:30 EDT, then 01:30 EST), else itself (a time the clocks skip stays as dateutil
    gives it)."""
    second = occurrence.replace(fold=1)
    if second.utcoffset() == occurrence.replace(fold=0).utcoffset():
        return [occurrence]
    # Both folds of a skipped time differ too; only a repeated one reads back as given.
    back = second.astimezone(UTC).astimezone(occurrence.tzinfo)
    if back.replace(tzinfo=None) != occurrence.replace(tzinfo=None):
        return [occurrence]
    return [occurrence.replace(fold=0), second]


def _as_datetime(value: Any) -> datetime:
    if not isinstance(value, datetime):  # pragma: no cover - dateutil returns datetimes
        raise TypeError(f"expected a datetime, got {value!r}")
    return value
