"""The candidate pool of one query, with every feature and the reranker's score.

Candidates are the union of the keyword index's best matches and the vector
index's nearest memories (about 100 of each, under the same namespace and
filters). Each is scored by BM25F (its own and its neighbours'), by cosine
(its own and its neighbours'), and described by the features of
:mod:`recalld.retrieval.features`; the reranker turns those into a
probability. Nothing here is cut yet: :mod:`recalld.retrieval.hybrid` applies
the threshold, collapses near-duplicates and cuts the limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from recalld._time import from_storage
from recalld.embeddings.base import Vectors
from recalld.errors import EmbeddingError
from recalld.retrieval.features import FEATURES, Candidate, QueryShape, feature_matrix
from recalld.retrieval.graph_channel import NEW_CANDIDATES, GraphFeatures
from recalld.retrieval.keyword import (
    KeywordScore,
    QueryKeywords,
    RowTermsCache,
    prepare_query,
    score_rows,
)
from recalld.retrieval.period_matching import StatedPeriods, names_a_short_date, opening_period
from recalld.retrieval.periods import Period
from recalld.retrieval.rerank import Channels, Reranker
from recalld.retrieval.temporal import asks_about_time
from recalld.retrieval.turns import cap_turns, followers, take_turns, turn_starts
from recalld.retrieval.vector_source import VectorSource
from recalld.store.base import FULL_TEXT_BACKENDS, Scope
from recalld.store.retrieval import (
    CandidateRow,
    KeywordCandidate,
    Neighbour,
    Neighbours,
    RetrievalStore,
)

__all__ = [
    "PERIOD_ONLY_SCORE",
    "SCORE_DECIMALS",
    "Mode",
    "Nearest",
    "Pool",
    "PoolRequest",
    "Scoring",
    "build_pool",
    "channels_of",
    "features_of",
    "score_pool",
    "tie_order",
]

Mode = Literal["hybrid", "keyword", "vector"]
# The share of the score that belonging to the period makes when a question asks only
# what happened in it ("what did I do yesterday?"): whatever a memory of the period
# tells, it answers the question. The rest is the reranker's probability, so the
# period's memories score 0.5-1, in the reranker's order, and any other memory under 0.5.
PERIOD_ONLY_SCORE = 0.5
# The decimals of a hit's score (and of the scores the threshold compares).
SCORE_DECIMALS = 6


@dataclass(frozen=True)
class PoolRequest:
    """One query under one scope, and how deep each channel looks."""

    scope: Scope
    text: str
    words: Sequence[str]
    mode: Mode
    keyword_depth: int
    vector_depth: int
    # Memories to score even when no channel found them (explain).
    extra_seqs: Sequence[int] = ()
    # What the knowledge graph reached from the query's entities (empty: nothing, or no graph).
    graph: Mapping[int, GraphFeatures] = field(default_factory=dict)
    # Whether the graph channel took part (then the reranker's hybrid+graph model scores).
    graph_channel: bool = False
    # The period the query names (None: none), compared with each candidate's ``at``.
    period: Period | None = None
    # The query asks only what happened in ``period`` (see PERIOD_ONLY_SCORE), and the
    # memories written soon after it that name a time the way one tells of it.
    period_only: bool = False
    told_after: Sequence[KeywordCandidate] = ()


@dataclass(frozen=True)
class Nearest:
    """The query's vector and its nearest memories (seq, cosine), best first."""

    vector: Vectors
    found: list[tuple[int, float]]


@dataclass
class Pool:
    """Every candidate of a query: rows, finders, channel values, features and scores."""

    rows: list[CandidateRow] = field(default_factory=list)
    backends: list[list[str]] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    features: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 0)))
    scores: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    models: list[str] = field(default_factory=list)
    keywords: QueryKeywords | None = None
    vector_error: EmbeddingError | None = None
    """Why the vectors could not be searched: the embedder failed (None: they were, or
    were not asked)."""
    asked: tuple[str, ...] = ("keyword", "vector")
    """The channels this query asked (``keyword``, ``vector``): a stop-word query in
    hybrid mode asks only ``vector``; keyword mode and no embedder leave ``vector`` out
    (``vector_unavailable``: it was asked and embedding the query failed). Explain says
    so instead of naming a search that never ran."""
    period: Period | None = None
    """The period the query names, as recall read it (None: none)."""
    period_only: bool = False
    """The query asks only what happened in ``period`` (see :data:`PERIOD_ONLY_SCORE`)."""
    turns: dict[int, int] = field(default_factory=dict)
    """Memories described by the turn they go on with: seq -> the seq of the memory
    whose features they took (:mod:`recalld.retrieval.turns`)."""
    scoring: Scoring | None = None
    """What the scores were computed from, so another reranker can score the same pool
    as recall would (:func:`score_pool`; ``bench/fit_reranker.py``'s folds)."""

    @property
    def vector_unavailable(self) -> bool:
        """The vectors were asked for and could not be searched (see ``vector_error``)."""
        return self.vector_error is not None

    def index_of(self, seq: int) -> int | None:
        """The position of memory ``seq`` in the pool, if it is there."""
        for index, row in enumerate(self.rows):
            if row.seq == seq:
                return index
        return None


