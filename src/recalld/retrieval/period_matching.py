"""How memories and questions meet the period a question names.

:mod:`recalld.retrieval.periods` reads a period from text; this module applies
that reading:

* :class:`StatedPeriods`: the period a memory's own text states ("yesterday I
  ran a 5K", read as of its ``at``; sentences about the future left out), for
  the ``stated_in_period`` feature and for whether it is one of the period's
  memories;
* :func:`opening_period`: the time a memory opens by naming ("Yesterday: went
  for a run"), which it tells of whenever it was written;
* :func:`asks_only_about`: a question that asks nothing but what happened in
  its period ("what did I do yesterday?"), answered by the period's memories
  (see :mod:`recalld.retrieval.pool`);
* :func:`telling_words`: the words a memory written after a period names it by,
  for the search of what was told after it (see :mod:`recalld.retrieval.hybrid`).
"""

from __future__ import annotations

import functools
import re
from datetime import datetime, timedelta, tzinfo

from recalld._text import WORD
from recalld.retrieval.periods import MAX_CHARS, MONTH_NAMES, WEEKDAYS, Period, query_period

__all__ = [
    "ASKED_SPAN",
    "STATED_SPAN",
    "StatedPeriods",
    "asks_only_about",
    "names_a_short_date",
    "opening_period",
    "telling_words",
]

# The longest period a memory's own text may state for recall to compare it with a
# question's ("yesterday", "last week", "in June" relative to its ``at``): a memory that
# names a year, or "since 2019", says little about the day a question asks of.
STATED_SPAN = 32  # days of the user's calendar: a month, with a day's slack ("the past month")

# A sentence about the future: what it names is a plan, not when something happened
# ("I'll fly on Friday", "see you Saturday", "this weekend I'm going camping").
_FUTURE = re.compile(
    r"(?:'ll|\u2019ll)\b|\b(?:will|won't|shall|gonna|going|plan|plans|planning"
    r"|tomorrow|next|upcoming|see you|can't wait|looking forward)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
# A date written with a short month or "May" ("Oct 13", "5 May"), which the index's time
# words (``temporal.TIME_WORDS``) leave out.
_SHORT_DATE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)\.?\s+\d"
    r"|\d(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)\b",
    re.IGNORECASE,
)


# Besides its period, every word a question that asks only what happened in it is made
# of: "what did I do yesterday?", "summarize my day yesterday", "what have I been up to
# last week?", "did I go anywhere last weekend?", "what did we talk about on Monday?"
# (and the ends of "I've", "what'd").
# Words that point at someone or something else (who, where, why, she, it, there) are
# not among them: "what did she do yesterday?" asks about her.
_ASKING_ONLY = frozenset(
    (
        "a an and are am as at be by for from in into is of on or so the to was were with "
        "what how did do does doing done had has have having happen happens happened "
        "happening go goes going went get got up been being i me my myself we us our you "
        "your anything something everything anywhere new else all tell show list give "
        "remind summarize summarise summary recap overview please about day between "
        "through talk talked discuss discussed say said chat chatted mention mentioned "
        "remember write wrote d ll m re s ve"
    ).split()
)
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)?")
# The longest period a question asking only about it is answered by listing: a month (a
# year, or "since 2019", holds too much for its memories to answer it).
ASKED_SPAN = STATED_SPAN


def asks_only_about(text: str, period: Period) -> bool:
    """Whether ``text`` asks only what happened in ``period`` (the closed period of at
    most :data:`ASKED_SPAN` it names): every word of it is the period's, a number or
    a word of asking ("what did I do on Monday?"; not "what did I eat on Monday?", "what
    did Sam do on Monday?" nor "who called on Monday?")."""
    days = period.days()
    if len(text) > MAX_CHARS or days is None or days > ASKED_SPAN:
        return False
    named = {word.lower() for phrase in period.phrases for word in WORD.findall(phrase)}
    return all(
        word in named or word in _ASKING_ONLY or _ORDINAL.fullmatch(word) is not None
        for word in (found.lower() for found in WORD.findall(text))
    )


