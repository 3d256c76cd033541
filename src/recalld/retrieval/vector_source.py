"""Where recall's vector channel gets its vectors: this process's index, or the database.

The candidate pool (:mod:`recalld.retrieval.pool`) and the near-duplicate
collapse (:mod:`recalld.retrieval.duplicates`) ask four things of a vector
source: whether it holds any vector, the nearest neighbours of a query, the
cosine of a query with given memories, and the stored vectors of given
memories. :class:`~recalld.retrieval.vector_index.VectorIndex` answers them
from memory (SQLite); :class:`DatabaseVectors` answers them with queries, for a
store that searches vectors itself (PostgreSQL with pgvector), so a server
holds no copy of the vectors. A :class:`DatabaseVectors` is made for one
query's scope: the namespace wall and every filter of the scope are applied in
the database's nearest-neighbour query.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from recalld.embeddings.base import Vectors
from recalld.store.base import Scope
from recalld.store.semantic import SemanticStore, VectorSearch, decode_vectors

__all__ = ["DatabaseVectors", "VectorSource"]


class VectorSource(Protocol):
    """The vector reads recall makes (see the module docstring)."""

    @property
    def size(self) -> int:
        """How many vectors it holds (0: recall does not embed the query)."""
        ...

    @property
    def reads_database(self) -> bool:
        """Whether :meth:`similarities` reads the stored vectors from the database (then
        recall asks for the keyword candidates' cosines while its vector search runs)."""
        ...

    def search(
        self,
        query: Vectors,
        namespaces: Sequence[str],
        k: int,
        *,
        allowed_seqs: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest memories of ``namespaces`` as ``(seq, cosine)``, best first."""
        ...

    def similarities(self, query: Vectors, seqs: Sequence[int]) -> dict[int, float]:
        """The cosine of ``query`` with each of ``seqs`` that has a vector."""
        ...

    def vectors(self, seqs: Sequence[int]) -> tuple[list[int], Vectors]:
        """The stored vectors of those ``seqs`` that have one: their seqs and a matrix."""
        ...


class DatabaseVectors:
    """A :class:`VectorSource` answered by the store's own vector search, for one scope."""

    def __init__(
        self, search: VectorSearch, semantic: SemanticStore, model: str, scope: Scope
    ) -> None:
        self._search = search
        self._semantic = semantic
        self._model = model
        self._scope = scope
        self._dimension: int | None = None

    @property
    def size(self) -> int:
        """1 when the database holds a vector of the model, else 0 (counting them all
        would cost a scan; recall only needs to know whether to embed the query)."""
        if self._dimension is None:
            self._dimension = self._search.dimension(self._model)
        return 0 if self._dimension is None else 1

    @property
    def reads_database(self) -> bool:
        """Always: the vectors stay in the database."""
        return True

    def search(
        self,
        query: Vectors,
        namespaces: Sequence[str],
        k: int,
        *,
        allowed_seqs: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """Nearest neighbours under this source's scope, narrowed to ``namespaces``.

        ``allowed_seqs`` is not needed: the scope's filters run in the query.
        """
        scope = self._scope
        if list(namespaces) != list(scope.namespaces):
            scope = Scope(namespaces=tuple(namespaces), now=scope.now)
        return self._search.nearest(self._model, query, scope, k)

    def similarities(self, query: Vectors, seqs: Sequence[int]) -> dict[int, float]:
        """Cosines computed by reading the stored vectors of ``seqs``."""
        return self._search.cosines(self._model, query, seqs)

    def vectors(self, seqs: Sequence[int]) -> tuple[list[int], Vectors]:
        """The stored vectors of ``seqs`` (as the in-process index decodes them)."""
        dimension = self._search.dimension(self._model)
        stored = self._semantic.vectors_for(self._model, list(seqs)) if seqs else {}
        found = [seq for seq in seqs if seq in stored]
        if dimension is None or not found:
            return [], np.zeros((0, dimension or 0), dtype=np.float32)
        return found, decode_vectors([stored[seq] for seq in found], dimension)