@dataclass(frozen=True, slots=True)
class Scoring:
    """A pool's candidates as a reranker scores them: their features with each piece of a
    turn described by its turn (:func:`recalld.retrieval.turns.take_turns`), each such
    piece's own features (``own``, by row) and the row it took from (``taken``), the
    channel set, which candidates have a cosine and which are notes, and, for a question
    that asks only about a period, whether each candidate is of it (else None)."""

    features: npt.NDArray[np.float64]
    own: dict[int, npt.NDArray[np.float64]]
    taken: dict[int, int]
    channels: Channels
    has_vector: list[bool]
    notes: list[bool]
    period_members: npt.NDArray[np.float64] | None = None


def score_pool(
    scoring: Scoring, reranker: Reranker, embedder_name: str | None
) -> tuple[npt.NDArray[np.float64], list[str], npt.NDArray[np.float64], dict[int, int]]:
    """Score ``scoring``'s candidates with ``reranker``: the scores (rounded as hits report
    them), the model of each, the features explain shows (a piece scored as itself shows
    its own) and the pieces scored by their turn (row -> the row they took from)."""
    features = scoring.features.copy()
    turns = dict(scoring.taken)
    scores, models = reranker.score(
        features, embedder_name, scoring.channels, scoring.has_vector, scoring.notes
    )
    pieces = list(turns)
    own_scores = np.zeros(0)
    if pieces:
        own_scores, _ = reranker.score(
            np.array([scoring.own[place] for place in pieces]),
            embedder_name,
            scoring.channels,
            [scoring.has_vector[place] for place in pieces],
            [scoring.notes[place] for place in pieces],
        )
    members = scoring.period_members
    if members is not None:
        scores = PERIOD_ONLY_SCORE * members + (1.0 - PERIOD_ONLY_SCORE) * scores
        own_scores = PERIOD_ONLY_SCORE * members[pieces] + (1.0 - PERIOD_ONLY_SCORE) * own_scores
    # Hits report their score to 6 decimals: the threshold compares the same value, so a
    # min_score equal to a reported score keeps that hit (0.4637666 shows as 0.463767).
    # A piece of a turn sorts one step under the piece it took its features from.
    scores = np.round(scores, SCORE_DECIMALS)
    if pieces:
        own_rounded = np.round(own_scores, SCORE_DECIMALS).tolist()
        step = 10.0**-SCORE_DECIMALS
        for place in cap_turns(scores, turns, dict(zip(pieces, own_rounded, strict=True)), step):
            # Scored as itself: explain shows its own features and no turn.
            features[place] = scoring.own[place]
            del turns[place]
        scores = np.round(scores, SCORE_DECIMALS)
    return scores, models, features, turns


def _neighbour_scope(scope: Scope) -> Scope:
    # Neighbours are context, not results: the namespace and expiry apply, row filters do not.
    return Scope(namespaces=scope.namespaces, now=scope.now, include_expired=scope.include_expired)


def hit_backend(name: str) -> str:
    """The backend a hit reports for a store's keyword index: ``fts`` for any full-text
    index (FTS5, PostgreSQL), so what clients see does not depend on the store."""
    return "fts" if name in FULL_TEXT_BACKENDS else name


