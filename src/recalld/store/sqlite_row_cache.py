"""Recall's candidate rows kept between recalls until memories change (SQLite).

A recall reads 100-250 candidate rows (title, content, tags, speaker, ...) by
seq; consecutive recalls share many. :class:`RowCache` keeps the last rows
read, for every thread of the process, as long as the file's count of changes
to memories (migration 15's ``memory_changes``, moved by triggers on every
insert, delete and update of what recall reads, by any connection of any
process) stays the same; once it moves, the cache is emptied before the next
read is served. Recall's access counts do not move it. Rows are kept with their
namespace, expiry and tags, and the scope's wall, expiry and tag filters are
applied to them on each read as the SQL would; a scope with other row filters
(kind, category, speaker, time) reads from the database.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from recalld.store.retrieval import CandidateRow

__all__ = ["CachedRow", "RowCache"]

# Rows kept (~0.7 KB each with a short memory's text): the candidates of many recalls.
ROW_CACHE_SIZE = 20_000


@dataclass(frozen=True, slots=True)
class CachedRow:
    """A candidate row with what decides who may see it."""

    row: CandidateRow
    expires_at: str | None
    """As stored (``to_storage``), compared as the SQL compares it."""


class RowCache:
    """The last :data:`ROW_CACHE_SIZE` rows read, valid for one change token."""

    def __init__(self, size: int = ROW_CACHE_SIZE) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._token: int | None = None
        self._rows: OrderedDict[int, CachedRow] = OrderedDict()

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, token: int, seqs: Sequence[int]) -> dict[int, CachedRow]:
        """The kept rows of ``seqs``; none (and the cache emptied) if ``token`` moved."""
        with self._lock:
            if token != self._token:
                self._rows.clear()
                self._token = token
                return {}
            rows = self._rows
            found: dict[int, CachedRow] = {}
            for seq in seqs:
                cached = rows.get(seq)
                if cached is not None:
                    rows.move_to_end(seq)
                    found[seq] = cached
            return found

    def put(self, token: int, rows: Mapping[int, CachedRow]) -> None:
        """Keep ``rows``, read after ``token`` was taken (dropped if it has moved since)."""
        with self._lock:
            if token != self._token:
                return
            self._rows.update(rows)
            while len(self._rows) > self._size:
                self._rows.popitem(last=False)
