"""Recall: a wide candidate pool, a reranker's calibrated score, a threshold, one hit per memory.

:meth:`HybridRetriever.retrieve` builds the pool of a query
(:mod:`recalld.retrieval.pool`: keyword and vector candidates under the same
namespace and filters, their features and reranker probabilities; the vectors
come from this process's :class:`~recalld.retrieval.vector_index.VectorIndex`,
or from the database itself when the store offers
:attr:`~recalld.store.base.Store.vector_search`, see
:mod:`recalld.retrieval.vector_source`), drops
candidates scoring under ``min_score``, collapses near-duplicates
(:mod:`recalld.retrieval.duplicates`) and returns the ``limit`` best. The
``score`` of a hit is the reranker's probability (for a question that asks only
what happened in a period, "what did I do yesterday?", half of it, plus
:data:`~recalld.retrieval.pool.PERIOD_ONLY_SCORE` for the period's memories);
its ``channels`` keep the raw values (``keyword`` = normalised BM25F, ``text``
= cosine, ``graph`` = the knowledge graph's score when the graph reached it,
``period`` = 1 or 0 when the query names a period of time and the memory's
``at`` is or is not inside it, see :mod:`recalld.retrieval.periods`,
``period_only`` = 1 or 0 when the query asks only what happened in that period
and the memory does or does not belong to it, and ``duplicates`` when it
stands for others); its ``backends`` say which index found it (``fts`` for
either full-text index, FTS5 or PostgreSQL's, ``like``, ``vector``, ``graph``, or
``turn`` for a chat message that goes on with a candidate's turn, see
:mod:`recalld.retrieval.turns`).

With the graph channel (:class:`~recalld.retrieval.graph_channel.GraphChannel`,
``RECALLD_GRAPH_RECALL=true``; off by default), the memories the graph reaches
from the entities the query names join the pool as candidates, and every
candidate's graph score and entity overlap are features of the reranker's
``hybrid+graph`` model.

When the embedder fails (:class:`~recalld.errors.EmbeddingError`, e.g. an
unreachable embedding endpoint) recall answers from the keyword index alone
and every hit also lists ``vector-unavailable``, so a caller can tell a
degraded answer from a complete one; a recall that leaves with no hit raises
the error instead (an empty answer would say nothing matches when the meaning
was never compared); any other exception is a bug and propagates.

The query's embedding (started by :meth:`HybridRetriever.embed_soon` as soon
as the service has checked the request) and its vector search run on a helper
thread while the keyword index and the graph find their candidates and the
keyword candidates are described (none of which needs the vector; the model,
SQLite and faiss release the GIL while they work), so a hybrid recall waits
for the longer of the two, not their sum.
"""

from __future__ import annotations

import functools
import glob
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path

import numpy as np

from recalld._text import STOPWORDS
from recalld._time import Clock, utc_now
from recalld.embeddings.base import Embedder, Loadable, Vectors, checked_vectors, unreadable
from recalld.embeddings.endpoint_rest import Resting
from recalld.errors import EmbedderUnavailableError, EmbeddingError
from recalld.model import Memory
from recalld.retrieval.duplicates import Selection, select
from recalld.retrieval.graph_channel import GraphChannel
from recalld.retrieval.keyword import ROW_TERMS_CACHE, RowTermsCache
from recalld.retrieval.period_matching import StatedPeriods, asks_only_about, telling_words
from recalld.retrieval.periods import TOLD_AFTER, Period, query_period
from recalld.retrieval.pool import (
    Mode,
    Nearest,
    Pool,
    PoolRequest,
    build_pool,
    channels_of,
    tie_order,
)
from recalld.retrieval.rerank import Reranker
from recalld.retrieval.temporal import time_terms
from recalld.retrieval.vector_index import VectorIndex
from recalld.retrieval.vector_source import DatabaseVectors, VectorSource
from recalld.store.base import Scope, Store, shared_between_threads
from recalld.store.retrieval import KeywordCandidate