def build_pool(
    request: PoolRequest,
    store: RetrievalStore,
    reranker: Reranker,
    index: VectorSource | None,
    nearest: Callable[[], Nearest | None],
    embedder_name: str | None,
    terms: RowTermsCache,
    *,
    vector_soon: Callable[[], Vectors | None] | None = None,
    stated: StatedPeriods | None = None,
) -> Pool:
    """Gather, describe and score the candidates of ``request`` (see the module docstring).

    ``nearest`` gives the query's vector and its nearest memories in ``index`` once
    the keyword candidates are in (they may still be on their way); None when the
    vector channel is not used (keyword mode, no embedder, embedding failed);
    ``terms`` holds the memories' terms (built with ``reranker.keyword_parameters``
    and the index terms of the time words,
    :func:`recalld.retrieval.temporal.time_terms`); ``stated`` reads the periods
    memories' texts state (None: none is read). ``vector_soon`` gives the same
    vector as soon as it is embedded (None: as ``nearest``): when ``index`` reads its
    vectors from the database, the keyword candidates' cosines are read while the
    vector search still runs.
    """
    scope = request.scope
    rows: dict[int, CandidateRow] = {}
    backends: dict[int, list[str]] = {}
    like_shares: dict[int, float] = {}
    if request.mode != "vector":
        for found in store.keyword_candidates(
            scope, request.text, request.words, request.keyword_depth
        ):
            rows[found.row.seq] = found.row
            backends[found.row.seq] = [hit_backend(found.backend)]
            if found.backend == "like" and not request.words:
                like_shares[found.row.seq] = found.like_share
    for found in request.told_after:
        if found.row.seq not in rows:
            rows[found.row.seq] = found.row
            backends[found.row.seq] = [hit_backend(found.backend)]
    parameters = terms.parameters
    keywords = prepare_query(
        store, scope.namespaces, request.text, request.words, parameters, terms.lexicon
    )
    keyword_cache: dict[int, KeywordScore] = {}

    def score(found: Sequence[CandidateRow]) -> None:
        # BM25F of the rows not scored yet, in one batch (score_rows).
        todo = []
        for row in found:
            if row.seq in keyword_cache:
                continue
            share = like_shares.get(row.seq)
            if share is not None:
                # A query with no word (only symbols): the substring match is all the evidence.
                keyword_cache[row.seq] = KeywordScore(
                    raw=share, normalised=share, matched_share=share
                )
            else:
                todo.append(row)
        scored = score_rows(keywords, [terms.of(row) for row in todo], parameters)
        keyword_cache.update(zip([row.seq for row in todo], scored, strict=True))

    def keyword_of(row: CandidateRow) -> KeywordScore:
        cached = keyword_cache.get(row.seq)
        if cached is None:
            score([row])
            cached = keyword_cache[row.seq]
        return cached

    # While the vector side may still be on its way: score the keyword candidates, read
    # (and score) the graph's best memories that are not among them, and describe the
    # keyword candidates (their terms, speaker, question, neighbours).
    score(list(rows.values()))
    reached = sorted(request.graph, key=lambda seq: -request.graph[seq].graph_score)
    early = [seq for seq in reached if seq not in rows][:NEW_CANDIDATES]
    graph_rows = store.rows(scope, early) if early else {}
    score(list(graph_rows.values()))
    all_terms = keywords.all_terms
    neighbour_scope = _neighbour_scope(scope)
    neighbours: dict[int, Neighbours] = {}
    described: dict[int, Candidate] = {}
    period = request.period
    exact = None if period is None else period.exact()

    def describe(found: Sequence[CandidateRow]) -> None:
        # What a candidate is whatever else the pool holds (its neighbours' scores and the
        # cosines come once the pool is complete).
        # Only a memory with a source and a time has neighbours (a store of plain notes
        # asks nothing).
        placed = [row.seq for row in found if row.source is not None and row.at_utc is not None]
        if placed:
            neighbours.update(store.neighbours(neighbour_scope, placed))
        score(found)
        reached_by_graph = request.graph
        of = terms.of
        for row in found:
            seq = row.seq
            row_terms = of(row)
            # Positional, the rest set only when not the default: this runs for ~200
            # candidates a recall, and keyword arguments cost twice as much.
            candidate = Candidate(
                seq,
                row.source,
                keyword_cache[seq],  # scored by score(found) above
                None,
                not all_terms.isdisjoint(row_terms.name_terms),
                bool(row.speaker),
                row_terms.mentions_time,
                row_terms.content_terms,
            )
            candidate.question = row_terms.asks
            pair = neighbours.get(seq)
            if pair is not None:
                candidate.previous_question = pair.previous is not None and pair.previous.asks
                candidate.next_question = pair.next is not None and pair.next.asks
            graph = reached_by_graph.get(seq)
            if graph is not None:
                candidate.graph_score = graph.graph_score
                candidate.entity_overlap = graph.entity_overlap
            if period is not None and exact is not None and row.at_utc is not None:
                at = from_storage(row.at_utc)
                candidate.in_period = float(period.holds(at))
                candidate.told_after = period.told_after(at)
                # Only a text that names a time, written when it could state a past time
                # inside the period, is read.
                told = (
                    stated.of(row.content, at, period.zone)
                    if stated is not None
                    and period.may_be_stated_at(at)
                    and (row_terms.mentions_time or names_a_short_date(row.content))
                    else None
                )
                candidate.stated_in_period = float(told is not None and told.overlaps(period))
                tells = None if told is None else told.exact()
                if tells is not None and exact.contains(tells):
                    candidate.of_period = True
                elif not exact.holds(at):
                    candidate.of_period = False
                else:
                    # Written then, unless it opens by naming another time ("Yesterday:
                    # went for a run", written on the day asked about).
                    opening = (
                        None
                        if tells is None or tells.overlaps(exact)
                        else opening_period(row.content, at, period.zone)
                    )
                    candidate.of_period = opening is None or opening.exact().overlaps(exact)
            described[row.seq] = candidate

    describe(list(rows.values()))
    soon_cosines: dict[int, float] = {}
    soon = None
    if (
        request.mode == "hybrid"
        and vector_soon is not None
        and index is not None
        and index.reads_database
    ):
        soon = vector_soon()
        if soon is not None:
            # The same cosines the pool would read once the search returned, read while
            # it runs: of the keyword candidates and of their neighbours.
            sides = _sides(neighbours)
            soon_cosines = index.similarities(soon, [*rows, *sorted(sides - rows.keys())])
    cosines: dict[int, float] = {}
    near = nearest() if request.mode != "keyword" else None
    vector = None if near is None else near.vector
    if vector is not soon:
        soon_cosines = {}  # read for another vector (none is expected): read again below
    use_vectors = index is not None and vector is not None
    added: list[CandidateRow] = []  # not described yet
    if index is not None and near is not None:
        cosines.update(near.found)
        new = [seq for seq, _ in near.found if seq not in rows]
        added += _add_rows(rows, backends, new, store.rows(scope, new))
        for seq, _ in near.found:
            if seq in backends:
                backends[seq].append("vector")
    if request.graph:
        # The graph adds its best memories that neither channel found (read above, unless
        # the vector search took some of them).
        new = [seq for seq in reached if seq not in rows][:NEW_CANDIDATES]
        unread = sorted(set(new) - set(early))
        if unread:
            graph_rows.update(store.rows(scope, unread))
        added += _add_rows(rows, backends, new, graph_rows)
        for seq in reached:
            if seq in backends:
                backends[seq].append("graph")
    describe(added)
    # A candidate's next memory that goes on with its turn is a candidate too (turns.py).
    following = followers(rows, neighbours)
    added = []
    if following:
        added += _add_rows(rows, backends, following, store.rows(scope, following))
        for seq in following:
            if seq in backends:
                backends[seq].append("turn")
    extra = [seq for seq in request.extra_seqs if seq not in rows]
    if extra:
        # Explain scores its memory even when filters or expiry hide it from recall.
        everything = Scope(namespaces=scope.namespaces, now=scope.now, include_expired=True)
        added += _add_rows(rows, backends, extra, store.rows(everything, extra))
    if added:
        describe(added)
    ordered = list(rows.values())
    around = _sides(neighbours)
    around_cosines: dict[int, float] = {}
    if index is not None and vector is not None:
        # One read for the cosines still unknown: candidates the vector search did not
        # return, and neighbours that are not candidates (unless read early).
        missing = [
            row.seq for row in ordered if row.seq not in cosines and row.seq not in soon_cosines
        ]
        missing += sorted(seq for seq in around if seq not in rows and seq not in soon_cosines)
        computed = {**soon_cosines, **index.similarities(vector, missing)}
        cosines.update(
            (row.seq, computed[row.seq])
            for row in ordered
            if row.seq not in cosines and row.seq in computed
        )
        around_cosines = {
            seq: cosines[seq] if seq in rows else computed[seq]
            for seq in around
            if seq in cosines or seq in computed
        }

    def neighbour_keyword(side: Neighbour | None) -> float:
        # A neighbour's BM25F counts when it is a candidate itself; one that is not among
        # the best keyword matches (nor the nearest vectors) adds nothing.
        if side is None or side.seq not in rows:
            return 0.0
        return keyword_of(rows[side.seq]).normalised

    candidates = []
    for row in ordered:
        candidate = described[row.seq]
        pair = neighbours.get(row.seq)
        if use_vectors:
            candidate.cosine = cosines.get(row.seq)
        if pair is not None:
            candidate.in_sequence = pair.previous is not None or pair.next is not None
            candidate.previous_keyword = neighbour_keyword(pair.previous)
            candidate.next_keyword = neighbour_keyword(pair.next)
            if pair.previous is not None:
                candidate.previous_cosine = around_cosines.get(pair.previous.seq, 0.0)
            if pair.next is not None:
                candidate.next_cosine = around_cosines.get(pair.next.seq, 0.0)
        candidates.append(candidate)
    shape = QueryShape(
        terms=len(keywords.terms),
        asks_about_time=asks_about_time(request.text),
        unseen_name=keywords.unseen_name,
    )
    depth = max(request.keyword_depth, request.vector_depth)
    features = feature_matrix(candidates, shape, depth)
    starts = turn_starts(ordered, neighbours)
    # What the pieces of a turn score by their own features (cap_turns keeps the higher).
    own = {place: features[place].copy() for place in starts}
    turns = take_turns(features, starts) if starts else {}
    channels: Channels = (
        "hybrid+graph" if request.mode == "hybrid" and request.graph_channel else request.mode
    )
    period_only = period is not None and request.period_only
    if period_only:
        # Besides its period the question asks nothing: its words ("yesterday") match what
        # memories of other days say, so only what it means is compared, as for a question
        # of stop words alone (see hybrid), and the period's memories are lifted below.
        channels = "vector" if channels != "keyword" else channels
    scoring = Scoring(
        features=features,
        own=own,
        taken=turns,
        channels=channels,
        has_vector=[item.cosine is not None for item in candidates],
        notes=[item.note for item in candidates],
        period_members=(
            np.array([item.of_period for item in candidates], dtype=np.float64)
            if period_only
            else None
        ),
    )
    scores, models, shown, scored_as_turn = score_pool(scoring, reranker, embedder_name)
    return Pool(
        rows=ordered,
        backends=[backends[row.seq] for row in ordered],
        candidates=candidates,
        features=shown,
        scores=scores,
        models=models,
        keywords=keywords,
        period=period,
        period_only=period_only,
        turns={ordered[row].seq: ordered[start].seq for row, start in scored_as_turn.items()},
        scoring=scoring,
    )


