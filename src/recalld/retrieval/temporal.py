"""Cheap temporal cues: does a question ask about time, does a memory state or imply one?

A lexicon of English time expressions, no parsing: a question with "when",
"what year", "how long ago" ... and a memory that names a date, a weekday, a
month, a year or a relative time ("yesterday", "last weekend", "two weeks
ago"). Resolving relative expressions against the memory's own ``at``
(dateparser, ctparse) would say *which* date, but retrieval only needs to know
that the memory places its event in time, so the reranker gets these flags.

The memory side works on the index's terms (already computed for BM25F), so it
costs a set lookup per term instead of a regular expression per memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

__all__ = ["TIME_WORDS", "asks_about_time", "mentions_time", "time_terms"]

_UNITS = r"(?:second|minute|hour|day|night|week|weekend|fortnight|month|year|decade)s?"

_QUESTION = re.compile(
    r"\b(?:when|how long|how often|how many " + _UNITS + r"|what (?:year|month|day|date|time"
    r"|week|weekend|season)|which (?:year|month|day|date|week|weekend|season)|what time"
    r"|since when|until when|date|dates|ago|recently|first time|last time)\b",
    re.IGNORECASE,
)

# Words that place an event in time. "May" is left out (the verb); so are words like
# "time" or "now" that almost every text holds.
TIME_WORDS = (
    "yesterday today tonight tomorrow recently lately ago earlier soon anniversary "
    "morning afternoon evening night weekend week fortnight month year decade season "
    "days weeks months years nights weekends "
    "monday tuesday wednesday thursday friday saturday sunday "
    "january february march april june july august september october november december "
    "spring summer autumn fall winter christmas easter holidays birthday pm"
).split()

_DIGIT = re.compile(r"\d")
# Years, ordinal days and clock times, on the raw text (one C-level scan per memory).
_NUMBERS = re.compile(
    r"\b(?:(?:19|20)\d\d|\d{1,2}(?:st|nd|rd|th)|\d{1,2}(?::\d\d)? ?[ap]m)\b", re.I
)


def asks_about_time(question: str) -> bool:
    """Whether a question asks when something happened or how long ago."""
    return _QUESTION.search(question) is not None


def time_terms(tokenize: Callable[[str], list[str]]) -> frozenset[str]:
    """:data:`TIME_WORDS` as the index's terms (stemmed the way the index stems them)."""
    return frozenset(term for word in TIME_WORDS for term in tokenize(word))


def mentions_time(text: str, terms: Iterable[str], lexicon: frozenset[str]) -> bool:
    """Whether a memory names a time: one of its index ``terms`` is in ``lexicon``, or its
    ``text`` holds a year (19xx, 20xx), an ordinal day ("14th") or a clock time ("5 pm")."""
    if not lexicon.isdisjoint(terms):
        return True
    # Most texts hold no digit at all: one fast scan saves the larger pattern.
    return _DIGIT.search(text) is not None and _NUMBERS.search(text) is not None