# Words a memory written after a period uses to tell of it, whatever the period: "yesterday
# I ...", "last night", "two days ago", "over the weekend", "last week".
_TELLING = ("yesterday", "night", "ago", "last", "weekend", "week", "earlier")


def telling_words(period: Period) -> tuple[str, ...]:
    """The words a memory written soon after ``period`` (closed) may name it by: the
    relative ones, and the names of its days and months ("on Saturday", "October 17");
    for a period of more than a week, its months only. Words, not numbers: they are
    looked for as substrings ("28" is in "2028")."""
    assert period.start is not None
    assert period.end is not None
    zone = period.zone
    first = period.start.astimezone(zone).date()
    last = (period.end - timedelta(microseconds=1)).astimezone(zone).date()
    days = [first + timedelta(days=offset) for offset in range((last - first).days + 1)]
    words: list[str] = list(_TELLING)
    if len(days) <= 7:
        words += [WEEKDAYS[day.weekday()] for day in days]
    words += [MONTH_NAMES[day.month] for day in days]
    return tuple(dict.fromkeys(words))


# Where the opening words of a memory end: its first clause, at most four words.
_CLAUSE_END = re.compile(r"[.,;:!?\n]")
_OPENING_WORDS = 4
# A time word in the possessive names a thing, not when the memory's story happened
# ("Yesterday's notes: sent them out", "Last week's report is done").
_POSSESSIVE_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|night|week|weekend|month|year|"
    + "|".join(WEEKDAYS)
    + r")['\u2019]s\b",
    re.IGNORECASE,
)


def opening_period(text: str, at: datetime, zone: tzinfo) -> Period | None:
    """The period the opening words of ``text`` name relative to ``at`` ("Yesterday:
    went for a run", "Last night I ...", "Two days ago we ..."): a memory that opens so
    tells of that time, whenever it was written. None when it opens with no such phrase
    (a time named further on, "faster than last Saturday", is a passing mention)."""
    head = " ".join(_CLAUSE_END.split(text[:MAX_CHARS], maxsplit=1)[0].split()[:_OPENING_WORDS])
    if _POSSESSIVE_TIME.search(head):
        return None
    period = query_period(head, at, zone, longest=STATED_SPAN)
    if period is None or not period.relative or period.opens_at is None:
        return None
    # The phrase opens the text, or follows its first word ("The day before yesterday").
    first = head.split(" ", 1)[0]
    return period if period.opens_at <= len(first) + 1 else None


def names_a_short_date(text: str) -> bool:
    """Whether ``text`` holds a date written with a short month or "May" ("Oct 13", "5
    May"): the index's time words (see :func:`recalld.retrieval.temporal.mentions_time`)
    miss those, so a memory holding one is read for its stated period too."""
    return _SHORT_DATE.search(text[:MAX_CHARS]) is not None


class StatedPeriods:
    """The period a memory's own text states ("went to the support group yesterday"),
    read with :func:`query_period` as of the memory's ``at`` on the user's calendar,
    leaving out its sentences about the future; None when it states none, an open one,
    or one longer than :data:`STATED_SPAN`.

    Reading a text costs ~0.1 ms, so the ``size`` most recently used readings are kept
    (``functools.lru_cache``, keyed by the text read, the ``at`` and the calendar: an
    edited memory is read again).
    """

    def __init__(self, size: int) -> None:
        self._cached = functools.lru_cache(maxsize=size)(_stated_period)

    def of(self, text: str, at: datetime, zone: tzinfo) -> Period | None:
        """The period ``text``, written at ``at``, states (see the class docstring)."""
        return self._cached(text[:MAX_CHARS], at, zone)


def _stated_period(text: str, at: datetime, zone: tzinfo) -> Period | None:
    past = " ".join(
        sentence
        for sentence in _SENTENCE_END.split(text)
        if sentence and _FUTURE.search(sentence) is None
    )
    # A memory's "last summer" beside its "yesterday" would make the two one long period.
    period = query_period(past, at, zone, longest=STATED_SPAN) if past else None
    days = None if period is None else period.days()
    if days is None or days > STATED_SPAN:
        return None
    return period
