"""The period of time a question names: "last weekend", "in May 2023", "on 2026-11-28".

Recall compares the period with each candidate's ``at`` (the reranker's
``near_period`` feature: inside it, or soon after) and also searches the memories
of that period by meaning, so "what did I do last weekend?" finds "hiked Mt Tam
with Sam" stored last Saturday although the two share no word. The same reader
serves the memories: :mod:`recalld.retrieval.period_matching` reads with it the
period a memory's own text states ("yesterday I ran a 5K"), as of its ``at``, and
tells a question that asks only about its period ("what did I do yesterday?").

English phrases only, read with regular expressions (``dateparser`` reads one
phrase well but searching a sentence for dates with it costs milliseconds and
mistakes "may" and "second" for dates):

* absolute: an ISO date or month (``2026-11-28``, ``2026/11/28``,
  ``2026-11``), a day with its month ("October 13, 2023", "13th of October",
  "Oct 13"), a month ("in June", "December 2023", "last May"), a season with
  its year ("summer 2021", :mod:`recalld.retrieval.seasons`), a year after a
  preposition ("in 2023", "winter 2021": a season straddling two years; a bare
  number such as "model 2019" is not a year);
* relative to now, on the user's calendar (``RECALLD_ZONE``, else this
  machine's offset): today, tonight, this morning, yesterday, last night, the
  day before yesterday, this/last week, weekend or month or year, "the week
  before last", "over the weekend" (not "at the weekend", as often a habit),
  "N days (weeks, weekends, months, years) ago" or "back", "in the last N days", "the
  past few weeks", "last Friday", "on Friday", "Friday"; a season ("last
  summer", "in the fall"), whose months give a day or month inside it without
  a year their year ("on July 4 last summer"), and which is read rather than a
  period it lies in ("in 2023, in the summer": summer 2023);
* counted from a date: "the week (day, weekend, month, Sunday) before X",
  "two weeks after X", "the week of X";
* a bound: "before/until X" ends the period at X and "after/since X" starts it
  there (X may be relative: "since last week"); a relative phrase beside
  "before X" counts back from X ("last weekend before April 10, 2023").

A day or month without a year takes the year another date of the question names,
else it is the latest one not after today ("last June" asked in June: a year
ago); such a period is marked ``yearless``, and recall reads it as the latest
one its memories hold (see :mod:`recalld.retrieval.hybrid`). Weeks start on
Monday; "this weekend" asked on a Monday is the one just past. Several phrases
give the smallest period covering them all. Vague words ("recently", "lately",
"the other day") name no period (the ``query_time`` feature already says the
question is about time); nor do days named after a feast, a sale or a show
("Cyber Monday", "Easter Sunday", "Saturday Night Live"), nor a weekday after
an article ("the Friday deploys", "a Sunday roast"). Month
names that are also words or names ("may", "march", "April", "June", "August")
count only as dates: capitalised, beside a day or a year, or after a preposition
("in June"). Only the first :data:`MAX_CHARS` characters are read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, tzinfo

from recalld.retrieval.calendar_period import (
    STATED_REACH,
    TOLD_AFTER,
    Period,
    midnight,
    years_on,
)
from recalld.retrieval.seasons import SEASON_WORDS, find_seasons

__all__ = [
    "MAX_CHARS",
    "MONTH_NAMES",
    "STATED_REACH",
    "TOLD_AFTER",
    "WEEKDAYS",
    "Period",
    "query_period",
]

# A question longer than this is read up to here (a pasted log is not a question).
MAX_CHARS = 1_000
# A phrase that counts from or bounds a date stands within this many characters before it.
_LEAD_CHARS = 48

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
# Month names that are also common words: a date only when capitalised ("May 5", not "2 may").
_WORDS = frozenset(("may", "mar", "march"))
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")(?![a-z'\u2019])\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_YEAR_AFTER = r"(?:,\s*|\s+)" + _YEAR + r"(?!\d)"
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Each month's full name by its number (the first of its names).
MONTH_NAMES = {number: name for name, number in reversed(_MONTHS.items())}
_WEEKDAY_NAMES = "|".join(WEEKDAYS)
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
_VAGUE_COUNTS = frozenset(("a few", "few", "several"))
_COUNT = (
    r"(?P<count>(?<![\d.,])\d{1,3}|"
    + "|".join(sorted(_NUMBERS, key=len, reverse=True)).replace(" ", r"\s+")
    + r")"
)
_UNIT = r"(?P<unit>day|week|month|year)s?"

_ISO_DAY = re.compile(
    r"(?<!\d)(?P<year>(?:19|20)\d\d)(?P<sep>[-/])(?P<month>\d\d?)(?P=sep)(?P<day>\d\d?)(?!\d)"
)
_ISO_MONTH = re.compile(r"(?<!\d)(?P<year>(?:19|20)\d\d)-(?P<month>\d\d)(?![\d-])")
# "June 1-5", "June 1st through 5th": a range of days of one month.
_DAY_RANGE = r"(?:\s*(?:-|\u2013|to|through|until|till)\s*(?P<until>\d{1,2})(?:st|nd|rd|th)?\b)?"
_MONTH_DAY = re.compile(
    r"\b" + _MONTH + r"\s+" + _DAY + r"\b" + _DAY_RANGE + r"(?:" + _YEAR_AFTER + r")?",
    re.IGNORECASE,
)
_DAY_MONTH = re.compile(
    r"\b" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?:" + _YEAR_AFTER + r")?", re.IGNORECASE
)
_MONTH_YEAR = re.compile(r"\b" + _MONTH + r"(?:\s+of)?" + _YEAR_AFTER, re.IGNORECASE)
# "June last year", "June of this year".
_MONTH_THIS_LAST_YEAR = re.compile(
    r"\b" + _MONTH + r"\s+(?:of\s+)?(?P<which>last|this)\s+year\b", re.IGNORECASE
)
# A month alone: after a preposition ("in June", "last May"), or a month name that is no
# one's first name, capitalised ("October").
_MONTH_ALONE = re.compile(
    r"\b(?:(?:(?P<lead>(?i:in|during|of|since|until|till|before|after|last|this|early|late"
    r"|mid|through|by|from|past))\s+|(?i:mid-))(?P<month>(?i:"
    + "|".join(sorted(_MONTHS, key=len, reverse=True))
    + r"))|(?P<named>January|February|July|September|October|November|December))(?![\w'\u2019-])"
)
_YEAR_ALONE = re.compile(
    r"\b(?i:in|during|since|before|after|until|till|of|from|by|through|early|late|mid-?"
    r"|summer|spring|fall|autumn|winter|year)\s+" + _YEAR + r"(?![\d%]|[-/.,:]\d)"
)
_RANGE_WORDS = r"\s*(?:-|\u2013|(?i:to|and|until|till|through))\s*"
# "from 2021 to 2023", "between 2022 and 2023".
_YEAR_RANGE = re.compile(
    r"\b(?i:from|between)\s+" + _YEAR + _RANGE_WORDS + r"(?P<until_year>(?:19|20)\d\d)(?!\d)"
)
# "from March to May", "between June and August 2023".
_MONTH_RANGE = re.compile(
    r"\b(?i:from|between)\s+"
    + _MONTH
    + _RANGE_WORDS
    + r"(?P<until_month>"
    + "|".join(sorted(_MONTHS, key=len, reverse=True))
    + r")(?![a-z'\u2019])\.?(?:"
    + _YEAR_AFTER
    + r")?",
    re.IGNORECASE,
)
_ANY_YEAR = re.compile(r"(?<![\d$€£#])(?:19|20)\d\d(?!\d)")

_TODAY = re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", re.I)
_YESTERDAY = re.compile(
    r"\b(?:(?P<before>the (?:day|night) before )?yesterday|last (?:night|evening))\b", re.I
)
_ROLLING = re.compile(
    r"\b(?:(?P<lead>in|over|during|within|for)\s+)?(?:the\s+)?(?P<which>last|past)\s+(?:"
    + _COUNT
    + r"\s+)?(?P<unit>hour|day|week|month|year)s?\b",
    re.IGNORECASE,
)
_THIS_LAST = re.compile(
    r"\b(?:(?P<which>this|last|past|previous)\s+(?P<unit>week(?:end)?|month|year)"
    r"|the\s+(?P<before>week(?:end)?|month|year)\s+before\s+last"
    # Not "the week before last Friday (last summer, last time)": that counts from it.
    r"(?!\s+(?:week|weekend|month|year|time|night|"
    + "|".join((*_MONTHS, *WEEKDAYS, *SEASON_WORDS))
    + r")\b))\b",
    re.I,
)
# "Last year" beside a season without its own year: its year ("in the summer, last year").
_YEAR_NAMED = re.compile(r"\b(last|this)\s+year\b", re.IGNORECASE)
# "Over the weekend" is one weekend; "at (on) the weekend" is as often a habit ("what do I
# do at the weekend?") and names none.
_THE_WEEKEND = re.compile(r"\b(?:over|during)\s+the\s+weekend\b", re.I)
_AGO = re.compile(r"\b" + _COUNT + r"\s+" + _UNIT + r"\s+(?:ago|back)\b", re.IGNORECASE)
# "Two weekends ago": the weekend that many before this week began (one is last weekend).
_WEEKENDS_AGO = re.compile(r"\b" + _COUNT + r"\s+weekends?\s+(?:ago|back)\b", re.IGNORECASE)
_WEEKDAY = re.compile(
    r"\b(?:(?P<which>(?i:on|last|this past|past|this))\s+(?P<weekday>(?i:" + _WEEKDAY_NAMES + r"))"
    r"|(?P<bare>" + "|".join(name.capitalize() for name in WEEKDAYS) + r"))(?![\w'\u2019])"
)
# Days named after a feast, a sale or a show: "Cyber Monday", "Easter Sunday", "Super Bowl
# Sunday", "Saturday Night Live", "Friday the 13th" name no day of the week just past.
_NAMED_DAY = re.compile(
    r"\b(?:(?:cyber|easter|ash|fat|palm|holy|shrove|black|good|super\s+bowl)\s+(?:"
    + _WEEKDAY_NAMES
    + r")|(?:"
    + _WEEKDAY_NAMES
    + r")\s+night\s+(?:live|football|lights)|friday\s+the\s+13th)\b",
    re.IGNORECASE,
)
# Any word a period phrase needs: most questions hold none, and one search rules them out.
_ANY = re.compile(
    r"\d|\b(?:today|tonight|this (?:morning|afternoon|evening)|yesterday|last (?:night|evening)"
    r"|hour|day|week|weekend|month|year|" + "|".join((*_MONTHS, *WEEKDAYS, *SEASON_WORDS)) + r")",
    re.IGNORECASE,
)
# "Every Monday" is a habit, "next Monday" is to come, "Black Friday" a sale: none is a day.
_NOT_A_DAY = ("every ", "each ", "next ", "coming ", "upcoming ", "forthcoming ", "black ", "good ")
_BOUND = re.compile(r"\b(?P<bound>before|until|till|after|since)\s+$", re.IGNORECASE)
# A period counted from a date: "the week before X", "the Sunday before X", "two weeks
# after X", "the week of X" (matched on the text just before the date).
_NEAR = re.compile(
    r"\b(?:(?:the\s+(?P<unit>day|week|weekend|month|year)|(?:the\s+)?(?P<weekday>"
    + _WEEKDAY_NAMES
    + r")|"
    + _COUNT
    + r"\s+(?P<units>day|week|month|year)s?)\s+(?P<side>before|after)"
    + r"|the\s+(?P<of>week|weekend)\s+of)\s+$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Span:
    first: date
    last: date  # inclusive
    phrase: str
    position: int
    yearless: bool = False
    """Read on today's calendar because neither it nor the question names a year."""
    core: tuple[date, date] | None = None
    """The days (first, last) the phrase names when ``first``-``last`` is read wider."""
    season: bool = False

    def inside(self, other: _Span) -> bool:
        """Whether this span lies inside ``other`` and is not the same days."""
        within = other.first <= self.first and self.last <= other.last
        return within and (self.first, self.last) != (other.first, other.last)


