"""The period a question names, and recall comparing it with each memory's ``at``."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from recalld.model import Filters
from recalld.retrieval.period_matching import (
    StatedPeriods,
    asks_only_about,
    names_a_short_date,
    opening_period,
    telling_words,
)
from recalld.retrieval.periods import MAX_CHARS, query_period
from recalld.retrieval.pool import PERIOD_ONLY_SCORE
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

# A Friday evening.
NOW = datetime(2026, 12, 4, 22, 0, tzinfo=UTC)


def _days(text: str, now: datetime = NOW, zone: timezone = UTC) -> tuple[date | None, ...]:
    """The period's first day and the day after its last (on ``zone``'s calendar)."""
    period = query_period(text, now, zone)
    assert period is not None, text
    return tuple(
        None if edge is None else edge.astimezone(zone).date()
        for edge in (period.start, period.end)
    )


@pytest.mark.parametrize(
    ("text", "first", "after_last"),
    [
        ("What did I do last weekend?", date(2026, 11, 28), date(2026, 11, 30)),
        ("what did I eat yesterday", date(2026, 12, 3), date(2026, 12, 4)),
        ("anything from today?", date(2026, 12, 4), date(2026, 12, 5)),
        ("What did I buy two weeks ago?", date(2026, 11, 16), date(2026, 11, 23)),
        ("What did I do two weekends ago?", date(2026, 11, 21), date(2026, 11, 23)),
        ("a hike one weekend ago", date(2026, 11, 28), date(2026, 11, 30)),
        ("What did I note in the last 3 days?", date(2026, 12, 1), date(2026, 12, 5)),
        ("What did I do last Friday?", date(2026, 11, 27), date(2026, 11, 28)),
        ("notes from last month", date(2026, 11, 1), date(2026, 12, 1)),
        ("what happened on 2026-11-28", date(2026, 11, 28), date(2026, 11, 29)),
        ("What did Caroline show on October 13, 2023?", date(2023, 10, 13), date(2023, 10, 14)),
        ("What did Gina find on 1 February, 2023?", date(2023, 2, 1), date(2023, 2, 2)),
        ("the 3rd of March", date(2026, 3, 3), date(2026, 3, 4)),
        ("What did John attend in June 2023?", date(2023, 6, 1), date(2023, 7, 1)),
        ("How often did she go to the beach in 2023?", date(2023, 1, 1), date(2024, 1, 1)),
        # A month without a year is the latest one not after today.
        ("When did Melanie go camping in June?", date(2026, 6, 1), date(2026, 7, 1)),
        ("a trip in December", date(2026, 12, 1), date(2027, 1, 1)),
        # A relative phrase beside "before X" counts back from X (a Monday).
        (
            "What did Maria do last weekend before April 10, 2023?",
            date(2023, 4, 8),
            date(2023, 4, 10),
        ),
        ("what did I write before June", None, date(2026, 6, 1)),
        # Counted from a date.
        ("What did John do the week before August 3, 2023?", date(2023, 7, 27), date(2023, 8, 3)),
        ("the Sunday before October 25, 2022", date(2022, 10, 23), date(2022, 10, 24)),
        ("the weekend before October 25, 2022", date(2022, 10, 22), date(2022, 10, 24)),
        ("two weeks before August 11, 2023", date(2023, 7, 25), date(2023, 8, 1)),
        ("the day after May 3, 2023", date(2023, 5, 4), date(2023, 5, 5)),
        # A date without a year takes the year another date of the question names.
        (
            "Where was John between August 11 and August 15 2023?",
            date(2023, 8, 11),
            date(2023, 8, 16),
        ),
        ("a forest picture shared on December 1,2023", date(2023, 12, 1), date(2023, 12, 2)),
        ("What did I do in May?", date(2026, 5, 1), date(2026, 6, 1)),
        ("this past December", date(2025, 12, 1), date(2026, 1, 1)),  # asked in December
        ("June of last year", date(2025, 6, 1), date(2025, 7, 1)),
        ("June 1-5", date(2026, 6, 1), date(2026, 6, 6)),
        ("from 2021 to 2023", date(2021, 1, 1), date(2024, 1, 1)),
        ("the week of June 2", date(2026, 6, 1), date(2026, 6, 8)),
        ("what did I do over the weekend?", date(2026, 11, 28), date(2026, 11, 30)),
        ("what did I do Tuesday?", date(2026, 12, 1), date(2026, 12, 2)),
        ("a few days ago", date(2026, 11, 30), date(2026, 12, 3)),
        # A rolling window: the last seven days, not last calendar week.
        ("anything in the last week?", date(2026, 11, 27), date(2026, 12, 5)),
        ("since last week", date(2026, 11, 23), None),
        ("anything since March 2024?", date(2024, 3, 1), None),
    ],
)
def test_a_question_names_its_period(
    text: str, first: date | None, after_last: date | None
) -> None:
    assert _days(text) == (first, after_last)


@pytest.mark.parametrize(
    "text",
    [
        "favourite football team",
        "May I ask what you ate?",  # the verb, not the month
        "What did I do recently?",  # vague: no period
        "the march on the capital",
        "I scheduled 2 separate meetings",  # "2 sep" is not September 2nd
        "Do you think 2 may be enough?",
        "what did April say about the budget?",  # a name
        "Is June my sister?",
        "I sat on Sunday's paper",
        "Tell me about my 2019 Honda",  # a number, not a year
        "what will I do next Tuesday?",  # to come
        "every Monday I go to the gym",  # a habit
        "half a year ago",  # not "a year ago"
        "what did I buy on Cyber Monday?",  # a sale, a feast, a show: not last Monday
        "Easter Sunday lunch with mom",
        "the Super Bowl Sunday party",
        "we watched Saturday Night Live",
        "a Friday the 13th movie",
        "Team retro: decided to drop the Friday deploys",  # a kind of day, not a day
        "we had a Sunday roast",
        "What's planned for the upcoming Friday?",
        "The forthcoming Friday release needs QA",
        "She said 'every Monday at 6' works",  # an opening quote is no letter of a word
        "",
        "???",
    ],
)
def test_a_question_without_a_period(text: str) -> None:
    assert query_period(text, NOW, UTC) is None


@pytest.mark.parametrize(
    "text",
    [
        "Met Priya Thursday for lunch",  # "a" ends a name: no article
        "What did I discuss with Megan Thursday?",
        "Went to the opera Thursday",
        "We met up on the Thursday.",  # "on the Thursday": that Thursday
    ],
)
def test_a_weekday_after_a_word_ending_like_an_article_is_a_day(text: str) -> None:
    assert _days(text) == (date(2026, 12, 3), date(2026, 12, 4))


@pytest.mark.parametrize(
    ("text", "relative"),
    [
        ("yesterday", True),
        ("last week I quit", True),
        ("on Monday", True),
        ("booked flights for March 3", False),  # a date: maybe another event's
        ("May 5", False),
        ("yesterday, May 5", False),
        ("since last week", False),  # a bound
    ],
)
def test_a_period_says_whether_it_was_named_relative_to_its_reading(
    text: str, relative: bool
) -> None:
    period = query_period(text, NOW, UTC)
    assert period is not None
    assert period.relative is relative


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Yesterday: went for a run", date(2026, 12, 3)),
        ("  yesterday I ran", date(2026, 12, 3)),
        ("The day before yesterday we hiked", date(2026, 12, 2)),
        ("On Monday we went hiking", date(2026, 11, 30)),
        # A time named further on is a passing mention.
        ("Finished the report I started last week", None),
        ("Called mom about yesterday's storm", None),
        ("Yesterday's meeting notes: finally sent them out", None),  # a thing of yesterday
        ("Last week's report is finally done", None),
        ("Last night Sam's band played", date(2026, 12, 3)),
        ("Ran 10k, a minute faster than last Saturday", None),
        ("Booked flights for March 3", None),  # a date, not a time relative to writing
    ],
)
def test_a_memory_may_open_by_naming_the_time_it_tells_of(text: str, day: date | None) -> None:
    opening = opening_period(text, NOW, UTC)
    if day is None:
        assert opening is None
    else:
        assert opening is not None
        assert opening.start == datetime.combine(day, datetime.min.time(), UTC)


def test_the_words_a_memory_tells_of_a_period_by() -> None:
    weekend = query_period("last weekend", NOW, UTC)  # November 28-29
    assert weekend is not None
    words = telling_words(weekend)
    assert {"yesterday", "ago", "last", "weekend", "saturday", "sunday"} <= set(words)
    assert not any(word.isdigit() for word in words)
    assert "november" in words
    month = query_period("last month", NOW, UTC)  # November: its name, not its 30 days
    assert month is not None
    assert "november" in telling_words(month)
    assert "monday" not in telling_words(month)
    assert "15" not in telling_words(month)


def test_a_period_counts_whole_days_of_its_calendar() -> None:
    # "the past month" asked on 2026-11-03 in New York spans the end of daylight saving
    # time (an hour more), yet covers 32 days as it does in UTC.
    zone = ZoneInfo("America/New_York")
    asked = datetime(2026, 11, 3, 17, 0, tzinfo=UTC)
    question = "what did I do in the past month?"
    for calendar in (zone, UTC):
        period = query_period(question, asked, calendar)
        assert period is not None
        assert period.days() == 32
        assert asks_only_about(question, period)
    open_ended = query_period("since March", asked, UTC)
    assert open_ended is not None
    assert open_ended.days() is None


def test_a_period_ending_on_february_29_goes_back_to_march_1() -> None:
    period = query_period("What did I do on February 28?", datetime(2028, 3, 5, tzinfo=UTC), UTC)
    assert period is not None
    earlier = period.years_back(1)
    assert (earlier.start, earlier.end) == (
        datetime(2027, 2, 28, tzinfo=UTC),
        datetime(2027, 3, 1, tzinfo=UTC),
    )


def test_n_days_ago_names_its_day_within_a_looser_reading() -> None:
    period = query_period("what did I do two days ago?", NOW, UTC)
    assert period is not None
    assert period.core == (datetime(2026, 12, 2, tzinfo=UTC), datetime(2026, 12, 3, tzinfo=UTC))
    exact = period.exact()
    assert (exact.start, exact.end) == period.core
    assert exact.core is None
    # "Last night" reaches into this morning, and names the evening before.
    night = query_period("what did I do last night?", NOW, UTC)
    assert night is not None
    assert night.core == (datetime(2026, 12, 3, tzinfo=UTC), datetime(2026, 12, 4, tzinfo=UTC))
    # Vague counts name no one day.
    vague = query_period("a  few days ago", NOW, UTC)
    assert vague is not None
    assert vague.core is None
    assert vague.exact() is vague


def test_a_period_is_read_on_the_users_calendar() -> None:
    # 22:00 UTC on Friday is already Saturday in Tokyo: "yesterday" is Friday there.
    tokyo = timezone(timedelta(hours=9))
    period = query_period("what did I do yesterday", NOW, tokyo)
    assert period is not None
    assert period.start == datetime(2026, 12, 4, 0, 0, tzinfo=tokyo)
    assert _days("what did I do yesterday") == (date(2026, 12, 3), date(2026, 12, 4))


@pytest.mark.parametrize(
    "text", ["9999-12-31", "0000-05", "since 0000-05", "999 years ago", "the year after 2099"]
)
def test_a_date_off_the_calendar_is_no_error(text: str) -> None:
    period = query_period(text, NOW, UTC)
    assert period is None or period.start is None or period.start.year >= 1000


def test_a_long_text_is_read_in_bounded_time() -> None:
    # Only the first MAX_CHARS characters count: a pasted log is not a question.
    assert query_period("x " * MAX_CHARS + "yesterday", NOW, UTC) is None
    assert query_period("June 5 " * 10_000, NOW, UTC) is not None


def test_an_impossible_date_names_no_period() -> None:
    # Not February, not 2023 alone: the phrase is one date, and there is no such day.
    assert query_period("what happened on February 30, 2023?", NOW, UTC) is None


@pytest.mark.parametrize(
    ("text", "yearless"),
    [
        ("what did I do in June?", True),
        ("on May 5", True),
        ("June 2023", False),
        ("between August 11 and August 15 2023", False),  # the question names the year
        ("last June", False),  # says which June
        ("last weekend", False),
        ("in June, after the wedding last weekend", False),
        ("before June", True),  # a bound counts too: "since March" of a 2023 conversation
        ("before June 2023", False),
        ("the week before August 3", True),
        ("the week before August 3, 2023", False),
    ],
)
def test_a_period_named_without_a_year_says_so(text: str, yearless: bool) -> None:
    period = query_period(text, NOW, UTC)
    assert period is not None
    assert period.yearless is yearless


def test_a_period_goes_back_whole_years() -> None:
    period = query_period("what did I do on February 29?", datetime(2029, 3, 1, tzinfo=UTC), UTC)
    assert period is not None
    assert period.start == datetime(2028, 2, 29, tzinfo=UTC)
    earlier = period.years_back(1)
    assert earlier.start == datetime(2027, 2, 28, tzinfo=UTC)
    assert earlier.end == datetime(2027, 3, 1, tzinfo=UTC)
    assert earlier.yearless


def test_a_memory_written_soon_after_the_period_tells_of_it() -> None:
    period = query_period("what did I do last weekend?", NOW, UTC)
    assert period is not None
    monday = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)
    assert period.told_after(monday) == 1.0
    assert period.told_after(monday + timedelta(days=3, hours=12)) == 0.5
    assert period.told_after(monday + timedelta(days=8)) == 0.0
    assert period.told_after(monday - timedelta(hours=1)) == 0.0  # inside: in_period says so
    # A month is no weekend: the first days of July say little about June.
    june = query_period("what did I do in June?", NOW, UTC)
    assert june is not None
    assert june.told_after(datetime(2026, 7, 1, 12, tzinfo=UTC)) == 0.0
    # An open period ("before June") has no end to be told after.
    before = query_period("what did I write before June", NOW, UTC)
    assert before is not None
    assert before.told_after(datetime(2026, 6, 2, tzinfo=UTC)) == 0.0


def test_periods_overlap() -> None:
    weekend = query_period("what did I do last weekend?", NOW, UTC)
    sunday = query_period("on 2026-11-29", NOW, UTC)
    monday = query_period("on 2026-11-30", NOW, UTC)
    before = query_period("before 2026-11-29", NOW, UTC)
    assert weekend is not None
    assert sunday is not None
    assert monday is not None
    assert before is not None
    assert weekend.overlaps(sunday)
    assert sunday.overlaps(weekend)
    assert not weekend.overlaps(monday)
    assert not monday.overlaps(weekend)
    assert before.overlaps(weekend)
    assert not before.overlaps(monday)
    # A memory is read for a past time it states: written in the period or a month after.
    saturday = datetime(2026, 11, 28, 9, tzinfo=UTC)
    assert weekend.may_be_stated_at(saturday)
    assert not weekend.may_be_stated_at(saturday - timedelta(days=1))
    assert weekend.may_be_stated_at(saturday + timedelta(days=30))
    assert not weekend.may_be_stated_at(saturday + timedelta(days=40))


def test_a_memory_states_its_period_as_of_its_own_time() -> None:
    stated = StatedPeriods(size=2)
    at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    told = stated.of("Caroline: I went to a LGBTQ support group yesterday", at, UTC)
    assert told is not None
    assert (told.start, told.end) == (
        datetime(2023, 5, 7, tzinfo=UTC),
        datetime(2023, 5, 8, tzinfo=UTC),
    )
    assert stated.of("Last week we went camping", at, UTC) is not None
    # No time, an open bound, a whole year: nothing a day or a week can be compared with.
    assert stated.of("I love pottery", at, UTC) is None
    assert stated.of("I have lived here since 2019", at, UTC) is None
    assert stated.of("It was a good year, 2022", at, UTC) is None
    assert stated.of("We moved in 2022", at, UTC) is None
    # Read again once evicted (size 2), the same answer.
    again = stated.of("Caroline: I went to a LGBTQ support group yesterday", at, UTC)
    assert again == told
    # "The past month" and a month across a DST change are a month, not more.
    assert stated.of("I ran a lot in the past month", at, UTC) is not None
    berlin = ZoneInfo("Europe/Berlin")
    assert stated.of("In October we moved", datetime(2026, 11, 5, tzinfo=UTC), berlin) is not None


@pytest.mark.parametrize(
    "text",
    [
        "I'll fly to Lisbon on Friday",
        "See you Saturday for the bike ride!",
        "This weekend I'm going camping",
        "We will meet on Sunday",
        "Next Friday is the deadline",
    ],
)
def test_a_memory_about_the_future_states_no_past_period(text: str) -> None:
    monday = datetime(2026, 11, 30, 10, tzinfo=UTC)
    assert StatedPeriods(size=8).of(text, monday, UTC) is None


def test_only_the_past_sentences_of_a_memory_are_read() -> None:
    monday = datetime(2026, 11, 30, 10, tzinfo=UTC)
    told = StatedPeriods(size=8).of(
        "Yesterday I fixed the bike. I'll ride it on Friday.", monday, UTC
    )
    assert told is not None
    assert told.start == datetime(2026, 11, 29, tzinfo=UTC)
    assert told.end == datetime(2026, 11, 30, tzinfo=UTC)


def test_a_date_with_a_short_month_is_worth_reading() -> None:
    assert names_a_short_date("On Oct 13 I ran the 10K")
    assert names_a_short_date("ran it on 5 May")
    assert not names_a_short_date("I love pottery and 3 cats")


def test_a_reading_used_again_is_kept_longest() -> None:
    stated = StatedPeriods(size=2)
    at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    first = stated.of("yesterday we hiked", at, UTC)
    assert first is not None
    stated.of("last week we swam", at, UTC)
    assert stated.of("yesterday we hiked", at, UTC) is first  # used again: now the newest
    stated.of("two days ago we ran", at, UTC)  # evicts "last week", not "yesterday"
    assert stated.of("yesterday we hiked", at, UTC) is first


# -- recall ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "only"),
    [
        ("What did I do yesterday?", True),
        ("what happened last week", True),
        ("Summarize my day yesterday", True),
        ("What have I been up to last month?", True),
        ("What've I been doing on Tuesday?", True),
        ("anything new this week?", True),
        ("tell me about yesterday", True),
        ("what did we talk about on Monday?", True),  # a conversation's day
        ("What did we discuss last week?", True),
        ("What did Sam say on Monday?", False),
        ("did I go anywhere two days ago?", True),
        ("what happened on the 3rd of November?", True),
        ("What did I eat yesterday?", False),  # what was eaten, not everything
        ("What did Sam do yesterday?", False),
        ("what did she do yesterday?", False),  # someone else
        ("who was there yesterday?", False),
        ("Where was I yesterday?", False),  # a place
        ("When did I go to the gym last week?", False),
        ("Which bills did I pay in October?", False),
        # Too much to answer by listing: open, or longer than a month.
        ("What have I been up to since March?", False),
        ("what happened this year?", False),
        ("What did I do before yesterday?", False),
        ("what did I do yesterday?" + " " * MAX_CHARS + "about the contract", False),
    ],
)
def test_a_question_may_ask_only_what_happened_in_its_period(text: str, only: bool) -> None:
    period = query_period(text, NOW, UTC)
    assert period is not None, text
    assert asks_only_about(text, period) is only


# clock fixture: Sunday 2026-10-25 16:20 UTC, so "last weekend" is October 17-18.
WEEKEND = datetime(2026, 10, 17, 11, 0, tzinfo=UTC)


def _store(db_path: Path, clock: FakeClock, **settings: object) -> tuple[MemoryService, str]:
    service = MemoryService.open(semantic_settings(db_path, **settings), clock=clock)
    older = [
        {"content": f"Bought groceries and paid the bills, week {number}", "at": at.isoformat()}
        for number, at in enumerate(
            WEEKEND - timedelta(days=10 + 3 * number) for number in range(12)
        )
    ]
    service.remember_many(older)
    hiked = service.remember("Hiked Mount Tamalpais with Sam", at=WEEKEND.isoformat())
    service.new_worker().run_until_idle()
    return service, hiked.id


def test_recall_compares_the_questions_period_with_each_memorys_at(
    db_path: Path, clock: FakeClock
) -> None:
    # One vector candidate only: the hike (no word in common with the question) joins
    # the pool through the period's own nearest memories.
    service, hiked = _store(db_path, clock, vector_candidates=1)
    with service:
        question = "What did I do last weekend?"
        explained = service.explain(question, hiked)
        assert explained.stage != "not_in_pool"
        assert explained.features["in_period"] == 1.0
        assert explained.features["told_after"] == 0.0
        # The hike is the only candidate inside the period: ln(1).
        assert explained.features["period_crowd"] == 0.0
        hits = service.recall(question, limit=20, min_score=0)
        period = {hit.memory.content: hit.channels.get("period") for hit in hits}
        assert period["Hiked Mount Tamalpais with Sam"] == 1.0
        assert all(
            value == 0.0 for content, value in period.items() if content.startswith("Bought")
        )
        # A question naming no period has no such feature, and no period channel.
        plain = service.explain("What did I do with Sam?", hiked)
        assert "in_period" not in plain.features
        assert "told_after" not in plain.features
        assert "period_crowd" not in plain.features
        assert all("period" not in hit.channels for hit in service.recall("Sam", min_score=0))


def test_the_periods_search_keeps_the_callers_filters(db_path: Path, clock: FakeClock) -> None:
    service, hiked = _store(db_path, clock, vector_candidates=1)
    with service:
        # A time filter that ends before the weekend: the period adds nothing beyond it.
        until = (WEEKEND - timedelta(days=5)).isoformat()
        hits = service.recall(
            "What did I do last weekend?", limit=20, min_score=0, filters=Filters(until=until)
        )
        assert all(hit.memory.id != hiked for hit in hits)
        explained = service.explain(
            "What did I do last weekend?", hiked, filters=Filters(until=until)
        )
        assert explained.stage == "excluded"


def test_the_period_follows_the_configured_zone(db_path: Path, clock: FakeClock) -> None:
    # Saturday 2026-10-24 20:00 in Los Angeles is Sunday 03:00 UTC: "yesterday" asked on
    # Sunday 09:20 there (16:20 UTC) is that Saturday only on the user's calendar.
    service = MemoryService.open(
        semantic_settings(db_path, zone="America/Los_Angeles"), clock=clock
    )
    with service:
        late = service.remember("Dinner at the taqueria", at="2026-10-24T20:00:00-07:00")
        service.new_worker().run_until_idle()
        explained = service.explain("what did I eat yesterday", late.id)
        assert explained.features["in_period"] == 1.0
    utc = MemoryService.open(semantic_settings(db_path, zone="UTC"), clock=clock)
    with utc:
        assert utc.explain("what did I eat yesterday", late.id).features["in_period"] == 0.0


def test_a_long_period_only_ranks(db_path: Path, clock: FakeClock) -> None:
    # A year may hold most of a store: its memories are not searched of their own (that
    # would scan most rows), the in_period feature still tells them apart.
    service, hiked = _store(db_path, clock, vector_candidates=1)
    with service:
        explained = service.explain("Which bills did I pay in 2026?", hiked)
        assert explained.stage == "not_in_pool"
        assert explained.features["in_period"] == 1.0
        assert "period" not in explained.reason  # no search of the year ran
        assert service.explain("Which bills did I pay in October?", hiked).stage != "not_in_pool"


def test_a_month_without_a_year_is_the_latest_one_the_memories_hold(
    db_path: Path, clock: FakeClock
) -> None:
    # clock: October 2026. A conversation held in 2023, asked about "June" now: June 2023.
    service = MemoryService.open(semantic_settings(db_path), clock=clock)
    with service:
        camping = service.remember("Went camping by the lake", at="2023-06-20T10:00:00Z")
        concert = service.remember("Saw a concert downtown", at="2023-08-02T10:00:00Z")
        service.new_worker().run_until_idle()
        assert service.explain("Where did I go in June?", camping.id).features["in_period"] == 1.0
        assert service.explain("Where did I go in June?", concert.id).features["in_period"] == 0.0
        # Once a later June holds a memory, "June" is that one.
        later = service.remember("Painted the fence", at="2026-06-03T10:00:00Z")
        service.new_worker().run_until_idle()
        assert service.explain("What did I do in June?", later.id).features["in_period"] == 1.0
        assert service.explain("What did I do in June?", camping.id).features["in_period"] == 0.0
        # The year is picked by the namespace's memories; the caller's filters still pick
        # the memories (a tag no memory holds does not send "June" further back).
        tagged = service.explain(
            "What did I do in June?", later.id, filters=Filters(tags_any=["nowhere"])
        )
        assert tagged.stage == "excluded"
        assert tagged.features["in_period"] == 1.0
        # A year the question names is kept, memories or not.
        assert (
            service.explain("Where did I go in June 2025?", camping.id).features["in_period"] == 0.0
        )


def test_a_crowded_period_says_how_crowded(db_path: Path, clock: FakeClock) -> None:
    service, hiked = _store(db_path, clock)
    with service:
        service.remember("Baked bread on Sunday", at=(WEEKEND + timedelta(days=1)).isoformat())
        service.new_worker().run_until_idle()
        inside = service.explain("What did I do last weekend?", hiked)
        assert inside.features["period_crowd"] == pytest.approx(math.log(2))
        hits = service.recall("What did I do last weekend?", limit=20, min_score=0)
        outside = next(hit for hit in hits if hit.memory.content.startswith("Bought"))
        explained = service.explain("What did I do last weekend?", outside.memory.id)
        assert explained.features["period_crowd"] == 0.0


def test_a_memory_written_after_the_period_is_one_of_its_crowd(
    db_path: Path, clock: FakeClock
) -> None:
    service, hiked = _store(db_path, clock)
    with service:
        # Monday 11:00 after the weekend: told_after 1 - 11 h / 7 days.
        monday = WEEKEND + timedelta(days=2)
        told = service.remember("Unpacked the car", at=monday.isoformat())
        service.new_worker().run_until_idle()
        share = 1 - 11 / (7 * 24)
        question = "What did I do last weekend?"
        inside = service.explain(question, hiked)
        assert inside.features["near_period"] == 1.0
        assert inside.features["period_crowd"] == pytest.approx(math.log(1 + share))
        after = service.explain(question, told.id)
        assert after.features["in_period"] == 0.0
        assert after.features["told_after"] == pytest.approx(share)
        # Never nearer than a memory written inside the period.
        assert after.features["near_period"] == pytest.approx(share)
        assert after.features["period_crowd"] == pytest.approx(share * math.log(1 + share))


def _monday_notes(service: MemoryService) -> tuple[str, str]:
    """Two notes of the Monday after the weekend: one stating the weekend, one not."""
    monday = (WEEKEND + timedelta(days=2)).isoformat()
    stated = service.remember("Yesterday I fixed the brakes of my bike", at=monday)
    unstated = service.remember("Fixed the kitchen tap", at=monday)
    service.new_worker().run_until_idle()
    return stated.id, unstated.id


def test_a_memory_that_states_a_time_inside_the_period(db_path: Path, clock: FakeClock) -> None:
    service, hiked = _store(db_path, clock)
    with service:
        stated, unstated = _monday_notes(service)
        question = "What did I do last weekend?"
        assert service.explain(question, stated).features["stated_in_period"] == 1.0
        assert service.explain(question, unstated).features["stated_in_period"] == 0.0
        assert service.explain(question, hiked).features["stated_in_period"] == 0.0
        # "Yesterday" of a memory written on the Tuesday is the Monday: outside.
        tuesday = (WEEKEND + timedelta(days=3)).isoformat()
        later = service.remember("Yesterday I repainted the shed", at=tuesday)
        service.new_worker().run_until_idle()
        assert service.explain(question, later.id).features["stated_in_period"] == 0.0
        # A question that names no period has no such feature.
        assert "stated_in_period" not in service.explain("brakes", stated).features


def test_a_question_about_a_period_alone_finds_the_periods_memories(
    db_path: Path, clock: FakeClock
) -> None:
    service, hiked = _store(db_path, clock)
    with service:
        stated, unstated = _monday_notes(service)
        question = "What did I do last weekend?"
        hits = {hit.memory.id: hit for hit in service.recall(question, limit=20)}
        # Whatever they tell, the weekend's memories (written then, or stating it) answer
        # the question, above the default threshold and above every other memory.
        for belongs in (hiked, stated):
            assert hits[belongs].score >= PERIOD_ONLY_SCORE
            assert hits[belongs].channels["period_only"] == 1.0
        others = [hit for key, hit in hits.items() if key not in (hiked, stated)]
        assert all(hit.score < PERIOD_ONLY_SCORE for hit in others)
        assert all(hit.channels["period_only"] == 0.0 for hit in others)
        # Half of a score is belonging to the period, half the reranker's probability.
        explained = service.explain(question, unstated)
        assert explained.score < PERIOD_ONLY_SCORE
        # A question that asks something of the period is the reranker's alone.
        eaten = service.explain("What did I eat last weekend?", hiked)
        assert eaten.score < PERIOD_ONLY_SCORE
        assert "period_only" not in eaten.channels
        # A period that holds no memory lifts nothing ("yesterday" is Saturday the 24th;
        # the memory saying "yesterday" was written on the 19th).
        empty = service.recall("What did I do yesterday?", min_score=0, limit=20)
        assert empty
        assert all(hit.score < PERIOD_ONLY_SCORE for hit in empty)
        assert all(hit.channels["period_only"] == 0.0 for hit in empty)


def test_only_what_a_period_names_belongs_to_it(db_path: Path, clock: FakeClock) -> None:
    # clock: Sunday 2026-10-25. "two days ago" is read Thursday to Saturday; only Friday
    # the 23rd's memories, and those stating a time inside that day, belong to it.
    service = MemoryService.open(semantic_settings(db_path), clock=clock)
    with service:
        friday = service.remember("Repaired the fence", at="2026-10-23T10:00:00Z")
        thursday = service.remember("Baked a cake", at="2026-10-22T10:00:00Z")
        told = service.remember("Yesterday I ran 10k", at="2026-10-24T09:00:00Z")
        counted = service.remember("2 days ago I painted the door", at="2026-10-25T08:00:00Z")
        night = service.remember("Last night I watched Dune", at="2026-10-24T08:00:00Z")
        week = service.remember("This week has been exhausting", at="2026-10-24T09:00:00Z")
        asked = service.remember(
            "What did I do two days ago? I honestly cannot remember", at="2026-09-01T10:00:00Z"
        )
        service.new_worker().run_until_idle()
        question = "What did I do two days ago?"
        scores = {
            memory: service.explain(question, memory)
            for memory in (friday.id, thursday.id, told.id, counted.id, night.id, week.id, asked.id)
        }
        # Written that day, or stating it: "yesterday" the day after, "2 days ago" (read
        # loosely too) on the Sunday, "last night" (reaching into the Saturday morning).
        for member in (friday.id, told.id, counted.id, night.id):
            assert scores[member].channels["period_only"] == 1.0
            assert scores[member].score >= PERIOD_ONLY_SCORE
        # Inside the looser reading, not on the day itself; a week that only overlaps it;
        # a memory that repeats the question word for word, a month before.
        for other in (thursday.id, week.id, asked.id):
            assert scores[other].channels["period_only"] == 0.0
            assert scores[other].score < PERIOD_ONLY_SCORE
        assert scores[thursday.id].channels["period"] == 1.0


def test_a_memory_told_after_the_period_is_found_for_a_question_about_it(
    db_path: Path, clock: FakeClock
) -> None:
    # One vector candidate, and no word shared with the question: Monday's note that tells
    # of the weekend joins the pool through the search of what was written after it.
    service, _ = _store(db_path, clock, vector_candidates=1)
    with service:
        monday = (WEEKEND + timedelta(days=2)).isoformat()
        told = service.remember("Yesterday I fixed the brakes of my bike", at=monday)
        service.new_worker().run_until_idle()
        question = "What did I do last weekend?"
        explained = service.explain(question, told.id)
        assert explained.stage == "returned"
        assert "like" in explained.found_by
        assert explained.channels["period_only"] == 1.0
        assert explained.score >= PERIOD_ONLY_SCORE
        # A question that asks something of the period does not search after it.
        asked = service.explain("What did I repair last weekend?", told.id)
        assert asked.stage == "not_in_pool"


def test_a_memory_written_in_the_period_about_another_time(db_path: Path, clock: FakeClock) -> None:
    # clock: Sunday 2026-10-25. Written yesterday: what happened the day before yesterday
    # is not what happened yesterday; a date in a note may be another event's.
    service = MemoryService.open(semantic_settings(db_path), clock=clock)
    with service:
        saturday = "2026-10-24T08:00:00Z"
        before = service.remember("Yesterday: went for a run along the river", at=saturday)
        booked = service.remember("Booked flights to Lisbon for March 3", at=saturday)
        plain = service.remember("Cleaned the garage", at=saturday)
        passing = service.remember("Finished the report I started last week", at=saturday)
        service.new_worker().run_until_idle()
        question = "What did I do yesterday?"
        assert service.explain(question, before.id).channels["period_only"] == 0.0
        for member in (booked.id, plain.id, passing.id):
            assert service.explain(question, member).channels["period_only"] == 1.0
        assert (
            service.explain("What did I do two days ago?", before.id).channels["period_only"] == 1.0
        )


def test_a_question_about_a_period_alone_lists_as_many_as_asked(
    db_path: Path, clock: FakeClock
) -> None:
    # clock: Sunday 2026-10-25; forty notes of Saturday, none sharing a word with the
    # question, and one vector candidate: only the period's own search finds them.
    service = MemoryService.open(semantic_settings(db_path, vector_candidates=1), clock=clock)
    with service:
        service.remember_many(
            [
                {
                    "content": f"Chore number {number} done",
                    "at": f"2026-10-24T{8 + number % 12:02d}:00:00Z",
                }
                for number in range(40)
            ]
        )
        service.new_worker().run_until_idle()
        question = "What did I do yesterday?"
        listed = service.recall(question, limit=40)
        assert len(listed) == 40
        assert all(hit.channels["period_only"] == 1.0 for hit in listed)
        assert len(service.recall(question, limit=10)) == 10
        # A question that asks something of the period searches the period depth (30).
        asked = service.recall("What did I eat yesterday?", limit=40, min_score=0)
        assert sum(hit.channels.get("period") == 1.0 for hit in asked) <= 31
