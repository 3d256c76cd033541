"""The in-process vector search structure for one model, rebuilt from the database.

The vectors table is the source of truth (float16 rows). Each process keeps the
configured model's vectors as signed 8-bit codes
(:mod:`recalld.retrieval.vector_graph`, 384 bytes a vector for MiniLM) in arrival
order, and catches up from the store's change sequence before every search, so
vectors written by another process (a separate ``recalld worker``) are seen at
once.

Search finds candidates over the codes, then re-scores them with exact dot
products of the stored float16 vectors (read back by primary key) and keeps the
top ``k``: the cosines it returns are exact (to float16), and the codes only
have to put the true top ``k`` among ``k + max(k / 4, 32)`` candidates.

* **Exact scan** (no graph yet, or few visible rows): faiss scans the codes in
  place with a bitmap of the visible rows (namespace wall, row filters, live
  rows) as its selector, so only visible rows can reach the top-k. When the
  visible rows are a small share of all (under :data:`GATHER_SHARE`: a rare
  tag or a small namespace in a large file) their codes are copied out a block
  at a time and only they are scanned, since testing every row's bit would cost
  more than the copy; each block is zeroed once scanned.
* **HNSW** (above ``ann_threshold`` vectors, for queries that see a large share
  of them): the graph is searched with the same bitmap inside the search
  (``efSearch`` grows as the visible share shrinks); rows added since the graph
  was last extended form a *tail* that is scanned exactly and merged, so a
  worker's new batch never stalls a query on graph insertion. The tail joins
  the graph once it holds :data:`TAIL_LIMIT` rows, and on close.

Why faiss HNSW over 8-bit codes (measured for issue 13 on 2 busy cores, one
thread per query): an exact scan of 100k codes costs ~2 ms, of 1M ~20 ms (the
signed codes searched with integer weights halved that again); the
graph (M 32, efConstruction 128, efSearch 256, wider beyond 179,200 rows: see
:func:`ef_search`) answers 100k in about 1.5 ms at
recall@10 0.98 after re-scoring (the top 10 of a search for 10). The old graph
(float32, efConstruction 40, efSearch 96) reached 0.72 at 100k.

The graph is persisted beside the database as its links only
(``<db>-vectors-<model>.graph.npz``, no vector content) and reloaded on start,
when its codes are rebuilt from the database (well under a second at 100k);
it is rebuilt when missing, unreadable, or when more than a quarter of its rows
are dead (deleted or re-embedded vectors), which also relearns the
quantiser's ranges. Dead rows are masked out of every search at once and
their codes zeroed, so a forgotten memory's vector leaves memory with its row.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from recalld.embeddings.base import Vectors, dot_rows
from recalld.retrieval.graph_files import model_slug
from recalld.retrieval.vector_graph import (
    Quantiser,
    allocate_codes,
    attach_links,
    code_view,
    load_links,
    new_code_store,
    new_graph,
    save_links,
    search_threads,
    trained_ranges,
)
from recalld.retrieval.vector_rows import NO_ROW, RowsBySeq
from recalld.store.file_modes import mode_beside
from recalld.store.semantic import (
    SemanticStore,
    VectorChanges,
    decode_stored_vectors,
    decode_vectors,
    widen_half,
)

__all__ = ["VectorIndex"]

logger = logging.getLogger(__name__)

# One part of a search's answer: scores and rows, best first.
Found = tuple[npt.NDArray[np.float32], npt.NDArray[np.intp]]

HNSW_NEIGHBOURS = 32
HNSW_EF_CONSTRUCTION = 128
# The beam of a search (at least the number of results wanted). 128 gave recall@10 0.98
# on the benchmark's heavy-headed corpus but 0.94-0.95 on its broad-vocabulary one at
# 100k; 256 gives 0.98 there for +0.45 ms (bench/RESULTS.md, issue 13 phase 3).
HNSW_EF_SEARCH = 256
# A larger graph needs a wider beam for the same recall: one more per this many rows
# beyond 179,200. With the signed 8-bit codes the benchmark's 1M graph reached recall@10
# 0.979 at efSearch 1,000, 0.986 at 1,400 and 0.992 at 2,000, and a search for 100
# candidates took 5.6, 6.9 and 8.9 ms (bench/RESULTS.md, issue 13, stop 34): 1,428 at 1M.
HNSW_ROWS_PER_EF = 700
HNSW_EF_MAX = 1024
# Up to this many rows the index also keeps each vector as stored (float16, 768 bytes for
# MiniLM: 115 MB at most) and re-scores from memory; above it, from the database (two reads
# of ~100-130 vectors cost about 1.2 ms a hybrid query at 100k memories).
EXACT_MEMORY_ROWS = 150_000
COMPACT_DEAD_SHARE = 0.25
SAVE_EVERY_NEW_SHARE = 0.10
TAIL_LIMIT = 2_048
# Visible shares below this are scanned exactly: a graph search with a sparse
# selector walks many hidden nodes, a bitmap scan skips them for one bit each.
EXACT_SHARE = 0.10
# Fewer visible rows than this share are copied out of the code stores, a block at a
# time, and only they are scanned: a bitmap scan tests the bit of every row (~1.5 ms
# for 1M rows on this machine), a copy costs ~0.12 µs a visible row, so the two meet
# near 2 % (measured for issue 13: 10,000 visible rows of 1M in 1.2 ms against 2.5 ms).
GATHER_SHARE = 0.02
GATHER_BLOCK = 4_096
TRAIN_MINIMUM = 1_000
TRAIN_SAMPLE = 20_000
LOAD_PAGE = 20_000
# Candidates re-scored beyond the k asked for: k/4, at least 32. The codes' order
# is close to the exact one: at 100k, k = 100 + 32 kept the same top 100 as k + k
# for 200 of 200 queries, and re-scoring 68 fewer vectors saved ~0.45 ms a query.
RESCORE_EXTRA = 32
RESCORE_SHARE = 0.25


def ef_search(rows: int) -> int:
    """The HNSW beam for a graph of ``rows`` rows when every row is visible."""
    return max(HNSW_EF_SEARCH, rows // HNSW_ROWS_PER_EF)


def _slug(model: str) -> str:
    return model_slug(model)


class VectorIndex:
    """Exact or HNSW top-k over one model's vectors, caught up from the change sequence."""

    def __init__(
        self,
        semantic: SemanticStore,
        model: str,
        dimension: int,
        *,
        ann_threshold: int = 20_000,
        directory_and_prefix: Path | None = None,
        build_threads: int | None = None,
    ) -> None:
        self._semantic = semantic
        self.model = model
        self.dimension = dimension
        self._ann_threshold = ann_threshold
        self._build_threads = build_threads or os.cpu_count() or 1
        self._database = directory_and_prefix
        base = None if directory_and_prefix is None else f"{directory_and_prefix}-vectors-"
        slug = _slug(model)
        self._graph_path = None if base is None else Path(f"{base}{slug}.graph.npz")
        # Files of the float32 graph of earlier versions: they hold vectors, so they go.
        self._legacy_paths = (
            [] if base is None else [Path(f"{base}{slug}.faiss"), Path(f"{base}{slug}.npz")]
        )
        self._lock = threading.RLock()
        self._reset()

    def _reset(self) -> None:
        self._seqs: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._namespace_ids: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._count = 0
        self._row_of = RowsBySeq()
        self._namespace_codes: dict[str, int] = {}
        self._last_change = -1
        self._quantiser: Quantiser | None = None
        self._trained_on = 0
        # Rows [0, graph_rows) live in the graph's store; the rest in the tail store.
        self._graph: Any = None
        self._graph_store: Any = None
        self._tail: Any = None
        self._graph_rows = 0
        self._saved_rows = 0
        # The change number the file on disk covers (-2: none written or read by us).
        self._saved_change = -2
        self._version = 0
        self._masks: dict[tuple[str, ...], tuple[int, npt.NDArray[np.bool_], int]] = {}
        # The rows of a cached mask, in order, when few enough to be scanned alone.
        self._mask_rows: dict[tuple[str, ...], tuple[int, npt.NDArray[np.intp]]] = {}
        # The stored vectors by row while the index is small (see EXACT_MEMORY_ROWS).
        self._stored: npt.NDArray[np.float16] | None = np.zeros(
            (0, self.dimension), dtype=np.float16
        )
        # Where visible rows' codes are copied for a scan (see GATHER_SHARE), zeroed after.
        self._block: Any = None

    # -- state -------------------------------------------------------------------

    @property
    def size(self) -> int:
        """Live vectors held."""
        return len(self._row_of)

    @property
    def reads_database(self) -> bool:
        """Whether cosines are computed from vectors read from the database (above
        :data:`EXACT_MEMORY_ROWS` rows) rather than from the copy held in memory."""
        return self._stored is None

    @property
    def uses_ann(self) -> bool:
        """Whether an HNSW graph is built."""
        return self._graph is not None

    def files(self) -> list[Path]:
        """The files this index writes beside the database (existing or not)."""
        return [] if self._graph_path is None else [self._graph_path]

    def describe(self) -> dict[str, Any]:
        """Sizes for ``status``: live vectors, rows, graph size and file bytes."""
        with self._lock:
            return {
                "model": self.model,
                "dimension": self.dimension,
                "vectors": self.size,
                "rows": self._count,
                "ann": self.uses_ann,
                "ann_rows": self._graph_rows,
                "last_change": max(self._last_change, 0),
                "file_bytes": sum(path.stat().st_size for path in self.files() if path.exists()),
                "memory_bytes": self.memory_bytes(),
            }

    def memory_bytes(self) -> int:
        """Bytes held for the vectors: codes, graph links and the row arrays."""
        total = self._seqs.nbytes + self._namespace_ids.nbytes + self._alive.nbytes
        total += self._count * self.dimension  # one byte per dimension
        if self._stored is not None:
            total += self._stored.nbytes
        if self._graph is not None:
            total += 4 * int(self._graph.hnsw.neighbors.size())
        if self._block is not None:
            total += GATHER_BLOCK * self.dimension
        return int(total)

    def _code(self, namespace: str) -> int:
        code = self._namespace_codes.get(namespace)
        if code is None:
            code = len(self._namespace_codes)
            self._namespace_codes[namespace] = code
        return code

    def _grow(self, extra: int) -> None:
        """Make room for ``extra`` more rows (the row arrays grow by half at least)."""
        needed = self._count + extra
        if needed > len(self._seqs):
            capacity = max(needed, int(len(self._seqs) * 1.5) + 1024)
            for name in ("_seqs", "_namespace_ids", "_alive"):
                old = getattr(self, name)
                new = np.zeros(capacity, dtype=old.dtype)
                new[: self._count] = old[: self._count]
                setattr(self, name, new)
        # The stored vectors stop at EXACT_MEMORY_ROWS, below the row arrays' capacity: they
        # are checked whether or not the row arrays had room.
        if self._stored is not None:
            if needed > EXACT_MEMORY_ROWS:
                self._stored = None  # re-scored from the database from now on
            elif needed > len(self._stored):
                rows = min(len(self._seqs), EXACT_MEMORY_ROWS)
                stored = np.zeros((rows, self.dimension), np.float16)
                stored[: self._count] = self._stored[: self._count]
                self._stored = stored

    # -- codes ---------------------------------------------------------------------

    def _train(self, sample: npt.NDArray[np.float32]) -> None:
        self._quantiser = Quantiser(trained_ranges(sample[:TRAIN_SAMPLE]))
        self._trained_on = len(sample)
        self._tail = new_code_store(self.dimension)

    def _erase(self, row: int) -> None:
        """Zero a dead row's codes: a forgotten memory's vector must not stay in memory."""
        if self._stored is not None:
            self._stored[row] = 0
        if row < self._graph_rows:
            code_view(self._graph_store)[row] = 0
        else:
            code_view(self._tail)[row - self._graph_rows] = 0

    def _kill(self, row: int) -> None:
        self._alive[row] = False
        self._erase(row)

    def _append(self, rows: Sequence[tuple[int, int]], vectors: npt.NDArray[np.float32]) -> None:
        """Add ``(seq, namespace code)`` rows with their vectors at the end."""
        if not rows:
            return
        if self._quantiser is None:
            self._train(vectors)
        assert self._quantiser is not None
        self._grow(len(rows))
        start = self._count
        for offset, (seq, code) in enumerate(rows):
            row = start + offset
            self._seqs[row] = seq
            self._namespace_ids[row] = code
            self._alive[row] = True
            self._row_of.set(seq, row)
        if self._stored is not None:
            # Decoded from float16, so converting back gives the stored values exactly.
            self._stored[start : start + len(rows)] = vectors
        self._count += len(rows)
        self._tail.add(self._quantiser.codes(vectors))

    def _apply(self, changes: VectorChanges) -> None:
        for seq in changes.deletes:
            row = self._row_of.pop(seq)
            if row is not None:
                self._kill(row)
        fresh: list[tuple[int, int]] = []
        blobs: list[bytes] = []
        for seq, namespace, blob in changes.upserts:
            row = self._row_of.pop(seq)
            if row is not None:  # re-embedded: the old row dies, the new one is appended
                self._kill(row)
            fresh.append((seq, self._code(namespace)))
            blobs.append(blob)
        if fresh:
            self._append(fresh, decode_vectors(blobs, self.dimension))
        if changes.deletes or fresh:
            self._version += 1
        self._last_change = max(self._last_change, changes.last_change)

    def refresh(self) -> None:
        """Catch up with every vector change in the database (cheap when there is none)."""
        with self._lock:
            latest = self._semantic.last_vector_change(self.model)
            if self._last_change < 0:
                self._load()
            elif latest > self._last_change:
                self._apply(self._semantic.vector_changes(self.model, self._last_change))
            elif latest < self._last_change:
                # The log went backwards (the database was replaced): start over.
                self._reload()
            self._maintain()

    def _reload(self, *, use_file: bool = True) -> None:
        self._reset()
        self._load(use_file=use_file)

    # -- loading -------------------------------------------------------------------

    def _pages(self) -> Any:
        """Every stored vector of the model, in seq order, a page at a time."""
        after = 0
        while True:
            page = self._semantic.vector_rows(self.model, after, LOAD_PAGE)
            if not page:
                return
            yield page
            after = page[-1][0]

    def _load(self, *, use_file: bool = True) -> None:
        """First load: the persisted graph if it is usable, else every vector, then changes."""
        for legacy in self._legacy_paths:
            legacy.unlink(missing_ok=True)
        last_change = self._semantic.last_vector_change(self.model)
        if use_file and self._restore_graph(last_change):
            return
        self._reset()
        for page in self._pages():
            rows = [(int(seq), self._code(namespace)) for seq, namespace, _ in page]
            self._append(rows, decode_vectors([blob for _, _, blob in page], self.dimension))
            # Saved only once caught up: the file's change number must cover its rows.
            self._maintain_graph(allow_save=False)
        self._last_change = last_change
        # Vectors written or deleted while the pages were read.
        self._apply(self._semantic.vector_changes(self.model, last_change))
        self._version += 1

    def _restore_graph(self, current_change: int) -> bool:
        if self._graph_path is None or not self._graph_path.exists():
            return False
        try:
            saved = load_links(self._graph_path, model=self.model, dimension=self.dimension)
        except Exception as error:  # noqa: BLE001 - any unreadable file means "rebuild"
            logger.warning("ignoring the vector index file %s: %s", self._graph_path, error)
            return False
        if saved is None or saved.last_change > current_change:
            return False
        rows = len(saved.seqs)
        self._reset()
        quantiser = self._quantiser = Quantiser(saved.ranges)
        self._trained_on = rows
        graph, store = new_graph(self.dimension, HNSW_NEIGHBOURS, HNSW_EF_CONSTRUCTION)
        self._grow(rows)
        self._seqs[:rows] = saved.seqs
        # Row of a seq by binary search (a dict of 1M seqs was ~100 MB more at load).
        by_seq = np.argsort(saved.seqs, kind="stable")
        sorted_seqs = saved.seqs[by_seq]
        # Links first, so their copy read from the file is freed before the codes grow.
        attach_links(graph, saved.links, rows)
        codes = allocate_codes(store, rows)
        missing: list[tuple[int, str, bytes]] = []
        code = self._code
        for page in self._pages():
            # Whole pages at once, columns split in C: a Python step per row was a third
            # of a 100k cold start.
            seqs, namespaces, blobs = zip(*page, strict=True)
            wanted = np.array(seqs, dtype=np.int64)
            spots = np.minimum(np.searchsorted(sorted_seqs, wanted), max(rows - 1, 0))
            known = (sorted_seqs[spots] == wanted) if rows else np.zeros(len(page), dtype=bool)
            inside = np.flatnonzero(known)
            if len(inside) < len(page):
                missing += [page[index] for index in np.flatnonzero(~known).tolist()]
                chosen = inside.tolist()
                namespaces = tuple(namespaces[index] for index in chosen)
                blobs = tuple(blobs[index] for index in chosen)
            if not len(inside):
                continue
            vectors = decode_stored_vectors(blobs, self.dimension)
            targets = by_seq[spots[inside]]
            codes[targets] = store.sa_encode(quantiser.codes(vectors)).reshape(len(inside), -1)
            if self._stored is not None:
                self._stored[targets] = vectors
            # A namespace's code looked up once per page, not once per row.
            code_of = {namespace: code(namespace) for namespace in dict.fromkeys(namespaces)}
            self._namespace_ids[targets] = list(map(code_of.__getitem__, namespaces))
            self._alive[targets] = True
            self._row_of.set_many(wanted[inside], targets)
        self._graph, self._graph_store = graph, store
        self._tail = new_code_store(self.dimension)
        self._count = self._graph_rows = self._saved_rows = rows
        self._last_change = self._saved_change = saved.last_change
        # Vectors written or deleted after the file was saved (by any process).
        self._apply(self._semantic.vector_changes(self.model, saved.last_change))
        absent = [item for item in missing if item[0] not in self._row_of]
        if absent:
            self._apply(VectorChanges(last_change=saved.last_change, upserts=absent, deletes=[]))
        self._version += 1
        logger.info("loaded the vector index %s (%d rows)", self._graph_path, rows)
        return True

    # -- the graph -----------------------------------------------------------------

    def _maintain(self) -> None:
        dead = self._count - self.size
        relearn = self._trained_on < TRAIN_MINIMUM <= self.size
        if relearn or (self._graph is not None and dead > COMPACT_DEAD_SHARE * self._count):
            # Relearn the quantiser from enough vectors, or drop dead rows: both by a
            # reload from the database (which also rebuilds the graph from live rows).
            self._reload(use_file=False)
        self._maintain_graph()

    def _maintain_graph(self, *, allow_save: bool = True) -> None:
        """Build the graph once there are enough vectors; let it absorb a long tail."""
        if self.size < self._ann_threshold or self._quantiser is None:
            return
        if self._graph is None:
            self._graph, self._graph_store = new_graph(
                self.dimension, HNSW_NEIGHBOURS, HNSW_EF_CONSTRUCTION
            )
            logger.info("building the HNSW index for %d vectors of %s", self.size, self.model)
            self._absorb_tail()
        elif self._count - self._graph_rows >= TAIL_LIMIT:
            self._absorb_tail()
        if (
            allow_save
            and self._graph_rows - self._saved_rows > SAVE_EVERY_NEW_SHARE * self._graph_rows
        ):
            self._write_file()

    def _absorb_tail(self) -> None:
        """Insert the tail's rows into the graph (their codes decode to themselves)."""
        if self._tail is None or int(self._tail.ntotal) == 0:
            return
        rows = int(self._tail.ntotal)
        with search_threads(self._build_threads):
            for start in range(0, rows, LOAD_PAGE):
                stop = min(rows, start + LOAD_PAGE)
                self._graph.add(self._tail.reconstruct_n(start, stop - start))
        # An erased (zeroed) code decodes to -128s, which encode to zeros again: a dead
        # row's codes stay zero in the graph.
        self._graph_rows = self._count
        self._tail = new_code_store(self.dimension)
        self._version += 1

    def save(self) -> None:
        """Write the graph's links and row map beside the database (atomically replaced)."""
        with self._lock:
            if self._graph is None:
                return
            if self._saved_change == self._last_change and self._count == self._graph_rows:
                return  # the file already holds this graph: nothing to rewrite
            self._absorb_tail()
            self._write_file()

    def _write_file(self) -> None:
        if self._graph is None or self._graph_path is None or self._quantiser is None:
            return
        if self._database is None:
            return
        rows = self._graph_rows
        seqs = np.where(self._alive[:rows], self._seqs[:rows], np.int64(-1)).astype(np.int64)
        try:
            save_links(
                self._graph_path,
                self._graph,
                seqs,
                self._quantiser.ranges,
                last_change=self._last_change,
                model=self.model,
                dimension=self.dimension,
                # The database's mode: one shared with a group shares its graph too.
                mode=mode_beside(self._database),
            )
            self._saved_rows = rows
            self._saved_change = self._last_change
        except OSError as error:
            logger.warning("could not save the vector index %s: %s", self._graph_path, error)

    # -- search ------------------------------------------------------------------

    def _namespace_mask(self, namespaces: Sequence[str]) -> tuple[npt.NDArray[np.bool_], int]:
        """Live rows of ``namespaces`` and how many there are (cached until a change)."""
        key = tuple(sorted(set(namespaces)))
        cached = self._masks.get(key)
        if cached is not None and cached[0] == self._version:
            return cached[1], cached[2]
        codes = [self._namespace_codes[name] for name in key if name in self._namespace_codes]
        alive = self._alive[: self._count]
        if not codes:
            mask = np.zeros(self._count, dtype=bool)
        elif len(self._namespace_codes) == 1:
            mask = alive.copy()
        else:
            mask = alive & np.isin(self._namespace_ids[: self._count], codes)
        visible = int(np.count_nonzero(mask))
        if len(self._masks) > 64:
            self._masks.clear()
        self._masks[key] = (self._version, mask, visible)
        return mask, visible

    def _namespace_rows(
        self, namespaces: Sequence[str], mask: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.intp]:
        """The rows of ``mask``, :meth:`_namespace_mask` of ``namespaces``, in order
        (kept as long as the mask: 0.25 ms to find again at 1M rows)."""
        key = tuple(sorted(set(namespaces)))
        cached = self._mask_rows.get(key)
        if cached is not None and cached[0] == self._version:
            return cached[1]
        rows = np.flatnonzero(mask)
        rows.flags.writeable = False  # shared by every search until the next change
        if len(self._mask_rows) > 64:
            self._mask_rows.clear()
        self._mask_rows[key] = (self._version, rows)
        return rows

    def search(
        self,
        query: Vectors,
        namespaces: Sequence[str],
        k: int,
        *,
        allowed_seqs: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` most similar live vectors as ``(seq, cosine)``, best first.

        Only rows of ``namespaces`` (and, when given, of ``allowed_seqs``) compete.
        """
        vector = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(1, -1))
        wanted = k + max(int(k * RESCORE_SHARE), RESCORE_EXTRA)
        with self._lock:
            if self._count == 0 or k <= 0:
                return []
            mask: npt.NDArray[np.bool_] | None = None
            listed: npt.NDArray[np.intp] | None = None
            if allowed_seqs is not None:
                listed = self._listed_rows(allowed_seqs, namespaces)
                visible = len(listed)
            else:
                mask, visible = self._namespace_mask(namespaces)
                if visible > 0 and (visible <= wanted or visible < GATHER_SHARE * self._count):
                    listed = self._namespace_rows(namespaces, mask)
            if visible == 0:
                return []
            if visible > wanted:
                assert self._quantiser is not None  # trained by the first vector
                weights = self._quantiser.query(vector)
                rows = self._candidates(weights, mask, listed, visible, wanted)
            else:
                assert listed is not None
                rows = listed
            if self._stored is not None:
                return self._best_rows(vector[0], rows, k)
            seqs = self._seqs[rows].tolist()
        return self._rescore(vector[0], seqs, k)

    def _listed_rows(self, seqs: Sequence[int], namespaces: Sequence[str]) -> npt.NDArray[np.intp]:
        """The live rows of ``seqs`` in ``namespaces``, in row order, each once: the
        namespace wall holds whatever the list holds (see ``visible_seqs``)."""
        rows = self._row_of.rows_of(seqs)
        rows = rows[rows >= 0]
        rows = np.sort(rows[self._namespace_mask(namespaces)[0][rows]])
        if len(rows) > 1 and (rows[1:] == rows[:-1]).any():
            rows = np.unique(rows)  # a seq listed twice (np.unique sorts again: 4x a sort)
        return rows

    def _best_rows(
        self, vector: Vectors, rows: npt.NDArray[np.intp], k: int
    ) -> list[tuple[int, float]]:
        """:meth:`_rescore` for rows whose vectors are held in memory, by row: exact
        cosines from the stored vectors, the best ``k`` by cosine then seq (call with
        the lock held; the same values and order as ``_rescore``)."""
        assert self._stored is not None
        if len(rows) == 0:
            return []
        scores = dot_rows(widen_half(self._stored[rows]), vector)
        seqs = self._seqs[rows]
        order = np.lexsort((seqs, -scores))[:k]
        return list(zip(seqs[order].tolist(), scores[order].tolist(), strict=True))

    def _candidates(
        self,
        weights: Vectors,
        mask: npt.NDArray[np.bool_] | None,
        listed: npt.NDArray[np.intp] | None,
        visible: int,
        wanted: int,
    ) -> npt.NDArray[np.intp]:
        """The rows of the ``wanted`` best visible rows by their codes, best first
        (``weights``: the query as :meth:`Quantiser.query` gives it; the visible rows as
        a ``mask`` of every row, or ``listed`` in row order)."""
        found: list[Found] = []
        share = visible / self._count
        exact = self._graph is None or visible < self._ann_threshold // 2 or share < EXACT_SHARE
        with search_threads(1):
            if exact and share < GATHER_SHARE:
                if listed is None:
                    assert mask is not None
                    listed = np.flatnonzero(mask)
                found = self._gathered(weights, listed, wanted)
            else:
                if mask is None:
                    mask = np.zeros(self._count, dtype=bool)
                    mask[listed] = True
                found = self._scanned(weights, mask, wanted, exact, share)
        if not found:
            return np.zeros(0, dtype=np.intp)
        scores = np.concatenate([part[0] for part in found])
        rows = np.concatenate([part[1] for part in found])
        return rows[np.argsort(-scores, kind="stable")[:wanted]]

    def _scanned(
        self,
        weights: Vectors,
        mask: npt.NDArray[np.bool_],
        wanted: int,
        exact: bool,
        share: float,
    ) -> list[Found]:
        """The best rows of the graph (searched, or scanned when ``exact``) and of the
        tail (scanned), each restricted to ``mask`` by a bitmap."""
        found: list[Found] = []
        if self._graph_rows:
            graph_mask = mask[: self._graph_rows]
            if exact:
                found.append(self._scan(self._graph_store, graph_mask, weights, wanted, 0))
            else:
                found.append(self._graph_search(graph_mask, weights, wanted, share))
        if self._count > self._graph_rows:
            tail_mask = mask[self._graph_rows : self._count]
            found.append(self._scan(self._tail, tail_mask, weights, wanted, self._graph_rows))
        return found

    def _gathered(self, weights: Vectors, rows: npt.NDArray[np.intp], wanted: int) -> list[Found]:
        """The best of ``rows`` (in row order) by their codes, copied out of the graph's
        and the tail's stores :data:`GATHER_BLOCK` rows at a time and scanned; each copy
        is zeroed once scanned, so no forgotten memory's codes outlive its row."""
        if self._block is None:
            self._block = new_code_store(self.dimension)
        block = self._block
        split = int(np.searchsorted(rows, self._graph_rows))
        parts = ((self._graph_store, rows[:split], 0), (self._tail, rows[split:], self._graph_rows))
        found: list[Found] = []
        for store, part, offset in parts:
            if not len(part):
                continue
            codes = code_view(store)
            for start in range(0, len(part), GATHER_BLOCK):
                chunk = part[start : start + GATHER_BLOCK]
                copied = allocate_codes(block, len(chunk))
                np.take(codes, chunk - offset, axis=0, out=copied)
                try:
                    scores, positions = block.search(weights, min(wanted, len(chunk)))
                finally:
                    copied[:] = 0
                kept = positions[0] >= 0
                found.append((scores[0][kept], chunk[positions[0][kept]]))
        return found

    @staticmethod
    def _selector(mask: npt.NDArray[np.bool_]) -> tuple[Any, npt.NDArray[np.uint8]]:
        import faiss

        bitmap = np.packbits(mask, bitorder="little")
        return faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bitmap)), bitmap

    @staticmethod
    def _found(scores: npt.NDArray[np.float32], rows: npt.NDArray[np.int64], offset: int) -> Found:
        """faiss's answer for one query as (scores, rows + ``offset``), unfilled slots dropped."""
        kept = rows[0] >= 0
        return scores[0][kept], rows[0][kept].astype(np.intp) + offset

    @classmethod
    def _scan(
        cls, store: Any, mask: npt.NDArray[np.bool_], vector: Vectors, wanted: int, offset: int
    ) -> Found:
        """Exact scan of ``store``'s codes restricted to ``mask`` (no copy)."""
        import faiss

        if not mask.any():
            return cls._found(np.zeros((1, 0), np.float32), np.zeros((1, 0), np.int64), offset)
        parameters = faiss.SearchParameters()
        selector, bitmap = cls._selector(mask)
        parameters.sel = selector
        scores, rows = store.search(vector, wanted, params=parameters)
        del bitmap  # kept alive until the search returned
        return cls._found(scores, rows, offset)

    def _graph_search(
        self, mask: npt.NDArray[np.bool_], vector: Vectors, wanted: int, share: float
    ) -> Found:
        import faiss

        parameters: Any = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]
        # A sparser selector needs a wider beam to meet as many visible nodes.
        base = ef_search(self._graph_rows)
        parameters.efSearch = min(max(HNSW_EF_MAX, base), max(wanted, int(base / share)))
        bitmap = None
        if not mask.all():
            parameters.sel, bitmap = self._selector(mask)
        scores, rows = self._graph.search(vector, wanted, params=parameters)
        del bitmap
        return self._found(scores, rows, 0)

    def _rescore(self, vector: Vectors, seqs: Sequence[int], k: int) -> list[tuple[int, float]]:
        """Exact cosines of the candidates from their stored vectors, the best ``k``."""
        scored = self._exact(vector, seqs)
        ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))
        return ranked[:k]

    def _exact(self, vector: Vectors, seqs: Sequence[int]) -> dict[int, float]:
        if not seqs:
            return {}
        found, matrix = self.vectors(seqs)
        if not found:
            return {}
        scores = dot_rows(matrix, np.asarray(vector, dtype=np.float32).reshape(-1))
        return {seq: float(score) for seq, score in zip(found, scores.tolist(), strict=True)}

    def similarities(self, query: Vectors, seqs: Sequence[int]) -> dict[int, float]:
        """Cosine of ``query`` with each of ``seqs`` that has a vector (for keyword hits)."""
        return self._exact(np.asarray(query, dtype=np.float32).reshape(-1), seqs)

    def vectors(self, seqs: Sequence[int]) -> tuple[list[int], Vectors]:
        """The stored vectors of those ``seqs`` that have one: their seqs and a matrix.

        From the copy held in memory when there is one, else from the database. The
        database is always right, so the copy is looked for without the lock: a recall
        reading its keyword candidates' vectors does not wait for the vector search
        that holds it.
        """
        if self._stored is not None:
            with self._lock:
                if self._stored is not None:
                    rows = self._row_of.rows_of(seqs)
                    held = rows != NO_ROW
                    matrix = widen_half(self._stored[rows[held]])
                    found = np.asarray(seqs, dtype=np.int64)[held].tolist()
                    return found, matrix.reshape(len(found), self.dimension)
        stored = self._semantic.vectors_for(self.model, list(seqs)) if seqs else {}
        found = [seq for seq in seqs if seq in stored]
        if not found:
            return [], np.zeros((0, self.dimension), dtype=np.float32)
        return found, decode_vectors([stored[seq] for seq in found], self.dimension)
