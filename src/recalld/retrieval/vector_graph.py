"""The compact vector stores behind :class:`~recalld.retrieval.vector_index.VectorIndex`.

Vectors are held in memory as signed 8-bit codes (faiss
``IndexScalarQuantizer`` with ``QT_8bit_direct_signed``, one byte per
dimension: 384 bytes per vector for MiniLM instead of 1,536), scanned with
faiss's integer SIMD kernels; an HNSW graph (faiss ``IndexHNSWSQ``) over the
same codes answers large collections. :class:`Quantiser` scales vectors onto
-127..127 and a query onto int8 weights, so that the codes' dot product orders
vectors as their true inner product does (up to rounding). Search over codes is
approximate, so the index re-scores the best candidates with exact dot
products of the stored float16 vectors.

The quantiser's scale comes from the ranges learned from the vectors
(:func:`trained_ranges`, kept per dimension in the graph file) with a margin, so
later vectors rarely clip (and a clipped one still ranks nearly right: its
exact score is recomputed).

The graph is persisted as its links only (:func:`save_links` /
:func:`load_links`): levels, offsets and neighbour ids, which hold no vector
content, so a forgotten memory leaves nothing in the file to erase. On load the
codes are rebuilt from the database's vectors, which costs about as much as
reading them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from recalld.store.file_modes import PRIVATE_FILE_MODE
from recalld.store.semantic import widen_half

__all__ = [
    "GraphFile",
    "Quantiser",
    "load_links",
    "new_code_store",
    "new_graph",
    "save_links",
    "search_threads",
    "trained_ranges",
]

RANGE_MARGIN = 0.2
RANGE_FLOOR = 1e-3
FILE_FORMAT = 2


def _faiss() -> Any:
    import faiss

    return faiss


@contextmanager
def search_threads(threads: int) -> Iterator[None]:
    """Run faiss with ``threads`` OpenMP threads in this block, one thread after it.

    A single query is fastest on one thread (two threads on a busy 2-core
    machine made an exact scan 8x slower); graph building uses more.
    """
    faiss = _faiss()
    faiss.omp_set_num_threads(max(1, threads))
    try:
        yield
    finally:
        faiss.omp_set_num_threads(1)


def trained_ranges(sample: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Per-dimension ``[minimum..., width...]`` of ``sample``, widened by a margin."""
    low = sample.min(axis=0)
    high = sample.max(axis=0)
    margin = RANGE_MARGIN * (high - low) + RANGE_FLOOR
    return np.concatenate([low - margin, (high - low) + 2 * margin]).astype(np.float32)


# Codes run from -CODE_MAX to CODE_MAX (faiss's direct signed codes also hold -128,
# which stays unused: a zeroed, erased code decodes to it).
CODE_MAX = 127


