"""Turning free text into safe keyword terms, memories into one-line summaries, and content
into the normalised form (and hash) that duplicate detection compares."""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recalld.model import Memory

WORD = re.compile(r"\w+", re.UNICODE)
# Words that carry no retrieval signal in questions; dropped unless nothing else is left.
STOPWORDS = frozenset(
    (
        "a an and are as at be but by did do does for from had has have he her his how i if in "
        "into is it its me my of on or our she so that the their them then there these they this "
        "to was we were what when where which who whom why will with would you your"
    ).split(" ")
)


def query_terms(text: str, max_terms: int) -> list[str]:
    """Lower-cased word tokens of ``text``: unique, stop-words dropped, at most ``max_terms``.

    Only ``\\w+`` runs survive, so quotes, ``*``, parentheses and operator words
    can never reach the FTS5 query parser as syntax.
    """
    words = [word.lower() for word in WORD.findall(text)]
    content_words = [word for word in words if word not in STOPWORDS]
    unique = list(dict.fromkeys(content_words or words))
    return unique[:max_terms]


# A word (a letter first; inner apostrophes and hyphens kept: "O'Brien", "Jean-Luc"), and
# what ends a sentence.
_NAME_WORD = re.compile("[^\\W\\d_][\\w'\u2019-]*", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?:;\n]")


def named_words(text: str) -> list[str]:
    """The capitalised words of ``text`` that do not start a sentence, possessive "'s"
    dropped: how a question names a person, a place or a thing ("When did Caroline's
    sister move to Sweden?" -> Caroline, Sweden). Unique, in order. "I", a stop word
    ("ok so What ...") and a text written in lower case name nothing."""
    named: list[str] = []
    previous_end = 0
    for match in _NAME_WORD.finditer(text):
        word = match.group()
        starts_sentence = not _continues_sentence(text, previous_end, match.start())
        previous_end = match.end()
        if starts_sentence or not word[0].isupper():
            continue
        word = word.removesuffix("'s").removesuffix("\u2019s").strip("'\u2019-")
        if len(word) > 1 and word.lower() not in STOPWORDS and word not in named:
            named.append(word)
    return named


def _continues_sentence(text: str, previous_end: int, start: int) -> bool:
    """Whether a word starting at ``start`` continues a sentence: some word came before
    (``previous_end`` > 0) and no sentence end lies between it and this one."""
    return previous_end > 0 and _SENTENCE_END.search(text, previous_end, start) is None


def prompt_line(memory: Memory, width: int = 160) -> str:
    """A compact, single-line summary of a memory for an agent's prompt."""
    when = (memory.at or memory.created_at).date().isoformat()
    label = memory.kind if memory.category is None else f"{memory.kind}/{memory.category}"
    body = " ".join(memory.content.split())
    if memory.title:
        body = f"{' '.join(memory.title.split())}: {body}"
    if len(body) > width:
        body = body[: width - 1].rstrip() + "…"
    return f"[{when} {label}] {body}"


def new_id() -> str:
    """A new time-sortable id (a ULID); python-ulid is imported on the first call, so a
    command that writes nothing does not pay for it."""
    from ulid import ULID

    return str(ULID())


def normalized_content(text: str) -> str:
    """``text`` with every run of white space turned into one space and the ends trimmed:
    two writes are the same memory when these are equal (case and punctuation still count)."""
    return " ".join(text.split())


def content_hash(text: str) -> str:
    """The SHA-256 (hex) of :func:`normalized_content`: what duplicate detection indexes."""
    return hashlib.sha256(normalized_content(text).encode("utf-8", "surrogatepass")).hexdigest()