__all__ = ["VECTOR_UNAVAILABLE", "HybridRetriever", "Mode", "RetrievalDepths", "Retrieved"]

logger = logging.getLogger(__name__)

QUERY_CACHE_SIZE = 256
# Threads that embed queries beside the recalls waiting for them (one per concurrent recall).
QUERY_EMBEDDING_THREADS = 4
# Query embeddings started by embed_soon and not yet taken by a recall (older ones dropped).
PENDING_QUERIES = 16
# The longest period a query names whose own nearest memories are searched (a quarter and a
# little more: "the last 3 months" is 94 days). A year or an open range ("since March") may
# hold most of a store, where that search would scan most rows to find what the unfiltered
# search already found.
PERIOD_SEARCH_SPAN = timedelta(days=100)
# How far back a period named without a year ("in June") is looked for among the memories.
YEARS_BACK = 10
# Memories whose stated period (read from their text as of their ``at``) is kept: a few
# thousand short tuples, read only for questions that name a period.
STATED_CACHE = 8_192
# Listed in a hit's backends when the vector side could not be asked (the embedder failed).
VECTOR_UNAVAILABLE = "vector-unavailable"


@dataclass(frozen=True)
class Retrieved:
    """One hit: the memory, its score, channel values and the backends that found it."""

    memory: Memory
    score: float
    channels: dict[str, float]
    backends: list[str]


@dataclass(frozen=True)
class RetrievalDepths:
    """How many candidates each channel contributes, and when two hits are duplicates."""

    keyword: int = 100
    vector: int = 100
    duplicate_cosine: float = 0.97
    # The nearest memories of the period a query names ("last weekend"), beside the others.
    period: int = 30


def _unanswered(
    error: EmbeddingError, asked: Sequence[str], candidates: int, min_score: float
) -> EmbeddingError:
    """The error for a recall left with no hit because its vectors could not be searched:
    an empty answer would read as "nothing stored matches" when the meaning was never
    compared. Transient when ``error`` is (:class:`EmbedderUnavailableError`).
    ``candidates``: how many the other channels found (kept none of them: under
    ``min_score``, or forgotten meanwhile)."""
    if candidates:
        found = (
            f"recall kept none of the {candidates} candidates found without the vectors"
            f" (min_score {min_score:g}) and "
        )
    elif "keyword" in asked:
        found = "recall found nothing by keyword and "
    else:
        found = "recall "
    if isinstance(error, EmbedderUnavailableError):
        return EmbedderUnavailableError(f"{found}could not search by meaning: {error}")
    return EmbeddingError(f"{found}could not search by meaning: {error}")


def _log_warm_up_failure(done: Future[None]) -> None:
    error = None if done.cancelled() else done.exception()
    if error is not None:
        logger.warning("warming up recall failed (the first recall will try again): %s", error)


def _tighter(
    first: datetime | None, second: datetime | None, pick: Callable[[datetime, datetime], datetime]
) -> datetime | None:
    """The tighter of two optional bounds (``pick``: max for a start, min for an end)."""
    if first is None or second is None:
        return second if first is None else first
    return pick(first, second)


def _narrowed(scope: Scope, period: Period) -> Scope | None:
    """``scope`` kept to ``period`` (None: the two do not overlap)."""
    since = _tighter(scope.since, period.start, max)
    until = _tighter(scope.until, period.end, min)
    if since is not None and until is not None and since >= until:
        return None
    return replace(scope, since=since, until=until)


def _nothing() -> None:
    return None


