"""The seasons a question names: "last summer", "this winter", "in the fall", "spring 2023".

A season is three whole months of the user's calendar (meteorological seasons):
spring March-May, summer June-August, autumn (fall) September-November, winter
December-February, turned by six months south of the equator. The hemisphere is
the sign of the latitude the IANA time zone database gives the zone
(``tzdata``'s ``zone1970.tab`` and ``zone.tab``, aliases followed through its
links): "Australia/Hobart" is south. A zone with no place (UTC, a fixed offset
such as the machine's own when ``RECALLD_ZONE`` is unset) reads as north.

Which one a phrase names, asked on ``today``:

* "last summer", "this past summer": the latest that ended before today;
* "this summer": the one under way, else the last one if it ended this calendar
  year, else the coming one ("this winter" asked in March: the one just over;
  "this spring" asked in December: this year's; "this summer" asked in March:
  the coming one);
* "in (during, over) the summer": the latest that has begun (under way or past),
  marked yearless (recall may read it as the latest its memories hold);
* "summer 2021", "the summer of 2021": that year's, for a season inside one year
  (winter in the north, summer in the south straddle two years: those keep
  reading as the year).

A season word alone ("summer plans", "a hot spring", "I had a fall") names none.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta, tzinfo
from importlib import resources
from zoneinfo import ZoneInfo

__all__ = ["SEASON_WORDS", "SeasonMatch", "find_seasons", "southern"]

# The first month of each season north of the equator.
_FIRST_MONTH = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
SEASON_WORDS = tuple(_FIRST_MONTH)
_NAMES = "|".join(SEASON_WORDS)
_SEASON = re.compile(
    r"\b(?:(?P<which>this\s+past|last|this|past|previous)\s+(?P<named>" + _NAMES + r")"
    r"|(?P<lead>in|during|over|through|throughout)\s+the\s+(?P<plain>" + _NAMES + r")"
    r"(?!\s+(?:of\s+)?(?:19|20)\d\d)"
    r"|(?:the\s+)?(?P<dated>" + _NAMES + r")\s+(?:of\s+)?"
    r"(?P<year>(?:19|20)\d\d)(?![\d%]|[-/.,:]\d))"
    r"(?![\w'\u2019-])",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class SeasonMatch:
    """One season a text names: its days (``last`` inclusive) and where it was read."""

    first: date
    last: date
    phrase: str
    start: int
    end: int
    yearless: bool


def find_seasons(text: str, today: date, zone: tzinfo, *, dated: bool) -> Iterator[SeasonMatch]:
    """The seasons ``text`` names with a year ("summer 2021": ``dated``) or without one
    ("last summer"), read on ``today`` in ``zone``'s hemisphere."""
    shift = 6 if southern(zone) else 0
    for match in _SEASON.finditer(text):
        if (match.group("year") is not None) != dated:
            continue
        name = (match.group("named") or match.group("plain") or match.group("dated")).lower()
        first_month = (_FIRST_MONTH[name] + shift - 1) % 12 + 1
        year_text = match.group("year")
        if year_text is not None:
            if first_month > 10:
                continue  # it straddles two years: the year alone is read (see module doc)
            found = _occurrence(int(year_text), first_month)
            yearless = False
        elif match.group("which") is not None:
            which = " ".join(match.group("which").lower().split())
            found = _this(first_month, today) if which == "this" else _last(first_month, today)
            yearless = False
        else:
            found = _begun(first_month, today)
            yearless = True
        yield SeasonMatch(*found, match.group(0), match.start(), match.end(), yearless)


def _occurrence(year: int, first_month: int) -> tuple[date, date]:
    """The season of three months beginning with ``first_month`` of ``year``."""
    first = date(year, first_month, 1)
    index = year * 12 + first_month - 1 + 3
    return first, date(index // 12, index % 12 + 1, 1) - timedelta(days=1)


def _begun(first_month: int, today: date) -> tuple[date, date]:
    """The latest that has begun by ``today`` (under way or past)."""
    year = today.year if today.month >= first_month else today.year - 1
    return _occurrence(year, first_month)


def _last(first_month: int, today: date) -> tuple[date, date]:
    """The latest that ended before ``today``."""
    found = _begun(first_month, today)
    if found[1] >= today:  # under way: the one before
        found = _occurrence(found[0].year - 1, first_month)
    return found


def _this(first_month: int, today: date) -> tuple[date, date]:
    """The one under way, else the last if it ended this calendar year, else the next."""
    begun = _begun(first_month, today)
    if begun[1] >= today or begun[1].year == today.year:
        return begun
    return _occurrence(begun[0].year + 1, first_month)


def southern(zone: tzinfo) -> bool:
    """Whether ``zone`` lies south of the equator (False for a zone with no place)."""
    key = zone.key if isinstance(zone, ZoneInfo) else None
    if not key:
        return False
    latitude = _latitudes().get(key)
    if latitude is None:
        latitude = _latitudes().get(_links().get(key, ""), 0.0)
    return latitude < 0


@functools.cache
def _latitudes() -> dict[str, float]:
    """The sign-bearing latitude (degrees) of every zone the database places."""
    found: dict[str, float] = {}
    folder = resources.files("tzdata").joinpath("zoneinfo")
    for name in ("zone.tab", "zone1970.tab"):
        for line in folder.joinpath(name).read_text(encoding="utf-8").splitlines():
            fields = line.split("\t")
            if line.startswith("#") or len(fields) < 3:
                continue
            found[fields[2]] = _latitude(fields[1])
    return found


def _latitude(coordinates: str) -> float:
    """The latitude of ISO 6709 ``coordinates`` (``-4253+14719``: 42°53' S)."""
    match = re.match(r"([+-])(\d\d)(\d\d)(\d\d)?", coordinates)
    if match is None:
        return 0.0
    sign, degrees, minutes, seconds = match.groups()
    value = int(degrees) + int(minutes) / 60 + int(seconds or 0) / 3600
    return -value if sign == "-" else value


@functools.cache
def _links() -> dict[str, str]:
    """Each alias of the database ("Australia/Tasmania") and the zone it names."""
    text = resources.files("tzdata").joinpath("zoneinfo", "tzdata.zi").read_text(encoding="utf-8")
    links: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("L "):
            _, target, alias = line.split()[:3]
            links[alias] = target
    return links
