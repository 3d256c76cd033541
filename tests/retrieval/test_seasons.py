"""Seasons in a question ("last summer", "in the fall", "spring 2023"), on either side of
the equator, and "the week (weekend, month, year) before last"."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from recalld.retrieval.calendar_period import Period
from recalld.retrieval.period_matching import StatedPeriods, opening_period
from recalld.retrieval.periods import query_period
from recalld.retrieval.seasons import southern
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

LONDON = ZoneInfo("Europe/London")
HOBART = ZoneInfo("Australia/Hobart")
DECEMBER = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)
MARCH = datetime(2026, 3, 15, 10, 0, tzinfo=UTC)
JULY = datetime(2026, 7, 15, 10, 0, tzinfo=UTC)
JANUARY = datetime(2027, 1, 10, 10, 0, tzinfo=UTC)
NOVEMBER = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def _read(text: str, now: datetime, zone: tzinfo) -> tuple[date, date, bool] | None:
    """The first day, the day after the last, and whether the period is yearless."""
    period = query_period(text, now, zone)
    if period is None:
        return None
    assert period.start is not None
    assert period.end is not None
    start, end = (edge.astimezone(zone).date() for edge in (period.start, period.end))
    return start, end, period.yearless


@pytest.mark.parametrize(
    ("text", "now", "first", "after", "yearless"),
    [
        ("What did I do last summer?", DECEMBER, date(2026, 6, 1), date(2026, 9, 1), False),
        ("What did I do last summer?", JULY, date(2025, 6, 1), date(2025, 9, 1), False),
        ("what did we do this past summer", MARCH, date(2025, 6, 1), date(2025, 9, 1), False),
        # Asked in December, the winter under way; last winter is the one before it.
        ("What did I eat last winter?", DECEMBER, date(2025, 12, 1), date(2026, 3, 1), False),
        ("How was this winter?", DECEMBER, date(2026, 12, 1), date(2027, 3, 1), False),
        # "This winter" asked in March: the one just over. "This spring" asked in
        # December: this year's. "This summer" asked in March: the coming one.
        ("How was this winter?", MARCH, date(2025, 12, 1), date(2026, 3, 1), False),
        ("Where did we go this spring?", DECEMBER, date(2026, 3, 1), date(2026, 6, 1), False),
        ("Where will we go this summer?", MARCH, date(2026, 6, 1), date(2026, 9, 1), False),
        ("What are we doing this fall?", JANUARY, date(2027, 9, 1), date(2027, 12, 1), False),
        # Winter straddles two years: the nearer of the last and the next.
        ("Will it snow this winter?", NOVEMBER, date(2026, 12, 1), date(2027, 3, 1), False),
        # Without "last" or "this": the latest that has begun, read as yearless.
        ("What did I do in the fall?", DECEMBER, date(2026, 9, 1), date(2026, 12, 1), True),
        ("What did I do over the summer?", MARCH, date(2025, 6, 1), date(2025, 9, 1), True),
        ("during the winter", JULY, date(2025, 12, 1), date(2026, 3, 1), True),
        # With a year.
        ("What happened the summer of 2022?", DECEMBER, date(2022, 6, 1), date(2022, 9, 1), False),
        ("Where did I travel in summer 2021?", DECEMBER, date(2021, 6, 1), date(2021, 9, 1), False),
        ("in the summer of 2022", JULY, date(2022, 6, 1), date(2022, 9, 1), False),
        ("autumn 2024", MARCH, date(2024, 9, 1), date(2024, 12, 1), False),
        ("Spring of 2023", JULY, date(2023, 3, 1), date(2023, 6, 1), False),
        ("in the summer of last year", DECEMBER, date(2025, 6, 1), date(2025, 9, 1), False),
        ("in the summer, last year", DECEMBER, date(2025, 6, 1), date(2025, 9, 1), False),
        ("this year, in the spring", DECEMBER, date(2026, 3, 1), date(2026, 6, 1), False),
        # Followed by a word of time, a filler or nothing in capitals: still a season.
        (
            "what did we do over the summer holidays?",
            DECEMBER,
            date(2026, 6, 1),
            date(2026, 9, 1),
            True,
        ),
        ("last summer break we went to Rome", DECEMBER, date(2026, 6, 1), date(2026, 9, 1), False),
        ("what did I read last summer lol", DECEMBER, date(2026, 6, 1), date(2026, 9, 1), False),
        ("WHAT DID WE DO LAST SUMMER", DECEMBER, date(2026, 6, 1), date(2026, 9, 1), False),
        ("during the summer last year", DECEMBER, date(2025, 6, 1), date(2025, 9, 1), False),
        ("last year in the summer", DECEMBER, date(2025, 6, 1), date(2025, 9, 1), False),
        # The year another phrase names; a period nested in a season or holding one: the
        # narrower.
        (
            "What did I do in the summer, in 2023?",
            DECEMBER,
            date(2023, 6, 1),
            date(2023, 9, 1),
            False,
        ),
        ("In the summer, on July 4, 2023", DECEMBER, date(2023, 7, 4), date(2023, 7, 5), False),
        (
            "in the fall after the summer of 2023",
            DECEMBER,
            date(2023, 9, 1),
            date(2023, 12, 1),
            False,
        ),
        # A day or month without a year inside a season takes the season's year.
        ("What did we do on July 4 last summer?", JULY, date(2025, 7, 4), date(2025, 7, 5), False),
        ("this winter in February", DECEMBER, date(2027, 2, 1), date(2027, 3, 1), False),
        # Winter straddles two years in the north: "winter 2021" keeps reading as the year.
        ("in winter 2021", DECEMBER, date(2021, 1, 1), date(2022, 1, 1), False),
        (
            "What did we change in the Spring Boot app last week?",
            DECEMBER,
            date(2026, 11, 23),
            date(2026, 11, 30),
            False,
        ),
    ],
)
def test_a_question_names_a_season_north_of_the_equator(
    text: str, now: datetime, first: date, after: date, yearless: bool
) -> None:
    assert _read(text, now, LONDON) == (first, after, yearless)


@pytest.mark.parametrize(
    ("text", "now", "first", "after"),
    [
        # Summer is December to February south of the equator.
        ("What did I do last summer?", DECEMBER, date(2025, 12, 1), date(2026, 3, 1)),
        ("How was this summer?", DECEMBER, date(2026, 12, 1), date(2027, 3, 1)),
        ("What did I eat last winter?", DECEMBER, date(2026, 6, 1), date(2026, 9, 1)),
        ("What did I eat last winter?", JULY, date(2025, 6, 1), date(2025, 9, 1)),
        ("What did I do in the fall?", DECEMBER, date(2026, 3, 1), date(2026, 6, 1)),
        ("winter 2021", DECEMBER, date(2021, 6, 1), date(2021, 9, 1)),
        # Summer straddles two years in the south: the year is read.
        ("the summer of 2022", DECEMBER, date(2022, 1, 1), date(2023, 1, 1)),
    ],
)
def test_a_question_names_a_season_south_of_the_equator(
    text: str, now: datetime, first: date, after: date
) -> None:
    assert _read(text, now, HOBART)[:2] == (first, after)  # type: ignore[index]


@pytest.mark.parametrize(
    ("zone", "south"),
    [
        (HOBART, True),
        (ZoneInfo("Australia/Tasmania"), True),  # an alias, followed to Australia/Hobart
        (ZoneInfo("America/Argentina/Buenos_Aires"), True),
        (ZoneInfo("Pacific/Auckland"), True),
        (LONDON, False),
        (ZoneInfo("America/Los_Angeles"), False),
        (ZoneInfo("UTC"), False),  # no place: north
        (UTC, False),
        (timezone(timedelta(hours=11)), False),  # a fixed offset says nothing of latitude
    ],
)
def test_the_hemisphere_comes_from_the_zones_place(zone: tzinfo, south: bool) -> None:
    assert southern(zone) is south


@pytest.mark.parametrize(
    ("thing", "time"),
    [
        # Each season word that is not a time, beside the same word as one.
        ("I had a fall at the gym", "I went to the gym in the fall"),
        ("What are my summer plans?", "What were my plans last summer?"),
        ("Which hot spring did we visit?", "Which hot pool did we visit this spring?"),
        ("Did we fall in love?", "Did we fall in love last fall?"),
        ("Where are the winter tyres?", "Where were the tyres last winter?"),
        ("spring cleaning checklist", "the checklist of last spring"),
        ("What did I do next summer?", "What did I do last summer?"),
        ("the summer-house key", "the key of the house, last summer"),
        ("What did we change in the Spring config?", "What did we change in the spring?"),
        ("Who won during the Winter Olympics?", "Who won during the winter?"),
        ("Is this spring water safe?", "Was the water safe this spring?"),
        ("Where did this summer dress come from?", "Where did this dress come from this summer?"),
        ("Since my last fall I've been careful", "Since last fall I've been careful"),
        ("Who ate the last spring roll?", "Who ate the roll last spring?"),
        ("What happened in the fall of Rome?", "What happened in Rome in the fall?"),
        ("the summer of love", "the summer of 2021"),
        ("Have I watched I Know What You Did Last Summer?", "What did I watch last summer?"),
        ("last Summer said she would call", "last summer she said she would call"),
    ],
)
def test_a_season_word_that_is_no_time_names_no_period(thing: str, time: str) -> None:
    assert query_period(thing, DECEMBER, LONDON) is None
    assert query_period(time, DECEMBER, LONDON) is not None


@pytest.mark.parametrize(
    ("text", "first", "after"),
    [
        # Saturday 2026-12-05: this week began on Monday 11-30.
        ("What happened the week before last?", date(2026, 11, 16), date(2026, 11, 23)),
        ("the weekend before last", date(2026, 11, 21), date(2026, 11, 23)),
        ("What did I buy the month before last?", date(2026, 10, 1), date(2026, 11, 1)),
        ("the year before last", date(2024, 1, 1), date(2025, 1, 1)),
    ],
)
def test_the_one_before_last(text: str, first: date, after: date) -> None:
    assert _read(text, DECEMBER, UTC) == (first, after, False)


@pytest.mark.parametrize("text", ["the week before last Friday", "the week before last summer"])
def test_the_one_before_a_last_something_counts_from_it(text: str) -> None:
    # A bound before that Friday (summer), not two weeks ago, which "the week before last"
    # alone is.
    alone = query_period("the week before last", DECEMBER, LONDON)
    assert alone is not None
    assert alone.start is not None
    period = query_period(text, DECEMBER, LONDON)
    assert period is not None
    assert period.start is None
    assert period.phrases[0].startswith("before last")


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Went to the market yesterday, like we did over the summer.", date(2026, 12, 4)),
        ("Last summer we went to Paris. Today I framed the photos.", date(2026, 12, 5)),
        ("In the fall I start a new job; yesterday I signed the contract.", date(2026, 12, 4)),
    ],
)
def test_a_season_beside_a_memorys_day_leaves_the_day(text: str, day: date) -> None:
    # A memory's stated period is at most a month: its season is left out, not joined
    # with the day into a period too long to compare.
    stated = StatedPeriods(4).of(text, DECEMBER, LONDON)
    assert stated is not None
    assert stated.start is not None
    assert stated.start.astimezone(LONDON).date() == day
    assert stated.days() == 1
    # Nor does a season opening a memory say it tells of another time than its day.
    assert opening_period(text, DECEMBER, LONDON) is None


def test_a_memorys_day_inside_a_season_takes_its_year() -> None:
    # Written 2026-07-10: "last summer" is 2025's, so July 4 is 2025's too (not the week
    # before the memory); the season itself is too long to be what the memory states.
    written = datetime(2026, 7, 10, 12, tzinfo=UTC)
    stated = StatedPeriods(4).of("On July 4 last summer we watched fireworks", written, LONDON)
    assert stated is not None
    assert stated.start is not None
    assert stated.start.astimezone(LONDON).date() == date(2025, 7, 4)
    assert stated.days() == 1


@pytest.mark.parametrize(
    "text",
    [
        "On June 5 last year we got engaged",
        "last year in June we moved",
        "on Tuesday in 2021 we met",
        "Yesterday a year ago I broke my leg",
    ],
)
def test_a_memory_naming_another_year_states_no_day_of_this_one(text: str) -> None:
    # Only a season is left out of a memory's reading; a year stays, and makes the reading
    # too long to compare (not June 5 of this year).
    written = datetime(2026, 6, 10, 12, tzinfo=UTC)
    assert StatedPeriods(4).of(text, written, LONDON) is None
    season = StatedPeriods(4).of("Went out yesterday, as over the winter", written, LONDON)
    assert season is not None
    assert season.days() == 1


def test_a_winter_goes_back_to_a_leap_february() -> None:
    # February 28, 2025 a year back is February 28, 2024 alone (not the 29th too): only a
    # period of whole months keeps to the month's end.
    day = query_period("on February 28, 2025", DECEMBER, UTC)
    assert day is not None
    assert day.years_back(1).days() == 1
    # "In the winter" asked in July 2025: December 2024 to February 2025; a year earlier
    # it ends with February 29, 2024.
    period = query_period("what did I do in the winter?", datetime(2025, 7, 15, tzinfo=UTC), UTC)
    assert period is not None
    earlier = period.years_back(1)
    assert isinstance(earlier, Period)
    assert earlier.holds(datetime(2024, 2, 29, 12, tzinfo=UTC))
    assert not earlier.holds(datetime(2024, 3, 1, 0, tzinfo=UTC))
    assert earlier.holds(datetime(2023, 12, 1, 0, tzinfo=UTC))


def test_recall_reads_a_season_on_the_users_side_of_the_equator(
    db_path: Path, clock: FakeClock
) -> None:
    # clock: October 2026. In Hobart last summer was December 2025 to February 2026.
    south = MemoryService.open(semantic_settings(db_path, zone="Australia/Hobart"), clock=clock)
    with south:
        beach = south.remember("Swam at Seven Mile Beach", at="2026-01-10T10:00:00+11:00")
        hike = south.remember("Hiked up kunanyi in the snow", at="2025-07-12T10:00:00+10:00")
        skied = south.remember("Skied at Ben Lomond", at="2025-01-20T10:00:00+11:00")
        south.new_worker().run_until_idle()
        question = "What did I do last summer?"
        assert south.explain(question, beach.id).features["in_period"] == 1.0
        assert south.explain(question, hike.id).features["in_period"] == 0.0
    north = MemoryService.open(semantic_settings(db_path, zone="Europe/London"), clock=clock)
    with north:
        # North of the equator last summer was June to August 2026: neither memory.
        assert north.explain(question, beach.id).features["in_period"] == 0.0
        assert north.explain(question, hike.id).features["in_period"] == 0.0
        dated = "What did I do in summer 2025?"
        assert north.explain(dated, hike.id).features["in_period"] == 1.0
        # Summer 2025, not the whole year: January is not in it.
        assert north.explain(dated, skied.id).features["in_period"] == 0.0