class _Taken:
    """Which characters of the text a phrase already claimed (so "June 5, 2023" is not
    also read as "2023" or "June")."""

    def __init__(self, length: int) -> None:
        self._mask = bytearray(length)

    def free(self, match: re.Match[str]) -> bool:
        return self.free_span(*match.span())

    def free_span(self, start: int, end: int) -> bool:
        return not any(self._mask[start:end])

    def claim(self, match: re.Match[str]) -> None:
        self.claim_span(*match.span())

    def claim_span(self, start: int, end: int) -> None:
        self._mask[start:end] = b"\x01" * (end - start)


def _year_of(
    month: int, day: int, today: date, context: int | None, strictly_before: bool = False
) -> int:
    """The year of a month (and day) written without one: the year another phrase of the
    question gives (``context``), else the latest not after today (with
    ``strictly_before``: not in the current month either, "last June" asked in June)."""
    if context is not None:
        return context
    year = today.year
    if (month, day) > (today.month, today.day) or (strictly_before and month == today.month):
        year -= 1
    for back in range(8):  # "Feb 29" asked in 2025: the latest year that has one
        try:
            date(year - back, month, day)
        except ValueError:
            continue
        return year - back
    return year


def _month_span(year: int, month: int) -> tuple[date, date]:
    first = date(year, month, 1)
    following = date(year + (month == 12), month % 12 + 1, 1)
    return first, following - timedelta(days=1)


