"""The embedder protocol: texts in, one L2-normalised float32 row per text out.

An embedder is created once at an entrypoint (see :func:`recalld.embeddings.create_embedder`)
and injected into the service and the worker. ``name`` is recorded with every
vector, so vectors of different models never mix and a model switch can be
detected and re-embedded (DESIGN.md promise 9).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from recalld.errors import EmbeddingError

__all__ = [
    "Embedder",
    "Loadable",
    "Reading",
    "Vectors",
    "checked_vectors",
    "dot_rows",
    "normalize_rows",
    "unreadable",
]

Vectors = npt.NDArray[np.float32]

# The largest magnitude a stored (float16) vector value holds.
STORED_MAX = float(np.finfo(np.float16).max)


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns a batch of texts into unit-length float32 vectors."""

    @property
    def name(self) -> str:
        """The model's name, stored beside every vector it produced."""
        ...

    @property
    def dimension(self) -> int:
        """The length of every vector."""
        ...

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """One row per text, shape ``(len(texts), dimension)``, L2-normalised float32."""
        ...


@runtime_checkable
class Loadable(Protocol):
    """An embedder with a local model it loads before its first batch (see
    :meth:`recalld.retrieval.hybrid.HybridRetriever.warm_up`)."""

    def load(self) -> None:
        """Load the model now (once; later calls return at once)."""
        ...


@runtime_checkable
class Reading(Protocol):
    """An embedder that can tell a text it cannot read: one its vocabulary mostly does not
    hold. The English MiniLM reads most Chinese ideographs and every Thai, Lao, Myanmar and
    Khmer word as its unknown token, so two such texts, however unrelated, have a cosine of
    0.9-1.0 ("飞机" and a Thai note about piano lessons: 0.89): a vector made of unknown
    tokens says nothing of what the text means."""

    def unreadable(self, text: str) -> bool:
        """Whether half or more of ``text``'s tokens are unknown to the model."""
        ...


def unreadable(embedder: Embedder | None, text: str) -> bool:
    """Whether ``embedder`` says it cannot read ``text`` (:class:`Reading`); False for an
    embedder that cannot tell (an HTTP one: its model is not known here)."""
    return isinstance(embedder, Reading) and embedder.unreadable(text)


@runtime_checkable
class Releasable(Protocol):
    """An embedder that keeps memory its batches grew (an inference arena) and can give it
    back: the worker calls :meth:`release_memory` once its queue has drained, so a burst
    of batches pays nothing per batch and an idle process holds no more than it needs."""

    def release_memory(self) -> None:
        """Give back what batches since the last call left allocated (cheap if none ran)."""
        ...


def normalize_rows(matrix: npt.NDArray[np.floating]) -> Vectors:
    """Scale every row to unit length (rows of zeros stay zero)."""
    values = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(values / norms, dtype=np.float32)


def checked_vectors(vectors: npt.ArrayLike, count: int, embedder: Embedder) -> Vectors:
    """``embedder``'s answer for ``count`` texts, refused (:class:`EmbeddingError`) unless it
    is ``count`` rows of ``embedder.dimension`` finite numbers.

    Whatever the embedder (an HTTP server, a custom model of a library user), what is
    stored and searched is checked here (and each value must fit the float16 it is
    stored as): a NaN stored as a vector was marked indexed,
    made every cosine with it NaN (``"text": NaN`` in recall's JSON, which no JSON
    parser reads) and was never embedded again.
    """
    matrix = np.asarray(vectors, dtype=np.float32)
    dimension = embedder.dimension
    if matrix.ndim != 2 or matrix.shape != (count, dimension):
        raise EmbeddingError(
            f"embedder {embedder.name} returned vectors of shape {matrix.shape}"
            f" for {count} texts of dimension {dimension}"
            " (RECALLD_EMBEDDER_DIMENSION gives a custom model's)"
        )
    finite = np.isfinite(matrix).all(axis=1)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        raise EmbeddingError(
            f"embedder {embedder.name} returned a vector holding NaN or infinity"
            f" (text {row + 1} of {count})"
        )
    # Stored as float16, a larger number was an infinity (a custom embedder that did not
    # normalise its rows): a NaN cosine again.
    fits = (np.abs(matrix) <= STORED_MAX).all(axis=1)
    if not fits.all():
        row = int(np.flatnonzero(~fits)[0])
        raise EmbeddingError(
            f"embedder {embedder.name} returned a vector holding a value beyond"
            f" {STORED_MAX:g}, stored as an infinity (text {row + 1} of {count};"
            " an embedder's vectors are unit length)"
        )
    return np.ascontiguousarray(matrix)


def dot_rows(
    rows: npt.NDArray[np.floating], others: npt.NDArray[np.floating]
) -> npt.NDArray[np.floating]:
    """``rows @ others.T`` (``others``: one vector or a matrix), in numpy's own loop.

    Not BLAS: OpenBLAS runs a product of a few hundred rows on every core, and its
    idle threads then spin for about 0.1 s, holding the second core of a 2-core
    machine (where recall embeds its query) and doubling a recall's CPU. These
    products are small (tens of microseconds either way).
    """
    product: npt.NDArray[np.floating] = (
        np.einsum("ij,j->i", rows, others)
        if others.ndim == 1
        else np.einsum("ij,kj->ik", rows, others)
    )
    return product