class Quantiser:
    """Signed 8-bit codes of vectors and int8 weights of queries, from learned ranges.

    One scale for every dimension maps the widest learned range onto
    ``-CODE_MAX..CODE_MAX`` (codes are ``rint(x * scale)``, so a code's dot product
    with another is proportional to the vectors' own, up to rounding: the graph is
    built under the same inner product it is searched with; per-dimension ranges or a
    centre would distort it, and a graph built that way missed true neighbours). A
    query's weights are it scaled so its largest component is ``CODE_MAX``, rounded:
    faiss's integer kernel rounds a query to integers, so it must arrive as integers
    that keep its precision. ``weights · codes`` is then ``k * q · x`` with ``k > 0``
    the same for every vector.
    """

    def __init__(self, ranges: npt.NDArray[np.float32]) -> None:
        self.ranges = np.ascontiguousarray(ranges, dtype=np.float32)
        dimension = len(self.ranges) // 2
        low, width = self.ranges[:dimension], self.ranges[dimension:]
        bound = float(max(np.abs(low).max(), np.abs(low + width).max())) if dimension else 1.0
        self._scale = CODE_MAX / max(bound, RANGE_FLOOR)

    def codes(self, vectors: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.float32]:
        """What faiss stores for ``vectors``: integers in ``-CODE_MAX..CODE_MAX`` as float32."""
        # In float32 whatever comes in (float16 as stored, at a cold start, widened by
        # widen_half: a third of numpy's time), in place after the product: a cold start
        # encodes the whole file page by page.
        if vectors.dtype == np.float16:
            scaled = widen_half(vectors)
            scaled *= np.float32(self._scale)
        else:
            scaled = np.multiply(vectors, np.float32(self._scale), dtype=np.float32)
        np.rint(scaled, out=scaled)
        np.clip(scaled, -CODE_MAX, CODE_MAX, out=scaled)
        return np.ascontiguousarray(scaled, dtype=np.float32)

    @staticmethod
    def query(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The ``(1, dimension)`` integer weights to search the codes with for ``vector``."""
        weights = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        peak = float(np.abs(weights).max()) if weights.size else 0.0
        if peak > 0.0:
            weights = np.rint(weights * (CODE_MAX / peak))
        return np.ascontiguousarray(weights, dtype=np.float32)


def new_code_store(dimension: int) -> Any:
    """An empty store of signed 8-bit codes (inner product; see :class:`Quantiser`)."""
    faiss = _faiss()
    return faiss.IndexScalarQuantizer(
        dimension, faiss.ScalarQuantizer.QT_8bit_direct_signed, faiss.METRIC_INNER_PRODUCT
    )


def new_graph(dimension: int, neighbours: int, ef_construction: int) -> tuple[Any, Any]:
    """An empty HNSW graph over signed 8-bit codes, and its code store (owned by the graph)."""
    faiss = _faiss()
    graph = faiss.IndexHNSWSQ(
        dimension,
        faiss.ScalarQuantizer.QT_8bit_direct_signed,
        neighbours,
        faiss.METRIC_INNER_PRODUCT,
    )
    graph.hnsw.efConstruction = ef_construction
    return graph, faiss.downcast_index(graph.storage)


def code_view(store: Any) -> npt.NDArray[np.uint8]:
    """The store's codes as a writable ``(ntotal, code_size)`` view (no copy)."""
    faiss = _faiss()
    total = int(store.ntotal) * int(store.code_size)
    if total == 0:
        return np.zeros((0, int(store.code_size)), dtype=np.uint8)
    flat = faiss.rev_swig_ptr(store.codes.data(), total)
    return np.asarray(flat).reshape(int(store.ntotal), int(store.code_size))


def allocate_codes(store: Any, rows: int) -> npt.NDArray[np.uint8]:
    """Give ``store`` ``rows`` zeroed codes and return them as a writable view.

    The codes are filled in place (no second copy of them exists while a large
    index loads: at 1M MiniLM vectors that copy alone was 384 MB of peak memory).
    """
    store.codes.resize(rows * int(store.code_size))
    store.ntotal = rows
    return code_view(store)


class GraphFile:
    """What a saved graph file holds: links, the row-to-seq map and the quantiser."""

    def __init__(
        self,
        *,
        seqs: npt.NDArray[np.int64],
        ranges: npt.NDArray[np.float32],
        last_change: int,
        links: dict[str, Any],
    ) -> None:
        self.seqs = seqs
        self.ranges = ranges
        self.last_change = last_change
        self.links = links


def save_links(
    path: Path,
    graph: Any,
    seqs: npt.NDArray[np.int64],
    ranges: npt.NDArray[np.float32],
    *,
    last_change: int,
    model: str,
    dimension: int,
    mode: int = PRIVATE_FILE_MODE,
) -> None:
    """Write the graph's links and row map to ``path`` (atomically replaced, created with
    ``mode``: owner-only unless told, and no temporary file left behind when the write
    fails)."""
    faiss = _faiss()
    hnsw = graph.hnsw
    # A view, not a copy: at 1M vectors the links are ~270 MB.
    neighbors = np.asarray(faiss.rev_swig_ptr(hnsw.neighbors.data(), hnsw.neighbors.size()))
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
        with os.fdopen(descriptor, "wb") as handle:
            np.savez(
                handle,
                format=np.int64(FILE_FORMAT),
                model=np.str_(model),
                dimension=np.int64(dimension),
                last_change=np.int64(last_change),
                seqs=seqs,
                ranges=ranges,
                levels=faiss.vector_to_array(hnsw.levels),
                offsets=faiss.vector_to_array(hnsw.offsets),
                neighbors=neighbors,
                entry_point=np.int64(hnsw.entry_point),
                max_level=np.int64(hnsw.max_level),
            )
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)  # gone after the rename; a failed write leaves none


def load_links(path: Path, *, model: str, dimension: int) -> GraphFile | None:
    """The saved graph at ``path`` if it is one of ``model`` at ``dimension`` (else None)."""
    with np.load(path) as saved:
        if int(saved["format"]) != FILE_FORMAT:
            return None
        if str(saved["model"]) != model or int(saved["dimension"]) != dimension:
            return None
        seqs = saved["seqs"].astype(np.int64)
        links = {
            "levels": saved["levels"],
            "offsets": saved["offsets"],
            "neighbors": saved["neighbors"],
            "entry_point": int(saved["entry_point"]),
            "max_level": int(saved["max_level"]),
        }
        if len(links["levels"]) != len(seqs) or len(links["offsets"]) != len(seqs) + 1:
            return None
        return GraphFile(
            seqs=seqs,
            ranges=saved["ranges"].astype(np.float32),
            last_change=int(saved["last_change"]),
            links=links,
        )


def attach_links(graph: Any, links: dict[str, Any], rows: int) -> None:
    """Give an HNSW graph of ``rows`` rows the saved links (and empty ``links``)."""
    faiss = _faiss()
    hnsw = graph.hnsw
    faiss.copy_array_to_vector(np.ascontiguousarray(links["levels"], dtype=np.int32), hnsw.levels)
    faiss.copy_array_to_vector(
        np.ascontiguousarray(links["offsets"], dtype=np.uint64), hnsw.offsets
    )
    faiss.copy_array_to_vector(
        np.ascontiguousarray(links["neighbors"], dtype=np.int32), hnsw.neighbors
    )
    hnsw.entry_point = int(links["entry_point"])
    hnsw.max_level = int(links["max_level"])
    graph.ntotal = rows
    # The graph holds its own copy now; the arrays read from the file can go.
    links.clear()
