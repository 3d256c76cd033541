"""Hybrid recall: candidates from the keyword index and the vector index, fused.

The service calls :meth:`HybridRetriever.retrieve`; it asks the store for
keyword candidates (FTS5 BM25, PostgreSQL full text, or LIKE), embeds the query
and asks for vector candidates under the same namespace and filters — from the
database itself when the store offers :attr:`~recalld.store.base.Store.vector_search`
(pgvector), else from this process's
:class:`~recalld.retrieval.vector_index.VectorIndex` —, looks up the cosine of
keyword hits that have a vector, and fuses everything
(:mod:`recalld.retrieval.fusion`). In hybrid mode a
:class:`~recalld.retrieval.graph_channel.GraphChannel` (when given) then mixes
in graph scores and graph-only candidates. Each hit carries the backends that
found it (``fts`` for either full-text index, ``like``, ``vector``, ``graph``).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from recalld._time import Clock, utc_now
from recalld.embeddings.base import Embedder, Vectors
from recalld.model import Memory
from recalld.retrieval.fusion import Candidate, FusionParameters, fuse
from recalld.retrieval.graph_channel import GraphChannel
from recalld.retrieval.vector_index import VectorIndex
from recalld.store.base import FULL_TEXT_BACKENDS, Scope, Store

__all__ = ["HybridRetriever", "Mode", "Retrieved"]

logger = logging.getLogger(__name__)

Mode = Literal["hybrid", "keyword", "vector"]
QUERY_CACHE_SIZE = 256


@dataclass(frozen=True)
class Retrieved:
    """One fused result: the memory, its score, channel parts and the backends that found it."""

    memory: Memory
    score: float
    channels: dict[str, float]
    backends: list[str]


def hit_backend(name: str) -> str:
    """The backend a hit reports for a store's keyword index: ``fts`` for any full-text
    index (FTS5, PostgreSQL), so what clients see does not depend on the store."""
    return "fts" if name in FULL_TEXT_BACKENDS else name


def _has_row_filters(scope: Scope) -> bool:
    return bool(
        scope.kind is not None
        or scope.category is not None
        or scope.tags_any
        or scope.tags_all
        or scope.since is not None
        or scope.until is not None
        or scope.created_since is not None
        or scope.created_until is not None
    )


class HybridRetriever:
    """Keyword + vector candidates fused into scored hits, for one store and one embedder."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        *,
        parameters: FusionParameters,
        ann_threshold: int,
        index_prefix: Path | None,
        candidate_floor: int = 50,
        graph: GraphChannel | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self._store = store
        self._clock = clock
        self.graph = graph
        self._embedder = embedder
        self.parameters = parameters
        self._ann_threshold = ann_threshold
        self._index_prefix = index_prefix
        self._candidate_floor = candidate_floor
        self._index: VectorIndex | None = None
        self._lock = threading.Lock()
        self._query_cache: OrderedDict[str, Vectors] = OrderedDict()

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
        for saved in prefix.parent.glob(prefix.name + "*"):
            legacy = saved.name.endswith(".faiss") or (
                saved.name.endswith(".npz") and not saved.name.endswith(".graph.npz")
            )
            if legacy:
                saved.unlink(missing_ok=True)

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
        vector: Vectors = self._embedder.embed_batch([text])[0]
        with self._lock:
            self._query_cache[text] = vector
            while len(self._query_cache) > QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return vector

    def retrieve(
        self, scope: Scope, text: str, terms: list[str], limit: int, mode: Mode = "hybrid"
    ) -> list[Retrieved]:
        """The ``limit`` best memories for ``text`` under ``scope``; see the module docstring."""
        depth = max(limit * 3, self._candidate_floor)
        candidates: dict[int, Candidate] = {}
        memories: dict[int, Memory] = {}
        if mode != "vector":
            for match in self._store.search(scope, text, terms, depth):
                seq = match.memory.seq
                memories[seq] = match.memory
                candidates[seq] = Candidate(
                    seq=seq, keyword=match.keyword, backends=[hit_backend(match.backend)]
                )
        if mode != "keyword" and text.strip():
            self._add_vector_candidates(scope, text, depth, candidates, memories)
        if mode == "keyword":
            for candidate in candidates.values():
                candidate.cosine = None
        ranked = fuse(candidates, self.parameters)
        if self.graph is not None and mode == "hybrid":
            ranked = self.graph.rerank(scope, text, ranked, memories)
        ranked = ranked[:limit]
        return [
            Retrieved(
                memory=memories[item.seq],
                score=item.score,
                channels=item.channels,
                backends=item.backends,
            )
            for item in ranked
        ]

    def _add_vector_candidates(
        self,
        scope: Scope,
        text: str,
        depth: int,
        candidates: dict[int, Candidate],
        memories: dict[int, Memory],
    ) -> None:
        search = self._store.vector_search
        index = None if search is not None else self.index()
        if self._embedder is None or (search is None and (index is None or index.size == 0)):
            return
        try:
            query = self._embed_query(text)
        except Exception as error:  # noqa: BLE001 - recall must answer from the keyword index
            logger.warning("vector recall skipped: embedding the query failed: %s", error)
            return
        if search is not None:
            found = search.nearest(self._embedder.name, query, scope, depth)
        else:
            assert index is not None
            allowed = self._store.semantic.visible_seqs(scope) if _has_row_filters(scope) else None
            found = index.search(query, scope.namespaces, depth, allowed_seqs=allowed)
        new_seqs = [seq for seq, _ in found if seq not in candidates]
        # Re-check visibility (expiry, deletes since the index caught up) in one query.
        visible = self._store.semantic.visible_memories(scope, new_seqs)
        for seq, cosine in found:
            if seq in candidates:
                candidates[seq].cosine = cosine
                candidates[seq].backends.append("vector")
            elif seq in visible:
                memories[seq] = visible[seq]
                candidates[seq] = Candidate(seq=seq, cosine=cosine, backends=["vector"])
        keyword_only = [seq for seq, item in candidates.items() if item.cosine is None]
        if keyword_only:
            for seq, cosine in self._cosines(query, keyword_only).items():
                candidates[seq].cosine = cosine

    def _cosines(self, query: Vectors, seqs: Sequence[int]) -> dict[int, float]:
        """Cosine of the query with the stored vectors of ``seqs`` (those that have one)."""
        search = self._store.vector_search
        if search is not None:
            assert self._embedder is not None
            return search.cosines(self._embedder.name, query, seqs)
        index = self.index()
        return {} if index is None else index.similarities(query, seqs)

    def text_similarities(
        self, text: str, namespace: str, seqs: Sequence[int], nearest: int
    ) -> dict[int, float]:
        """Cosine of ``text`` with the indexed vectors of ``seqs`` and of its ``nearest``
        neighbours in ``namespace`` (empty without an embedder or any vector)."""
        search = self._store.vector_search
        index = None if search is not None else self.index()
        if self._embedder is None or not text.strip():
            return {}
        if search is None and (index is None or index.size == 0):
            return {}
        try:
            query = self._embed_query(text)
        except Exception as error:  # noqa: BLE001 - context recall must answer without it
            logger.warning("text similarity skipped: embedding failed: %s", error)
            return {}
        found: dict[int, float] = {}
        if nearest and search is not None:
            scope = Scope(namespaces=(namespace,), now=self._clock())
            found = dict(search.nearest(self._embedder.name, query, scope, nearest))
        elif nearest and index is not None:
            found = dict(index.search(query, [namespace], nearest))
        missing = [seq for seq in seqs if seq not in found]
        found.update(self._cosines(query, missing))
        return {seq: max(0.0, min(1.0, float(cosine))) for seq, cosine in found.items()}

    def close(self) -> None:
        """Persist the ANN graph (if one was built) so the next process starts fast."""
        with self._lock:
            index = self._index
        if index is not None and index.uses_ann:
            index.save()
