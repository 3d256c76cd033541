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
* "this summer": the one under way, else this calendar year's ("this spring"
  asked in December: the past one; "this summer" asked in March: the coming
  one); for a season straddling two years (winter in the north, summer in the
  south) the nearer of the last and the next ("this winter" asked in March: the
  one just over; asked in November: the coming one);
* "in (during, over) the summer": the year another phrase of the text names ("in
  2023, in the summer"), else the latest that has begun (under way or past),
  marked yearless (recall may read it as the latest its memories hold);
* "summer 2021", "the summer of 2021", "the summer of last year", "last year in
  the summer": that year's, for a season inside one year (a season straddling
  two years with a year keeps reading as the year).

A season word that is not a time names none: alone ("summer plans", "a hot
spring", "I had a fall"), before a noun it qualifies ("this summer dress", "the
last spring roll"), owned ("my last fall"), followed by "of" and no year ("in
the fall of Rome"), or capitalised as a name or a title ("Spring Boot", "the
Winter Olympics", "last Summer said", "I Know What You Did Last Summer").
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
_YEAR = r"(?:(?P<year>(?:19|20)\d\d)(?![\d%]|[-/.,:]\d)|(?P<relative>last|this)\s+year\b)"
_SEASON = re.compile(
    r"\b(?:(?P<which>this\s+past|last|this|past|previous)\s+(?P<named>" + _NAMES + r")"
    r"|(?:in|during|over|through|throughout)\s+the\s+(?P<plain>" + _NAMES + r")"
    r"(?!\s+(?:of\b|(?:19|20)\d\d|(?:last|this)\s+year))"
    r"|(?:the\s+)?(?P<dated>"
    + _NAMES
    + r")\s+(?:of\s+)?"
    + _YEAR
    + r"|(?P<last_year>last|this)\s+year\s+(?:in|during|over)\s+the\s+(?P<yeared>"
    + _NAMES
    + r"))"
    r"(?![\w'\u2019-])",
    re.IGNORECASE,
)
# What may follow a season named without a year: the end of a clause, or a word that
# cannot be a noun it qualifies ("last summer we went", not "this summer dress").
_FOLLOWS = re.compile(
    r"\s*(?:$|[^\w\s]|[A-Z\d]|(?i:i|we|you|he|she|they|it|my|our|your|his|her|their|the|a"
    r"|an|and|or|but|so|then|too|in|on|at|to|with|for|from|by|when|while|after|before|was"
    r"|were|is|are|had|have|has|did|do|went|got|came|again|already|though|tho|just|yet"
    r"|together|there|here|until|till|since|because|like|not|lol|btw|anyway|ok|okay|haha"
    # Nouns of time: "the summer holidays", "last summer break", "in the summer months".
    r"|holiday|holidays|break|vacation|vacations|months|term|semester|season|time)\b)"
)
# Before "last fall" or "this summer", a word that makes it a thing ("my last fall", "the
# last spring roll").
_OWNED = re.compile(r"\b(?:my|your|his|her|our|their|its|the|a|an)\s+$", re.IGNORECASE)


@dataclass(frozen=True)
class SeasonMatch:
    """One season a text names: its days (``last`` inclusive) and where it was read."""

    first: date
    last: date
    phrase: str
    start: int
    end: int
    yearless: bool


def find_seasons(
    text: str, today: date, zone: tzinfo, *, dated: bool, year: int | None = None
) -> Iterator[SeasonMatch]:
    """The seasons ``text`` names with a year ("summer 2021", "the summer of last year":
    ``dated``) or without one ("last summer", "in the fall"), read on ``today`` in
    ``zone``'s hemisphere; "in the fall" takes ``year``, the one the text names elsewhere
    ("in 2023, in the fall"), when given."""
    shift = 6 if southern(zone) else 0
    for match in _SEASON.finditer(text):
        is_dated = match.group("dated") is not None or match.group("yeared") is not None
        if is_dated != dated or (not dated and not _a_time(text, match)):
            continue
        name = next(word for word in match.group("named", "plain", "dated", "yeared") if word)
        name = name.lower()
        first_month = (_FIRST_MONTH[name] + shift - 1) % 12 + 1
        straddles = first_month > 10  # winter north, summer south
        named_year = None
        if is_dated:
            relative = match.group("relative") or match.group("last_year")
            named_year = int(match.group("year")) if relative is None else today.year
            named_year -= relative is not None and relative.lower() == "last"
        elif match.group("plain") is not None:
            named_year = year
        if named_year is not None:
            if straddles:
                continue  # which months of which year? The year alone is read (module doc)
            found, yearless = _occurrence(named_year, first_month), False
        elif match.group("which") is not None:
            which = " ".join(match.group("which").lower().split())
            found = _this(first_month, today) if which == "this" else _last(first_month, today)
            yearless = False
        else:
            found, yearless = _begun(first_month, today), True
        yield SeasonMatch(*found, match.group(0), match.start(), match.end(), yearless)


def _a_time(text: str, match: re.Match[str]) -> bool:
    """Whether a season named without a year is a time, not a thing or a name: not
    followed by a noun it qualifies ("this summer dress"), not owned ("my last fall"),
    not capitalised as a name or a title ("last Summer said", "the Winter Olympics", "I
    Know What You Did Last Summer")."""
    if _FOLLOWS.match(text, match.end()) is None or _OWNED.search(text, 0, match.start()):
        return False
    word = match.group("named") or match.group("plain")
    if word[0].isupper() and not word.isupper():
        return False  # mid-sentence capitals make a name ("Spring Boot", "Winter Olympics")
    opening = match.group(0)[0]
    before = text[: match.start()].rstrip()
    if not any(character.islower() for character in text):
        return True  # all in capitals: capitals say nothing
    return not (opening.isupper() and before and before[-1] not in ".!?:;\"'\u201c(")


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
    """The one under way, else this calendar year's; for a season straddling two years,
    the nearer of the last and the next (the last on a tie)."""
    begun = _begun(first_month, today)
    if begun[1] >= today:
        return begun
    if first_month <= 10:
        return _occurrence(today.year, first_month)
    coming = _occurrence(begun[0].year + 1, first_month)
    return coming if (coming[0] - today) < (today - begun[1]) else begun


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