def _then(
    embedding: Future[Vectors],
    search: Callable[[Callable[[], Vectors]], Nearest],
    executor: ThreadPoolExecutor,
) -> Future[Nearest]:
    """The vector search of ``embedding``'s vector, run by the thread that finishes the
    embedding as soon as it does, so no second helper thread has to wake up for it
    (~0.1 ms a recall); on a helper thread of ``executor`` when the embedding is already
    done (the caller's thread would then search before its own work). The search's
    answer, or what it or the embedding raised, is the returned future's."""
    if embedding.done():
        return executor.submit(search, embedding.result)
    found: Future[Nearest] = Future()

    def run(done: Future[Vectors]) -> None:
        try:
            found.set_result(search(done.result))
        except BaseException as error:  # noqa: BLE001 - re-raised by the waiting recall
            found.set_exception(error)

    # Run at once, in this thread, if the embedding finished since done() was asked.
    embedding.add_done_callback(run)
    return found


class HybridRetriever:
    """Keyword + vector candidates reranked into calibrated hits, for one store and embedder."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        *,
        reranker: Reranker,
        depths: RetrievalDepths,
        ann_threshold: int,
        index_prefix: Path | None,
        graph: GraphChannel | None = None,
        clock: Clock = utc_now,
        zone: tzinfo | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        # The user's calendar for the periods queries name (None: this machine's offset).
        self._zone = zone
        self.graph = graph
        self._embedder = embedder
        self.reranker = reranker
        self.depths = depths
        self._ann_threshold = ann_threshold
        self._index_prefix = index_prefix
        self._index: VectorIndex | None = None
        self._lock = threading.Lock()
        self._query_cache: OrderedDict[str, Vectors] = OrderedDict()
        self._pending: OrderedDict[str, Future[Vectors]] = OrderedDict()
        self._time_terms: frozenset[str] | None = None
        self._row_terms: RowTermsCache | None = None
        self._stated: StatedPeriods | None = StatedPeriods(STATED_CACHE)
        self._embedding: ThreadPoolExecutor | None = None
        self._closed = False
        self.warming: Future[None] | None = None
        """What :meth:`warm_up` started (None: never asked, or nothing to warm)."""

    @property
    def embedder(self) -> Embedder | None:
        """The embedder whose vectors are searched (None: keyword only)."""
        return self._embedder

    def index(self) -> VectorIndex | None:
        """The vector index of the configured model, caught up with the database.

        None without an embedder, and when the database searches vectors itself.
        """
        if self._embedder is None or self._store.vector_search is not None:
            return None
        with self._lock:
            if self._index is None:
                self._index = VectorIndex(
                    self._store.semantic,
                    self._embedder.name,
                    self._embedder.dimension,
                    ann_threshold=self._ann_threshold,
                    directory_and_prefix=self._index_prefix,
                )
            index = self._index
        index.refresh()
        return index

    def after_forget(self) -> None:
        """Leave no forgotten vector in memory or on disk.

        The loaded index catches up (the forgotten row's codes are zeroed). The
        saved graph holds links and seqs only, never a vector, so it stays; files
        of the float32 graph of earlier versions (``.faiss``, which held vectors)
        are deleted whether or not this process loaded an index.
        """
        with self._lock:
            index = self._index
        if index is not None:
            index.refresh()
        if self._index_prefix is None:
            return
        prefix = Path(f"{self._index_prefix}-vectors-")
        # The name escaped (``notes[1].db`` matched notes1.db's files), and a file of a
        # database named alike (``<db>-vectors-x.db-vectors-m.npz``) left alone.
        for saved in prefix.parent.glob(glob.escape(prefix.name) + "*"):
            if "-vectors-" in saved.name[len(prefix.name) :]:
                continue
            legacy = saved.name.endswith(".faiss") or (
                saved.name.endswith(".npz") and not saved.name.endswith(".graph.npz")
            )
            if legacy:
                saved.unlink(missing_ok=True)

    def warm_up(self) -> Future[None] | None:
        """Load the vector index and the embedder's local model (a :class:`Loadable`; an
        HTTP embedder is not called) on a helper thread, so that a long-running server's
        first recall does not wait for them (a recall that comes sooner waits for the
        load as it would have loaded the index itself). None without an embedder, once
        closed, or on a private in-memory database (which another thread cannot read). A
        failure is logged; the recall that needs the index or the model meets it again
        and raises it."""
        if self._embedder is None or not shared_between_threads(self._store):
            return None
        with self._lock:
            if self.warming is not None:
                return self.warming
            executor = self._executor()
            if executor is None:
                return None
            self.warming = executor.submit(self._warm)
        self.warming.add_done_callback(_log_warm_up_failure)
        return self.warming

    def _warm(self) -> None:
        self.index()  # None when the database searches vectors itself (PostgreSQL)
        if isinstance(self._embedder, Loadable):
            self._embedder.load()

    def loaded_index(self) -> VectorIndex | None:
        """The index if this process has built it (for status; builds nothing)."""
        return self._index

    def _embed_query(self, text: str) -> Vectors:
        assert self._embedder is not None
        with self._lock:
            cached = self._query_cache.get(text)
            if cached is not None:
                self._query_cache.move_to_end(text)
                return cached
        vector: Vectors = checked_vectors(self._embedder.embed_batch([text]), 1, self._embedder)[0]
        with self._lock:
            self._query_cache[text] = vector
            while len(self._query_cache) > QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return vector

    def vectors(self, scope: Scope) -> VectorSource | None:
        """Where this query's vectors come from: the database when the store searches
        vectors itself (PostgreSQL), else this process's index (None: no embedder)."""
        search = self._store.vector_search
        if search is not None and self._embedder is not None:
            return DatabaseVectors(search, self._store.semantic, self._embedder.name, scope)
        return self.index()

    def _query_vector(self, text: str, index: VectorSource | None) -> Vectors | None:
        """The query's vector; None without vectors to search. Raises EmbeddingError."""
        if index is None or index.size == 0 or not text.strip():
            return None
        if unreadable(self._embedder, text):  # unknown tokens (embeddings.base.Reading)
            return None
        return self._embed_query(text)

    def _known_unavailable(self, text: str, scope: Scope) -> EmbeddingError | None:
        """Why no vector can be searched when there is none to search: an embedder that
        fails is why the memories have none (an endpoint down, resting, see
        :mod:`recalld.embeddings.endpoint_rest`; a local model that does not load), and
        a recall that skipped the query's embedding would not say so. A query embedding
        :meth:`embed_soon` already sent is awaited: until its answer, an endpoint never
        tried by this process (a CLI command's) looks available, and stays pending until
        answered, so a recall of the same words meanwhile awaits it too instead of
        embedding them again. Else the query is embedded now (a cached one at no cost; a
        resting endpoint fails at once with the reason): another recall of the same words
        may have taken the embedding over since, and a cue's text is embedded by nothing
        ahead. A local model is tried only when ``scope`` holds a memory: an empty store
        answers at once without loading it."""
        embedder = self._embedder
        if embedder is None or not text.strip():
            return None
        resting = embedder if isinstance(embedder, Resting) else None
        if resting is None and not self._store.semantic.any_visible(scope):
            return None
        with self._lock:
            started = self._pending.get(text)
        try:
            if started is not None:
                started.result()
            else:
                self._embed_query(text)
        except EmbeddingError as error:
            logger.warning("vector recall skipped: the embedder is unavailable: %s", error)
            return error
        finally:
            with self._lock:
                if started is not None and self._pending.get(text) is started:
                    del self._pending[text]
        return None

    def _executor(self) -> ThreadPoolExecutor | None:
        """The query threads (None once closed). Call with ``self._lock`` held."""
        if self._embedding is None and not self._closed:
            self._embedding = ThreadPoolExecutor(
                QUERY_EMBEDDING_THREADS, thread_name_prefix="recalld-query"
            )
        return self._embedding

    def embed_soon(self, text: str, mode: Mode) -> None:
        """Start embedding ``text`` on a helper thread for a recall about to need it, so the
        model works while the caller does what comes first (checks, the embedding queue's
        catch-up, the index's refresh); nothing for keyword mode, without an embedder, or
        when the vector is cached or already on its way. A recall takes the vector over
        (see :meth:`pool`); one that never comes only leaves it in the query cache."""
        if mode == "keyword" or self._embedder is None or not text.strip():
            return
        with self._lock:
            if text in self._query_cache or text in self._pending:
                return
            executor = self._executor()
            if executor is None:
                return
            self._pending[text] = executor.submit(self._embed_query, text)
            while len(self._pending) > PENDING_QUERIES:
                self._pending.popitem(last=False)

    def _nearest_later(
        self, scope: Scope, text: str, index: VectorSource | None, mode: Mode
    ) -> tuple[Callable[[], Vectors | None], Callable[[], Nearest | None]]:
        """The query's vector and its nearest memories, found on a helper thread while
        the caller asks the keyword index and the graph.

        Returns two callables: the first waits for the vector alone (so the caller can
        use it while the search still runs), the second for the vector and its nearest
        memories. Both raise what embedding raised (the second also what the search
        raised) and return None when there is nothing to search. Under a row filter
        (kind, tag, time) the in-process index needs the list of visible rows: the caller
        reads it here, while the query is embedded. A private in-memory SQLite database
        is seen only by the thread that opened it: there the helper only embeds, and the
        search runs in the caller's thread.
        """
        with self._lock:
            started = self._pending.pop(text, None)
        if mode == "keyword" or index is None or index.size == 0 or not text.strip():
            return _nothing, _nothing
        if unreadable(self._embedder, text):  # see _query_vector
            return _nothing, _nothing

        @functools.cache
        def embedded() -> Vectors:
            # The embedding embed_soon started (it raises what embedding raised), else now.
            return self._embed_query(text) if started is None else started.result()

        def visible_rows() -> list[int] | None:
            # The in-process index filters by a list of visible rows, read before waiting
            # for the vector (it does not need it: under a rare tag of a large file the
            # read takes milliseconds); the database applies the scope in its own
            # nearest-neighbour query.
            if scope.filters_rows and isinstance(index, VectorIndex):
                return self._store.semantic.visible_seqs(scope)
            return None

        def search_among(visible: list[int] | None, vector_of: Callable[[], Vectors]) -> Nearest:
            vector = vector_of()
            found = index.search(vector, scope.namespaces, self.depths.vector, allowed_seqs=visible)
            return Nearest(vector=vector, found=found)

        def search(vector_of: Callable[[], Vectors]) -> Nearest:
            return search_among(visible_rows(), vector_of)

        if mode == "vector":  # nothing to do meanwhile: a thread would only add its handoff
            return embedded, lambda: search(embedded)
        shared = shared_between_threads(self._store)
        with self._lock:
            cached = self._query_cache.get(text)
            if cached is not None:
                self._query_cache.move_to_end(text)
            executor = self._executor()
            if executor is None:  # closed: everything in the caller's thread
                return embedded, lambda: search(embedded)
            if cached is not None:
                if shared:
                    return (lambda: cached), executor.submit(search, lambda: cached).result
                return (lambda: cached), lambda: search(lambda: cached)
            # The queue is FIFO: an embedding always runs before the search that waits on it.
            embedding = started or executor.submit(self._embed_query, text)
        if shared and scope.filters_rows and isinstance(index, VectorIndex):
            # This thread reads the visible rows while the query is embedded (a helper of
            # their own waited for a core beside this thread and the embedding's: 1.4 ms
            # of a recall under a rare tag at 1M), then the search follows the embedding.
            search_listed = functools.partial(search_among, visible_rows())
            return embedding.result, _then(embedding, search_listed, executor).result
        if shared:
            return embedding.result, _then(embedding, search, executor).result
        return embedding.result, lambda: search(embedding.result)

    def pool(
        self,
        scope: Scope,
        text: str,
        words: Sequence[str],
        mode: Mode,
        extra: Sequence[int] = (),
        limit: int = 0,
    ) -> tuple[Pool, VectorSource | None]:
        """Every candidate of ``text`` under ``scope``, scored (and ``extra`` memories too).

        ``pool.vector_unavailable`` is set when the embedder failed (the pool then holds
        what the keyword index and the graph found). ``limit`` is how many hits the caller
        wants: a question that asks only about a period searches that many of the
        period's memories when it is more than the period depth.
        """
        if mode == "hybrid" and words and set(words) <= STOPWORDS:
            # A query of stop words alone ("the", "who is she?") names nothing: its words
            # are in most memories alike, and BM25 still found one "relevant". Only what it
            # means is compared, so a question about nothing comes back with nothing; a
            # store without an embedder has no meaning to compare, so nothing at all
            # (keyword mode still matches the words, when that is what is wanted).
            mode = "vector"
        failure: EmbeddingError | None = None
        try:
            index = self.vectors(scope)
        except EmbeddingError as error:
            # An embedder that must ask its endpoint for its dimension (http, none given)
            # cannot build the index while the endpoint is down: as when the query fails.
            logger.warning("vector recall skipped: the embedder is unavailable: %s", error)
            index, failure = None, error
        if failure is None and mode != "keyword" and (index is None or index.size == 0):
            failure = self._known_unavailable(text, scope)
        vector_later, later = self._nearest_later(scope, text, index, mode)
        period = self.period_of(text, scope.now)
        if period is not None and period.yearless:
            period = self._held(scope, period)
        period_only = period is not None and asks_only_about(text, period)
        period_depth = self.period_depth(period_only, limit)

        def vector_soon() -> Vectors | None:
            try:
                return vector_later()
            except EmbeddingError:
                return None  # nearest() meets the same error: it logs it and degrades

        def nearest() -> Nearest | None:
            nonlocal failure
            try:
                near = later()
            except EmbeddingError as error:
                logger.warning("vector recall skipped: embedding the query failed: %s", error)
                failure = error
                return None
            if near is None or period is None or not self.searches_period(period):
                return near
            # The period's own nearest memories join the others: "what did I do last
            # weekend?" shares no word with what was stored then, and among a large store
            # that memory is not among the nearest overall.
            seen = {seq for seq, _ in near.found}
            extra = self._period_nearest(scope, period, near.vector, index, period_depth)
            found = near.found + [(seq, cosine) for seq, cosine in extra if seq not in seen]
            return Nearest(vector=near.vector, found=found)

        told: list[KeywordCandidate] = []
        if period is not None and period_only and mode != "vector" and period_depth > 0:
            told = self._told_after(scope, period.exact(), period_depth)
        graph = {}
        graph_channel = self.graph is not None and mode == "hybrid"
        if graph_channel and self.graph is not None:
            graph = self.graph.features(scope, text)
        request = PoolRequest(
            scope=scope,
            text=text,
            words=words,
            mode=mode,
            keyword_depth=self.depths.keyword,
            vector_depth=self.depths.vector,
            extra_seqs=extra,
            graph=graph,
            graph_channel=graph_channel,
            period=period,
            period_only=period_only,
            told_after=told,
        )
        if self._time_terms is None:
            self._time_terms = time_terms(self._store.retrieval.tokenize)
        parameters = self.reranker.keyword_parameters
        terms = self._row_terms
        if terms is None or terms.parameters is not parameters:
            terms = RowTermsCache(
                self._store.retrieval, parameters, self._time_terms, ROW_TERMS_CACHE
            )
            self._row_terms = terms
        pool = build_pool(
            request,
            self._store.retrieval,
            self.reranker,
            index,
            nearest,
            None if self._embedder is None else self._embedder.name,
            terms,
            vector_soon=vector_soon,
            stated=self._stated,
        )
        pool.vector_error = failure
        vector_asked = mode != "keyword" and self._embedder is not None
        pool.asked = ("keyword",) * (mode != "vector") + ("vector",) * vector_asked
        return pool, index

    def period_of(self, text: str, now: datetime) -> Period | None:
        """The period ``text`` names on the user's calendar (None: it names none)."""
        zone = self._zone if self._zone is not None else now.astimezone().tzinfo
        assert zone is not None
        return query_period(text, now, zone)

    def searches_period(self, period: Period) -> bool:
        """Whether recall searches ``period``'s own nearest memories: a closed period of at
        most :data:`PERIOD_SEARCH_SPAN`, unless the depth setting is 0 (counted in days of
        its calendar, so the hour daylight saving time gives back inside it does not count)."""
        days = period.days()
        return self.depths.period > 0 and days is not None and days <= PERIOD_SEARCH_SPAN.days

    def _held(self, scope: Scope, period: Period) -> Period:
        """A period named without a year ("in June") as the latest one, at most
        :data:`YEARS_BACK` years back, in which the scope's namespaces hold a memory (else as
        read): "in June" asked in 2026 of a conversation held in 2023 is June 2023. The
        caller's other filters are left out of this lookup: it picks the year, the filters
        still pick the memories (and a rare tag would make each year's probe a scan)."""
        namespaces = Scope(namespaces=scope.namespaces, now=scope.now)
        for back in range(YEARS_BACK + 1):
            try:
                earlier = period.years_back(back)
            except (ValueError, OverflowError):
                break  # the calendar holds no earlier year (a clock in the year 5)
            narrowed = _narrowed(namespaces, earlier)
            if narrowed is not None and self._store.semantic.any_visible(narrowed):
                return earlier
        return period

    def period_depth(self, period_only: bool, limit: int) -> int:
        """How many of a period's memories recall searches: the period depth, or for a
        question that asks only about the period (answered by listing it) the caller's
        ``limit`` when that is more (0: the period's searches are off)."""
        depth = self.depths.period
        return max(depth, limit) if period_only and depth > 0 else depth

    def _told_after(self, scope: Scope, period: Period, depth: int) -> list[KeywordCandidate]:
        """The memories written soonest in the :data:`TOLD_AFTER` after ``period``
        (closed) that name a time the way one tells of it ("yesterday I ...", "on
        Saturday"), at most the period's depth: "what did I do last weekend?" is answered
        by Monday's "yesterday I fixed my bike" too, which shares no word with it (at
        most ``depth``)."""
        assert period.end is not None
        # Within a week of the calendar's end (9999-12-31), all that follows is its rest.
        room = datetime.max.replace(tzinfo=UTC) - period.end
        end = period.end + TOLD_AFTER if room > TOLD_AFTER else None
        after = Period(start=period.end, end=end, phrases=())
        narrowed = _narrowed(scope, after)
        if narrowed is None:
            return []
        words = telling_words(period)
        return self._store.retrieval.earliest_matches(narrowed, words, depth)

    def _period_nearest(
        self,
        scope: Scope,
        period: Period,
        vector: Vectors,
        index: VectorSource | None,
        depth: int,
    ) -> list[tuple[int, float]]:
        """The ``depth`` memories of ``period`` (within ``scope``) nearest to ``vector`` in
        ``index``."""
        narrowed = _narrowed(scope, period)
        if index is None or narrowed is None:
            return []
        if isinstance(index, VectorIndex):
            # This process's index searches among the period's rows, listed by the store.
            allowed = self._store.semantic.visible_seqs(narrowed)
            if not allowed:
                return []
            return index.search(vector, scope.namespaces, depth, allowed_seqs=allowed)
        # The database applies the narrowed scope in its own nearest-neighbour query.
        source = self.vectors(narrowed)
        if source is None:
            return []
        return source.search(vector, scope.namespaces, depth)

    def select(
        self,
        pool: Pool,
        index: VectorSource | None,
        min_score: float,
        limit: int,
        leave_out: Sequence[int] = (),
    ) -> Selection:
        """The hits of ``pool``: at least ``min_score``, one per near-duplicate group."""
        skipped = set(leave_out)
        # Equal scores oldest first (by seq), not in the order the store handed the
        # candidates over: that differs between the stores and with SQLite's plan, and it
        # picks which memory answers for a repeated text. Oldest first as the stores cut
        # their keyword candidates (BM25 and ts_rank ties).
        ranked = np.argsort(-pool.scores, kind="stable")
        ordered = pool.scores[ranked]
        if np.any(ordered[1:] == ordered[:-1]):
            ranked = np.lexsort((tie_order(pool), -pool.scores))
        ranked = ranked[pool.scores[ranked] >= min_score]
        order = [position for position in ranked.tolist() if position not in skipped]
        return select(pool.rows, order, limit, index, self.depths.duplicate_cosine)

    def retrieve(
        self,
        scope: Scope,
        text: str,
        words: Sequence[str],
        limit: int,
        mode: Mode = "hybrid",
        min_score: float = 0.0,
    ) -> list[Retrieved]:
        """The ``limit`` best memories for ``text`` under ``scope``; see the module docstring."""
        pool, index = self.pool(scope, text, words, mode, limit=limit)
        selection = self.select(pool, index, min_score, limit)
        seqs = [pool.rows[position].seq for position in selection.kept]
        memories = self._store.semantic.visible_memories(scope, seqs)
        results = []
        for position in selection.kept:
            memory = memories.get(pool.rows[position].seq)
            if memory is None:  # deleted or expired between the two reads
                continue
            channels = channels_of(pool, position)
            duplicates = len(selection.duplicates.get(position, []))
            if duplicates:
                channels["duplicates"] = float(duplicates)
            backends = list(pool.backends[position])
            if pool.vector_unavailable:
                backends.append(VECTOR_UNAVAILABLE)
            results.append(
                Retrieved(
                    memory=memory,
                    score=float(pool.scores[position]),  # rounded by the pool
                    channels=channels,
                    backends=backends,
                )
            )
        if not results and pool.vector_error is not None:
            raise _unanswered(
                pool.vector_error, pool.asked, len(pool.rows), min_score
            ) from pool.vector_error
        return results

    def text_similarities(
        self, text: str, namespace: str, seqs: Sequence[int], nearest: int
    ) -> dict[int, float]:
        """Cosine of ``text`` with the indexed vectors of ``seqs`` and of its ``nearest``
        neighbours in ``namespace`` (empty without an embedder or any vector). Raises
        :class:`EmbeddingError` when the embedder fails, or rests with no vector to search
        (see :meth:`_known_unavailable`): the caller decides what a cue without its
        meaning is worth."""
        scope = Scope(namespaces=(namespace,), now=self._clock())
        index = self.vectors(scope)
        if index is None or index.size == 0:
            failure = self._known_unavailable(text, scope)
            if failure is not None:
                raise failure
            return {}
        query = self._query_vector(text, index)
        if query is None:
            return {}
        found = dict(index.search(query, [namespace], nearest)) if nearest else {}
        missing = [seq for seq in seqs if seq not in found]
        found.update(index.similarities(query, missing))
        return {seq: max(0.0, min(1.0, float(cosine))) for seq, cosine in found.items()}

    def close(self) -> None:
        """Stop the query-embedding threads; persist the ANN graph (if one was built) so
        the next process starts fast."""
        with self._lock:
            index = self._index
            executor, self._embedding = self._embedding, None
            self._closed = True
        if executor is not None:
            executor.shutdown(wait=True)
        if index is not None and index.uses_ann:
            index.save()