def _sides(neighbours: Mapping[int, Neighbours]) -> set[int]:
    """The seqs of the previous and next memories in ``neighbours``."""
    return {side.seq for pair in neighbours.values() for side in (pair.previous, pair.next) if side}


def _add_rows(
    rows: dict[int, CandidateRow],
    backends: dict[int, list[str]],
    seqs: Sequence[int],
    found: Mapping[int, CandidateRow],
) -> list[CandidateRow]:
    """Add the rows of ``seqs`` that ``found`` holds, in the order of ``seqs``; returns them.

    Not in the order the store returned them: that follows SQLite's plan, which
    changes with its statistics, and the pool's order breaks ties between equal
    scores (the same query gave a different order of tied hits in the process that
    wrote the memories and in a fresh one).
    """
    added = []
    for seq in seqs:
        row = found.get(seq)
        if row is not None:
            rows[seq] = row
            backends[seq] = []
            added.append(row)
    return added


def channels_of(pool: Pool, position: int) -> dict[str, float]:
    """The raw channel values of one pool member (``keyword``, ``text`` with a vector,
    ``graph`` when the graph reached it, ``period`` when the query names a period: 1 when
    the memory's ``at`` is inside it, else 0, and ``period_only`` when the query asks only
    what happened in it: 1 when the memory is one of the period's, see
    :attr:`~recalld.retrieval.features.Candidate.of_period`, else 0)."""
    candidate = pool.candidates[position]
    channels = {"keyword": round(candidate.keyword.normalised, 6)}
    if candidate.cosine is not None:
        channels["text"] = round(candidate.cosine, 6)
    if candidate.graph_score > 0:
        channels["graph"] = round(candidate.graph_score, 6)
    if not math.isnan(candidate.in_period):
        channels["period"] = candidate.in_period
    if pool.period_only:
        channels["period_only"] = float(candidate.of_period)
    return channels


def features_of(pool: Pool, position: int) -> dict[str, float]:
    """Every feature value of one pool member (NaN, a missing cosine, is left out)."""
    values = pool.features[position]
    return {
        name: round(float(value), 6)
        for name, value in zip(FEATURES, values, strict=True)
        if not np.isnan(value)
    }


def tie_order(pool: Pool) -> npt.NDArray[np.int64]:
    """The seq of each pool member: what breaks ties between equal scores (the oldest,
    the lower seq, first, as every store's keyword candidate search breaks them)."""
    return np.fromiter((row.seq for row in pool.rows), dtype=np.int64, count=len(pool.rows))
