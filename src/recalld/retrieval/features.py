"""The reranker's features for a pool of candidates: cheap, and stable as the store grows.

Every feature of a candidate depends only on the candidate itself, its
neighbours in its source, the per-namespace document counts of the query's
words (see :mod:`recalld.retrieval.keyword`) and the candidates that rank
*above* it in a channel (ranks, gaps to the best, the best of its source).
Memories that share no word with the query and are less similar to it than
the candidate (and are not its neighbours) therefore change none of its
features: that is what makes a score mean the same in a store of 1 or of
1,000 memories.

Features (``FEATURES``; a model uses a subset, named in its data file):

* keyword: normalised BM25F, ``ln(1 + raw BM25F)``, the share of query terms
  matched, ``ln(1 + rank)`` by raw BM25F among the candidates (capped at the
  pool depth; unmatched candidates get the cap) and the gap to the best;
* vector: the cosine, its ``ln(1 + rank)`` and the gap to the best cosine;
* neighbours: the normalised BM25F and cosine of the previous and next memory
  of the same source (by ``at``, then ``seq``; 0 without one; the BM25F only
  when that neighbour is itself a candidate, else 0), and how far the
  best candidate of the same source is above the memory in each channel (0
  for a memory without a source: nothing in its source is better);
* exchanges: the memory, its previous or its next memory asks a question
  (holds a "?"), and the previous one's BM25F and cosine when it does (in a
  conversation the answer to a matching question is often the evidence);
* speaker: the query names the memory's speaker; the query names another
  candidate's speaker but not this one's. Both are missing (neutral) when the
  query names no candidate's speaker: a question that names nobody ("what is
  my dog called?" asked of a user's chat with an assistant) says nothing about
  whose memory answers it, and must not read as "about someone else". The
  speaker feature is also missing for a memory without a speaker;
* time: the question asks about time, the memory states or implies one, and
  both at once; and, when the question names a period ("last weekend", "in
  May 2023", see :mod:`recalld.retrieval.periods`), whether the memory's
  ``at`` falls inside it, how soon after it the memory was written (1 at
  its end, 0 a week later: a weekend is told of on the Monday), the two as
  one nearness (1 inside, ``told_after`` after: a memory written after a
  period is never taken for surer evidence of it than one written inside),
  whether the memory's own text names a time in it (a day, week or month that
  overlaps it: "yesterday" written the day after, read as of its ``at``; its
  sentences about the future are left out), and how crowded the period is:
  ``ln`` of the candidates' summed nearness, times the candidate's own; all
  missing when it names none;
* shape: ``ln(1 + query terms)``, ``ln(1 + memory terms)``;
* graph (with a knowledge graph): the graph score of the walk from the
  entities the query names, and the share of those entities the memory
  mentions (0 when the graph did not reach it);
* unseen name: the query names something no memory of the namespace holds (a
  capitalised word inside a sentence, as :func:`recalld._text.named_words`
  finds them, not a time word: "What did *Caroline* say?" asked of a store that
  never met a Caroline). The same for every candidate: it lowers the whole
  pool, so such a query returns nothing at the default threshold more often.
  A query in lower case (or all in capitals) names nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt

from recalld.retrieval.keyword import KeywordScore

__all__ = ["FEATURES", "Candidate", "QueryShape", "feature_matrix"]

FEATURES = (
    "keyword",
    "keyword_log_raw",
    "keyword_share",
    "keyword_rank",
    "keyword_gap",
    "cosine",
    "cosine_rank",
    "cosine_gap",
    "previous_keyword",
    "next_keyword",
    "previous_cosine",
    "next_cosine",
    "source_keyword_gap",
    "source_cosine_gap",
    "question",
    "previous_question",
    "next_question",
    "previous_question_keyword",
    "previous_question_cosine",
    "speaker_named",
    "other_speaker_named",
    "query_time",
    "memory_time",
    "time_match",
    "query_terms",
    "memory_terms",
    "graph_score",
    "entity_overlap",
    "unseen_name",
    "in_period",
    "told_after",
    "period_crowd",
    "stated_in_period",
    "near_period",
)

Matrix = npt.NDArray[np.float64]


@dataclass(slots=True)
class Candidate:
    """One pool member with what the channels said about it and about its neighbours."""

    seq: int
    source: str | None
    keyword: KeywordScore
    cosine: float | None
    speaker_named: bool
    has_speaker: bool
    mentions_time: bool
    terms: int
    previous_keyword: float = 0.0
    next_keyword: float = 0.0
    previous_cosine: float = 0.0
    next_cosine: float = 0.0
    question: bool = False
    previous_question: bool = False
    next_question: bool = False
    graph_score: float = 0.0
    entity_overlap: float = 0.0
    in_sequence: bool = False
    """Whether a previous or next memory of its source is visible (a conversation's turn)."""
    in_period: float = math.nan
    """1 when its ``at`` is inside the period the query names, else 0 (NaN: names none)."""
    told_after: float = math.nan
    """How soon after that period its ``at`` comes (:meth:`Period.told_after`; NaN: none)."""
    stated_in_period: float = math.nan
    """1 when its text names a time that overlaps that period (read as of its ``at``),
    else 0 (NaN: the query names none)."""
    of_period: bool = False
    """Whether it is one of the period's memories: what its text states ("last night",
    read as of its ``at``) lies wholly inside what the period names
    (:meth:`Period.exact`), or its ``at`` is inside it and its text does not open by
    naming another time ("Yesterday: went for a run",
    :func:`~recalld.retrieval.period_matching.opening_period`)."""

    @property
    def note(self) -> bool:
        """Neither a speaker nor a neighbour in a source: a plain note, which the
        reranker's notes twins score (see :mod:`recalld.retrieval.rerank`)."""
        return not self.has_speaker and not self.in_sequence


@dataclass(frozen=True)
class QueryShape:
    """What the features need to know about the query itself."""

    terms: int
    asks_about_time: bool
    unseen_name: bool = False


def _ranks(values: npt.NDArray[np.float64], present: npt.NDArray[np.bool_], cap: int) -> Matrix:
    """For each value, how many present values are strictly larger (absent: ``cap``)."""
    ordered = np.sort(values[present])[::-1]
    # Strictly larger = count of ordered values > v; searchsorted on the negated ascending array.
    larger = np.searchsorted(-ordered, -values, side="left").astype(np.float64)
    ranks = np.where(present, np.minimum(larger, cap), cap)
    return np.log1p(ranks)


# The per-candidate values feature_matrix reads, one tuple per candidate, in this order.
_KEYWORD, _RAW, _SHARE, _COSINE, _PREVIOUS_KEYWORD, _NEXT_KEYWORD = range(6)
_PREVIOUS_COSINE, _NEXT_COSINE, _QUESTION, _PREVIOUS_QUESTION, _NEXT_QUESTION = range(6, 11)
_NAMED, _HAS_SPEAKER, _TIME, _TERMS, _GRAPH, _OVERLAP, _PERIOD, _TOLD, _STATED = range(11, 20)


def _values(item: Candidate) -> tuple[float | bool | int, ...]:
    keyword = item.keyword
    return (
        keyword.normalised,
        keyword.raw,
        keyword.matched_share,
        math.nan if item.cosine is None else item.cosine,
        item.previous_keyword,
        item.next_keyword,
        item.previous_cosine,
        item.next_cosine,
        item.question,
        item.previous_question,
        item.next_question,
        item.speaker_named,
        item.has_speaker,
        item.mentions_time,
        item.terms,
        item.graph_score,
        item.entity_overlap,
        item.in_period,
        item.told_after,
        item.stated_in_period,
    )


def _source_groups(sources: Sequence[str | None]) -> tuple[npt.NDArray[np.intp], int]:
    """Each candidate's source as a number (-1: none), and how many sources there are."""
    groups: dict[str, int] = {}
    group = np.array(
        [-1 if source is None else groups.setdefault(source, len(groups)) for source in sources],
        dtype=np.intp,
    )
    return group, len(groups)


def _source_best(
    groups: tuple[npt.NDArray[np.intp], int], values: npt.NDArray[np.float64], floor: float
) -> npt.NDArray[np.float64]:
    """For each candidate, the best of ``values`` (NaN: left out) among the candidates of
    its source (``groups``: :func:`_source_groups`), starting from ``floor`` (NaN for a
    candidate without a source)."""
    group, count = groups
    if count == 0:  # no candidate has a source (plain notes)
        return np.full(len(group), np.nan)
    best = np.full(count, floor)
    sourced = group >= 0
    counted = sourced & ~np.isnan(values)
    np.maximum.at(best, group[counted], values[counted])
    return np.where(sourced, best[np.maximum(group, 0)], np.nan)


_COLUMN = {name: index for index, name in enumerate(FEATURES)}
# Features that are one of the per-candidate values as they are: (column, value index).
_COPIED = (
    ("keyword", _KEYWORD),
    ("keyword_share", _SHARE),
    ("cosine", _COSINE),
    ("previous_keyword", _PREVIOUS_KEYWORD),
    ("next_keyword", _NEXT_KEYWORD),
    ("previous_cosine", _PREVIOUS_COSINE),
    ("next_cosine", _NEXT_COSINE),
    ("question", _QUESTION),
    ("previous_question", _PREVIOUS_QUESTION),
    ("next_question", _NEXT_QUESTION),
    ("memory_time", _TIME),
    ("graph_score", _GRAPH),
    ("entity_overlap", _OVERLAP),
    ("in_period", _PERIOD),
    ("told_after", _TOLD),
    ("stated_in_period", _STATED),
)
_COPIED_COLUMNS = [_COLUMN[name] for name, _ in _COPIED]
_COPIED_VALUES = [value for _, value in _COPIED]


def feature_matrix(candidates: Sequence[Candidate], query: QueryShape, depth: int) -> Matrix:
    """One row of ``FEATURES`` per candidate (cosine features are NaN without a vector)."""
    count = len(candidates)
    matrix = np.zeros((count, len(FEATURES)), dtype=np.float64)
    if count == 0:
        return matrix
    column = _COLUMN
    width = _STATED + 1
    values = np.fromiter(
        chain.from_iterable(map(_values, candidates)), dtype=np.float64, count=count * width
    ).reshape(count, width)
    matrix[:, _COPIED_COLUMNS] = values[:, _COPIED_VALUES]
    keyword = values[:, _KEYWORD]
    raw = values[:, _RAW]
    cosine = values[:, _COSINE]
    has_vector = ~np.isnan(cosine)
    matrix[:, column["keyword_log_raw"]] = np.log1p(raw)
    matrix[:, column["keyword_rank"]] = _ranks(raw, raw > 0, depth)
    matrix[:, column["keyword_gap"]] = keyword.max() - keyword
    if has_vector.any():
        filled = np.where(has_vector, cosine, -np.inf)
        matrix[:, column["cosine_rank"]] = np.where(
            has_vector, _ranks(filled, has_vector, depth), np.nan
        )
        matrix[:, column["cosine_gap"]] = np.where(has_vector, np.nanmax(cosine) - cosine, np.nan)
    else:
        matrix[:, column["cosine_rank"]] = np.nan
        matrix[:, column["cosine_gap"]] = np.nan
    previous_question = values[:, _PREVIOUS_QUESTION]
    matrix[:, column["previous_question_keyword"]] = (
        previous_question * values[:, _PREVIOUS_KEYWORD]
    )
    matrix[:, column["previous_question_cosine"]] = previous_question * values[:, _PREVIOUS_COSINE]
    # How far the best candidate of the same source is above the memory (0 without a
    # source; the cosine's gap is NaN without a vector).
    sources = _source_groups([item.source for item in candidates])
    best_keyword = _source_best(sources, keyword, 0.0)
    matrix[:, column["source_keyword_gap"]] = np.where(
        np.isnan(best_keyword), 0.0, best_keyword - keyword
    )
    best_cosine = _source_best(sources, cosine, -1.0)
    matrix[:, column["source_cosine_gap"]] = np.where(
        has_vector, np.where(np.isnan(best_cosine), 0.0, best_cosine - cosine), np.nan
    )
    named = values[:, _NAMED] > 0
    has_speaker = values[:, _HAS_SPEAKER] > 0
    if named.any():
        matrix[:, column["speaker_named"]] = np.where(has_speaker, named, np.nan)
        matrix[:, column["other_speaker_named"]] = ~named
    else:  # the query names nobody: neither feature says anything (see the docstring)
        matrix[:, column["speaker_named"]] = np.nan
        matrix[:, column["other_speaker_named"]] = np.nan
    matrix[:, column["query_time"]] = float(query.asks_about_time)
    matrix[:, column["time_match"]] = values[:, _TIME] * float(query.asks_about_time)
    matrix[:, column["query_terms"]] = math.log1p(query.terms)
    matrix[:, column["memory_terms"]] = np.log1p(values[:, _TERMS])
    matrix[:, column["unseen_name"]] = float(query.unseen_name)
    period = values[:, _PERIOD]
    if np.isnan(period).all():
        matrix[:, column["near_period"]] = np.nan
        matrix[:, column["period_crowd"]] = np.nan
    else:
        # Inside, or soon after (told_after is 0 inside). LoCoMo cannot tell whether a
        # turn said the morning after a day is surer evidence of it than one said that
        # day (fitted apart, the two weights came out either way with the same
        # figures); one weight keeps a note written on the day first.
        near = period + values[:, _TOLD]
        matrix[:, column["near_period"]] = near
        # One of the period's few memories answers "what did I do last weekend?" more
        # surely than one of a day's hundred chat turns: ln(the candidates' summed
        # nearness), times each one's own. A memory of the Monday after a crowded
        # weekend is one of that crowd too, not a lone witness. A logarithm, so a store
        # that holds one memory of the period is a small step from LoCoMo's sessions.
        crowd = max(float(np.nansum(near)), 1.0)
        matrix[:, column["period_crowd"]] = near * math.log(crowd)
    return matrix