def _calendar_month(day: date) -> tuple[date, date]:
    return _month_span(day.year, day.month)


def _count(text: str) -> int:
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else _NUMBERS[text]


def _shift_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 - months
    return date(index // 12, index % 12 + 1, 1)


def _month_number(month: str) -> int:
    """The number of a month written as digits ("06") or as a name ("June", "jun")."""
    return int(month) if month.isdigit() else _MONTHS[month.lower()]


def _is_word(month: str) -> bool:
    """Whether ``month`` as written is more likely the word ("may", "march") than a month."""
    return month.lower() in _WORDS and not month[0].isupper()


def _context_year(text: str) -> int | None:
    """The year the question's first dated phrase names ("between August 11 and August 15
    2023": 2023), for its days and months written without one; a number that is not part
    of a date ("my 2015 Honda") is no year."""
    if _ANY_YEAR.search(text) is None:
        return None
    written = [
        (match.start(), int(match.group("year")))
        for pattern in (_ISO_DAY, _ISO_MONTH, _MONTH_DAY, _DAY_MONTH, _MONTH_YEAR, _YEAR_ALONE)
        for match in pattern.finditer(text)
        if match.group("year")
    ]
    return min(written)[1] if written else None


def _absolute(text: str, today: date, taken: _Taken, zone: tzinfo) -> Iterator[_Span]:
    context = _context_year(text)
    for match in _YEAR_RANGE.finditer(text):
        taken.claim(match)
        low, high = sorted((int(match.group("year")), int(match.group("until_year"))))
        yield _Span(date(low, 1, 1), date(high, 12, 31), match.group(0), match.start())
    for match in _MONTH_RANGE.finditer(text):
        month_text, until_text = match.group("month"), match.group("until_month")
        if _is_word(month_text) or _is_word(until_text) or not taken.free(match):
            continue
        taken.claim(match)
        year_text = match.group("year")
        end_year = int(year_text) if year_text else context
        month, until = _MONTHS[month_text.lower()], _MONTHS[until_text.lower()]
        if end_year is None:
            end_year = _year_of(until, 1, today, None)
        # "from November to February 2024": November 2023 to February 2024.
        opening = _month_span(end_year - (until < month), month)[0]
        closing = _month_span(end_year, until)[1]
        yearless = year_text is None and context is None
        yield _Span(opening, closing, match.group(0), match.start(), yearless)
    for pattern in (_ISO_DAY, _MONTH_DAY, _DAY_MONTH):
        for match in pattern.finditer(text):
            if not taken.free(match):
                continue
            month_text = match.group("month")
            if not month_text.isdigit() and _is_word(month_text):
                continue
            taken.claim(match)
            month = _month_number(month_text)
            day = int(match.group("day"))
            year = match.group("year")
            until_day = match.groupdict().get("until")
            try:
                found = date(
                    int(year) if year else _year_of(month, day, today, context), month, day
                )
                last = found if until_day is None else found.replace(day=int(until_day))
            except ValueError:
                continue  # "February 30, 2023": no such day, no period
            if last >= found:
                yearless = not year and context is None
                yield _Span(found, last, match.group(0), match.start(), yearless)
    for pattern in (_ISO_MONTH, _MONTH_YEAR, _MONTH_THIS_LAST_YEAR):
        # Beside a year, "may" and "march" are months whatever their case.
        for match in pattern.finditer(text):
            if not taken.free(match):
                continue
            month_text = match.group("month")
            taken.claim(match)
            month = _month_number(month_text)
            which = match.groupdict().get("which")
            if which is not None:  # June last year, June of this year
                year = today.year - (which.lower() == "last")
            else:
                year = int(match.group("year"))
            if 1 <= month <= 12:
                yield _Span(*_month_span(year, month), match.group(0), match.start())
    for match in _MONTH_ALONE.finditer(text):
        group = "month" if match.group("month") else "named"
        if not taken.free(match) or _is_word(match.group(group)):
            continue
        taken.claim(match)
        month = _MONTHS[match.group(group).lower()]
        previous = (match.group("lead") or "").lower() in ("last", "past")
        year = _year_of(month, 1, today, None if previous else context, strictly_before=previous)
        # The month's own position: "before June" is a bound (see query_period).
        yearless = not previous and context is None  # "last June" says which one
        yield _Span(*_month_span(year, month), match.group(group), match.start(group), yearless)
    yield from _seasons(text, today, taken, zone, dated=True)  # before "summer 2021" as a year
    for match in _YEAR_ALONE.finditer(text):
        if taken.free(match):
            taken.claim(match)
            year = int(match.group("year"))
            yield _Span(
                date(year, 1, 1), date(year, 12, 31), match.group("year"), match.start("year")
            )


def _seasons(text: str, today: date, taken: _Taken, zone: tzinfo, dated: bool) -> Iterator[_Span]:
    year = None if dated else _context_year(text)  # "in 2023, in the summer"
    named = None if dated or year is not None else _YEAR_NAMED.search(text)
    if named is not None:  # "in the summer, last year"
        year = today.year - (named.group(1).lower() == "last")
    for found in find_seasons(text, today, zone, dated=dated, year=year):
        if taken.free_span(found.start, found.end):
            taken.claim_span(found.start, found.end)
            yield _Span(
                found.first, found.last, found.phrase, found.start, found.yearless, season=True
            )


def _with_seasons(covered: list[_Span]) -> list[_Span]:
    """A day or month without a year inside a season the question names takes the
    season's year ("on July 4 last summer"), and of a season and a period nested in one
    another the narrower is read ("in 2023, in the summer": summer 2023)."""
    seasons = [span for span in covered if span.season]
    if not seasons:
        return covered
    placed = []
    for span in covered:
        for season in seasons if span.yearless and not span.season else ():
            shift = season.first.year - span.first.year
            for years in (shift, shift + 1):
                moved = replace(
                    span, first=years_on(span.first, years), last=years_on(span.last, years)
                )
                if moved.inside(season):
                    span = replace(moved, yearless=season.yearless)
                    break
        placed.append(span)
    return [
        span
        for span in placed
        if not any(other.inside(span) and (other.season or span.season) for other in placed)
    ]


def _relative(text: str, today: date, taken: _Taken, zone: tzinfo) -> Iterator[_Span]:
    monday = today - timedelta(days=today.weekday())
    last_weekend = monday - timedelta(days=2)
    yield from _seasons(text, today, taken, zone, dated=False)
    for match in _ROLLING.finditer(text):
        count_text = match.group("count")
        unit = match.group("unit").lower()
        rolling = count_text or match.group("lead") or match.group("which").lower() == "past"
        if not rolling or not taken.free(match):
            continue  # "last week" is the calendar week (below)
        taken.claim(match)
        count = _count(count_text) if count_text else 1
        days = {"hour": 1 / 24, "day": 1, "week": 7, "month": 31, "year": 366}[unit] * count
        first = today - timedelta(days=max(1, round(days + 0.49)))
        yield _Span(first, today, match.group(0), match.start())
    for match in _TODAY.finditer(text):
        if taken.free(match):
            taken.claim(match)
            yield _Span(today, today, match.group(0), match.start())
    for match in _YESTERDAY.finditer(text):
        if not taken.free(match):
            continue
        taken.claim(match)
        day = today - timedelta(days=2 if match.group("before") else 1)
        # Last night reaches into this morning; it names the evening before.
        last = today if match.group(0).lower().startswith("last") else day
        yield _Span(day, last, match.group(0), match.start(), core=(day, day))
    for match in _THIS_LAST.finditer(text):
        if not taken.free(match):
            continue
        taken.claim(match)
        which = (match.group("which") or "before last").lower()  # the week before last: 2
        unit = (match.group("unit") or match.group("before")).lower()
        back = {"this": 0, "before last": 2}.get(which, 1)
        if unit == "week":
            first = monday - timedelta(weeks=back)
            last = first + timedelta(days=6)
        elif unit == "weekend":
            # Last weekend: the one before this week began; this weekend: this week's, or
            # asked on a Monday, the one just past.
            first = last_weekend - timedelta(weeks=max(0, back - 1))
            first += timedelta(7) if back == 0 and today.weekday() != 0 else timedelta(0)
            last = first + timedelta(days=1)
        elif unit == "month":
            first, last = _calendar_month(_shift_months(today, back))
        else:
            first, last = date(today.year - back, 1, 1), date(today.year - back, 12, 31)
        yield _Span(first, last, match.group(0), match.start())
    for match in _THE_WEEKEND.finditer(text):
        if taken.free(match):
            taken.claim(match)
            first = last_weekend + timedelta(7) if today.weekday() >= 5 else last_weekend
            yield _Span(first, first + timedelta(days=1), match.group(0), match.start())
    for match in _WEEKENDS_AGO.finditer(text):
        if taken.free(match):
            taken.claim(match)
            first = last_weekend - timedelta(weeks=max(0, _count(match.group("count")) - 1))
            yield _Span(first, first + timedelta(days=1), match.group(0), match.start())
    for match in _AGO.finditer(text):
        if _led_by(text, match, ("half ",)) or not taken.free(match):
            continue
        taken.claim(match)
        count = _count(match.group("count"))
        unit = match.group("unit").lower()
        if unit == "day":
            day = today - timedelta(days=count)
            first, last = day - timedelta(days=1), day + timedelta(days=1)
            # People count days loosely, so a day either side is read; a number names
            # the day itself, "a few" or "several" does not.
            if " ".join(match.group("count").lower().split()) not in _VAGUE_COUNTS:
                yield _Span(first, last, match.group(0), match.start(), core=(day, day))
                continue
        elif unit == "week":
            first = monday - timedelta(weeks=count)
            last = first + timedelta(days=6)
        elif unit == "month":
            first, last = _calendar_month(_shift_months(today, count))
        else:
            year = today.year - count
            first, last = date(year, 1, 1), date(year, 12, 31)
        yield _Span(first, last, match.group(0), match.start())
    for match in _NAMED_DAY.finditer(text):
        taken.claim(match)  # a feast or a show, not the day of that name just past
    for match in _WEEKDAY.finditer(text):
        if _led_by(text, match, _NOT_A_DAY) or not taken.free(match):
            continue
        if (
            match.group("bare")
            and _led_by(text, match, ("the ", "a ", "an "))
            and not _led_by(text, match, ("on the ",))
        ):
            continue  # "the Friday deploys", "a Sunday roast": a kind of day ("on the Friday": one)
        taken.claim(match)
        name = match.group("weekday") or match.group("bare")
        weekday = WEEKDAYS.index(name.lower())
        which = (match.group("which") or "on").lower()
        if which == "this":
            day = monday + timedelta(days=weekday)
        else:
            back = (today.weekday() - weekday) % 7
            if back == 0 and which != "on":
                back = 7  # "last Friday" asked on a Friday: a week ago
            day = today - timedelta(days=back)
        yield _Span(day, day, match.group(0), match.start())


def _led_by(text: str, match: re.Match[str], words: tuple[str, ...]) -> bool:
    """Whether one of ``words`` (lower case, with their space) stands just before ``match``,
    as a word of its own ("a Sunday roast", not "Priya Sunday")."""
    start = match.start()
    lead = text[max(0, start - 14) : start].lower()
    return any(lead.endswith(word) and not _in_word(text, start - len(word) - 1) for word in words)


def _in_word(text: str, index: int) -> bool:
    """Whether ``text[index]`` belongs to a word: a letter, digit or underscore, or an
    apostrophe after one ("isn't"; not an opening quote)."""
    if index < 0:
        return False
    character = text[index]
    if character.isalnum() or character == "_":
        return True
    return character in "'\u2019" and index > 0 and text[index - 1].isalnum()


def _counted_from(near: re.Match[str], span: _Span) -> tuple[date, date]:
    """The period ``near`` counts from the date ``span`` names ("the week before X")."""
    if near.group("of") is not None:  # the week (weekend) of X
        monday = span.first - timedelta(days=span.first.weekday())
        if near.group("of").lower() == "week":
            return monday, monday + timedelta(days=6)
        return monday + timedelta(days=5), monday + timedelta(days=6)
    forward = near.group("side").lower() == "after"
    edge = span.last if forward else span.first
    sign = 1 if forward else -1
    unit = (near.group("unit") or near.group("units") or "").lower()
    weekday = near.group("weekday")
    if weekday is not None:
        wanted = WEEKDAYS.index(weekday.lower())
        step = (wanted - edge.weekday() if forward else edge.weekday() - wanted) % 7
        day = edge + timedelta(days=sign * (step or 7))
        return day, day
    counted = near.group("count") is not None  # "two days before X", not "the day before X"
    count = _count(near.group("count")) if counted else 1
    if unit == "day":
        day = edge + timedelta(days=sign * count)
        return (day - timedelta(days=1), day + timedelta(days=1)) if counted else (day, day)
    if unit == "weekend":
        # The first Saturday after the date, or the last Sunday before it, and its pair.
        if forward:
            saturday = edge + timedelta(days=(5 - edge.weekday()) % 7 or 7)
            return saturday, saturday + timedelta(days=1)
        sunday = edge - timedelta(days=(edge.weekday() - 6) % 7 or 7)
        return sunday - timedelta(days=1), sunday
    if unit == "week" and counted:
        middle = edge + timedelta(weeks=sign * count)
        return middle - timedelta(days=3), middle + timedelta(days=3)
    if unit == "week":  # the seven days before (after) the date
        if forward:
            return edge + timedelta(days=1), edge + timedelta(days=7)
        return edge - timedelta(days=7), edge - timedelta(days=1)
    if unit == "month":
        return _calendar_month(_shift_months(edge, -sign * count))
    year = edge.year + sign * count
    return date(year, 1, 1), date(year, 12, 31)


@dataclass
class _Reading:
    """The spans of a question so far, and the bounds "before/after X" set."""

    covered: list[_Span]
    phrases: list[str]
    start_bound: date | None = None
    end_bound: date | None = None
    bounds_yearless: bool = True
    """Every bound's date was written without a year ("since March")."""

    def add(self, text: str, span: _Span) -> None:
        """Count ``span`` as a bound when "before/after ..." leads it, else as covered."""
        lead = text[max(0, span.position - _LEAD_CHARS) : span.position]
        bound = _BOUND.search(lead)
        word = None if bound is None else bound.group("bound").lower()
        if word is not None:
            self.bounds_yearless = self.bounds_yearless and span.yearless
        if word in ("before", "until", "till"):
            edge = span.first
            self.end_bound = edge if self.end_bound is None else min(self.end_bound, edge)
            self.phrases.append(f"{word} {span.phrase}")
        elif word in ("after", "since"):
            edge = span.last + timedelta(days=1) if word == "after" else span.first
            self.start_bound = edge if self.start_bound is None else max(self.start_bound, edge)
            self.phrases.append(f"{word} {span.phrase}")
        else:
            self.covered.append(span)


def query_period(
    text: str, now: datetime, zone: tzinfo, longest: int | None = None
) -> Period | None:
    """The period ``text`` names, read on ``zone``'s calendar at ``now`` (None: none).
    With ``longest``, seasons naming more days than that are left out (a memory's "last
    summer" beside its "yesterday")."""
    text = text[:MAX_CHARS]
    if _ANY.search(text) is None:
        return None
    taken = _Taken(len(text))
    reading = _Reading(covered=[], phrases=[])
    try:
        # A memory's ``at`` may have no day on the user's calendar (9999-12-31T23:30Z is
        # the year 10000 in Berlin): what its text states then names no period.
        today = now.astimezone(zone).date()
        for span in _absolute(text, today, taken, zone):
            lead = text[max(0, span.position - _LEAD_CHARS) : span.position]
            near = _NEAR.search(lead)
            if near is None:
                reading.add(text, span)
                continue
            counted = _counted_from(near, span)
            start = span.position - len(lead) + near.start()
            taken.claim_span(start, span.position)  # "the Sunday" is not a Sunday of its own
            phrase = near.group(0) + span.phrase
            reading.covered.append(_Span(*counted, phrase, start, span.yearless))
        # A relative phrase beside "before X" counts back from X.
        base = today if reading.end_bound is None else reading.end_bound
        absolute = {span.position for span in reading.covered}
        for span in _relative(text, base, taken, zone):
            reading.add(text, span)
        # Days take their season's year before a season too long to keep is left out (any
        # other long phrase stays, and makes the whole reading as long).
        reading.covered = [
            span
            for span in _with_seasons(reading.covered)
            if longest is None or not span.season or (span.last - span.first).days < longest
        ]
        before = sum(1 for span in reading.covered if span.position in absolute)
        relative = len(reading.covered) > before
        period = _period(reading, relative, zone)
        if period is not None and before == 0 and relative and not reading.phrases:
            opens = min(span.position for span in reading.covered)
            period = replace(period, relative=True, opens_at=opens)
        return period
    except (ValueError, OverflowError):
        return None  # a date outside the calendar ("999 years after 2099"): no period


def _period(reading: _Reading, relative: bool, zone: tzinfo) -> Period | None:
    covered = reading.covered
    start_bound, end_bound = reading.start_bound, reading.end_bound
    if not covered and start_bound is None and end_bound is None:
        return None
    first = min((span.first for span in covered), default=None)
    last = max((span.last for span in covered), default=None)
    if start_bound is not None:
        first = start_bound if first is None else max(first, start_bound)
    if end_bound is not None and last is not None and not relative:
        last = min(last, end_bound - timedelta(days=1))
    elif end_bound is not None and last is None:
        last = end_bound - timedelta(days=1)
    if first is not None and last is not None and first > last:
        return None  # "after 2024 in 2023": nothing can be in it
    phrases = [*reading.phrases, *(span.phrase for span in sorted(covered, key=_position))]
    core = None
    named = covered[0].core if len(covered) == 1 and not reading.phrases else None
    if named is not None:
        core = (midnight(named[0], zone), midnight(named[1] + timedelta(days=1), zone))
    return Period(
        start=None if first is None else midnight(first, zone),
        end=None if last is None else midnight(last + timedelta(days=1), zone),
        phrases=tuple(phrases),
        yearless=reading.bounds_yearless and all(span.yearless for span in covered),
        zone=zone,
        core=core,
    )


def _position(span: _Span) -> int:
    return span.position
