"""Cheap temporal cues: does a question ask about time, does a memory state or imply one?

A lexicon of English time expressions, no parsing: a question with "when",
"what year", "how long ago" ... and a memory that names a date, a weekday, a
month or a relative time ("yesterday", "last weekend", "two weeks ago").
Resolving relative expressions against the memory's own ``at`` (dateparser,
ctparse) would say *which* date, but retrieval only needs to know that the
memory places its event in time, so the reranker gets these two flags.
"""

from __future__ import annotations

import re

__all__ = ["asks_about_time", "mentions_time"]

_UNITS = r"(?:second|minute|hour|day|night|week|weekend|fortnight|month|year|decade)s?"
# "May" is left out here (the verb); _MAY catches the month by its capital and context.
_MONTHS = r"(?:january|february|march|april|june|july|august|september|october|november|december)"
_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?"
_SEASONS = r"(?:spring|summer|autumn|fall|winter)"
_PARTS = r"(?:morning|afternoon|evening|night|weekend|week|month|year|" + _SEASONS + ")"

_QUESTION = re.compile(
    r"\b(?:when|how long|how often|how many " + _UNITS + r"|what (?:year|month|day|date|time"
    r"|week|weekend|season)|which (?:year|month|day|date|week|weekend|season)|what time"
    r"|since when|until when|date|dates|ago|recently|first time|last time)\b",
    re.IGNORECASE,
)

_MEMORY = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|recently|lately|soon|earlier|ago|anniversary"
    r"|(?:last|next|this|past|coming|previous|every|each) (?:" + _PARTS + "|" + _WEEKDAYS + ")"
    r"|(?:a|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of|several|\d+) "
    + _UNITS
    + r"|"
    + _MONTHS
    + r"|"
    + _WEEKDAYS
    + r"|(?:19|20)\d\d|\d{1,2}[/.-]\d{1,2}(?:[/.-]\d{2,4})?|\d{1,2}(?:st|nd|rd|th)"
    r"|\d{1,2}(?::\d\d)? ?(?:am|pm))\b",
    re.IGNORECASE,
)


_MAY = re.compile(r"\b(?:(?:in|of|early|late|mid|since|until) May|May \d)\b")


def asks_about_time(question: str) -> bool:
    """Whether a question asks when something happened or how long ago."""
    return _QUESTION.search(question) is not None


def mentions_time(text: str) -> bool:
    """Whether a text names a date, a weekday, a month, a year or a relative time."""
    return _MEMORY.search(text) is not None or _MAY.search(text) is not None
