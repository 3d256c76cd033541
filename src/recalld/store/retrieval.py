"""The protocol recall's candidate stage needs from a store (see :mod:`recalld.retrieval`).

Recall reads light rows (the text fields and where a memory sits in its
source), not full :class:`~recalld.model.Memory` records: a query scores a
pool of about 200 candidates and their neighbours but returns only a few.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from recalld.store.base import KeywordBackend, Scope

__all__ = [
    "ROW_COLUMNS",
    "ROW_WIDTH",
    "CandidateRow",
    "KeywordCandidate",
    "Neighbour",
    "Neighbours",
    "RetrievalStore",
    "candidate_row",
    "neighbours_of",
]


# Not frozen: a query builds a few hundred rows, and a frozen dataclass's __init__
# (object.__setattr__ per field) costs ~3x a plain one. Nothing mutates their fields.
@dataclass(slots=True)
class CandidateRow:
    """What the reranker reads of one memory: its searchable fields and its place in a source."""

    seq: int
    id: str
    namespace: str
    title: str | None
    content: str
    tags: tuple[str, ...]
    speaker: str | None
    source: str | None
    at_utc: str | None
    index_state: str
    place_name: str | None = None
    key: str | None = None
    derived: Any = field(default=None, compare=False, repr=False)
    """What a reader derived from this row's text, kept with the row for the next recall
    that reads the same row (the store's row cache hands it out again until memories
    change): recall keeps its prepared terms here (``RowTermsCache.of``)."""
    text_key: Any = field(default=None, compare=False, repr=False)
    """Likewise: the key near-duplicate collapse compares its text by
    (:func:`recalld.retrieval.duplicates.text_key`), made on first use."""


# The columns a candidate row is read from (alias ``m`` for memories), in
# :func:`candidate_row`'s order, and how many there are: the same on every store.
ROW_COLUMNS = (
    "m.seq, m.id, m.namespace, m.title, m.content, m.tags, m.speaker, m.source, m.at_utc,"
    " m.index_state, m.place_name, m.key"
)
ROW_WIDTH = 12


def candidate_row(values: Sequence[Any], tags: tuple[str, ...], at_utc: str | None) -> CandidateRow:
    """The :class:`CandidateRow` of a :data:`ROW_COLUMNS` row whose tags and time the
    store has decoded (JSON text on SQLite, an array and a timestamp on PostgreSQL)."""
    seq, memory_id, namespace, title, content = values[:5]
    speaker, source = values[6], values[7]
    index_state, place_name, key = values[9:ROW_WIDTH]
    return CandidateRow(
        seq=int(seq),
        id=memory_id,
        namespace=namespace,
        title=title,
        content=content,
        tags=tags,
        speaker=speaker,
        source=source,
        at_utc=at_utc,
        index_state=index_state,
        place_name=place_name,
        key=key,
    )


@dataclass(slots=True)
class KeywordCandidate:
    """A keyword hit: the row, which index found it (``fts5``, ``like``, ``postgres-fts``),
    and (LIKE only) the share of terms found."""

    row: CandidateRow
    backend: KeywordBackend
    like_share: float = 0.0


# The kind of a conversation's turns (recalld.conversations writes them): the neighbours'
# query says whether a memory is one (recalld.retrieval.turns).
TURN_KIND = "turn"


def reference_idf(count: int, reference: float = 1_000.0, cap: int = 1_000) -> float:
    """BM25's inverse document frequency of a term ``count`` memories hold, against a fixed
    collection of ``reference`` memories (counts capped at ``cap``): a weight that reads
    the scope's own counts and nothing of how large the file, or another namespace, is."""
    count = min(max(count, 0), cap)
    return math.log(1.0 + max(reference - count + 0.5, 0.5) / (count + 0.5))


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A memory next to another in its source: its seq, whether it asks a question, its
    speaker, its ``at`` (as stored) and whether it is a conversation's turn (kind
    ``turn``)."""

    seq: int
    asks: bool
    speaker: str | None = None
    at_utc: str | None = None
    turn: bool = False


@dataclass(frozen=True, slots=True)
class Neighbours:
    """The previous and next visible memory of the same source and namespace, by (at, seq),
    and whether the memory itself is a conversation's turn (kind ``turn``)."""

    previous: Neighbour | None
    next: Neighbour | None
    turn: bool = False


def neighbours_of(
    pairs: Sequence[Sequence[Any]], known: Mapping[int, Neighbour]
) -> dict[int, Neighbours]:
    """Each memory's :class:`Neighbours` from the rows of ``sql.neighbour_pairs`` (seq,
    previous seq, next seq, is a turn) and the neighbours read (seq -> neighbour)."""

    def neighbour(seq: Any) -> Neighbour | None:
        return None if seq is None else known.get(int(seq))

    return {
        int(seq): Neighbours(previous=neighbour(before), next=neighbour(after), turn=bool(turn))
        for seq, before, after, turn in pairs
    }


class RetrievalStore(Protocol):
    """Indexed reads for the candidate stage of recall."""

    def keyword_candidates(
        self, scope: Scope, text: str, words: Sequence[str], limit: int
    ) -> list[KeywordCandidate]:
        """Up to ``limit`` visible memories matching any of ``words`` (best first by the
        index's own ranking); with no words, or no full-text index, a substring match."""
        ...

    def earliest_matches(
        self, scope: Scope, words: Sequence[str], limit: int
    ) -> list[KeywordCandidate]:
        """Up to ``limit`` visible memories whose content holds any of ``words`` (as a
        substring; ASCII letters in any case), earliest ``at`` first (then by seq), among
        the first :data:`~recalld.store.sql.EARLIEST_WALK` of the scope's memories that
        have an ``at``: those written soonest after the start of its time range, whatever
        the words' frequencies. Empty words and NULs are dropped; at most
        :data:`~recalld.store.sql.EARLIEST_WORDS` words are used."""
        ...

    def rows(self, scope: Scope, seqs: Sequence[int]) -> dict[int, CandidateRow]:
        """The rows of ``seqs`` that ``scope`` may see."""
        ...

    def neighbours(self, scope: Scope, seqs: Sequence[int]) -> dict[int, Neighbours]:
        """For each of ``seqs`` that has a source and a time: its visible neighbours."""
        ...

    def document_counts(
        self, namespaces: Sequence[str], words: Sequence[str], cap: int
    ) -> dict[str, int]:
        """How many memories of ``namespaces`` contain each word (counting stops at ``cap``)."""
        ...

    def tokenize(self, text: str) -> list[str]:
        """The index's terms for ``text`` (lower-cased, diacritics folded, stemmed)."""
        ...
