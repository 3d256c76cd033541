"""The row of each live seq in :class:`~recalld.retrieval.vector_index.VectorIndex`.

A dictionary answers one seq at a time. A recall under a rare tag asks for the
rows of thousands at once (every memory the tag lets through), and at 1M
vectors 10,000 dictionary lookups took 2 ms, most of it cache misses in a table
of a million entries. :class:`RowsBySeq` keeps, beside the dictionary, an array
indexed by seq (4 bytes a seq, up to the largest), which answers the same
10,000 in 0.1 ms. The array is kept while the seqs are dense: when the largest
is more than :data:`SPARSE_FACTOR` times the live count (a store that has
forgotten most of what it once held), it is dropped and many lookups go through
the dictionary as single ones do; it is built again once they are dense.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import repeat

import numpy as np
import numpy.typing as npt

__all__ = ["NO_ROW", "RowsBySeq"]

NO_ROW = -1
SPARSE_FACTOR = 8
# The array's smallest size, and the slack over SPARSE_FACTOR times the live count.
TABLE_MINIMUM = 1 << 16


class RowsBySeq:
    """Seq -> row for live vectors: a dictionary, and an array for many seqs at once."""

    def __init__(self) -> None:
        self._rows: dict[int, int] = {}
        self._table: npt.NDArray[np.int32] | None = None
        self._largest = -1
        self._negative = False

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, seq: object) -> bool:
        return seq in self._rows

    def __iter__(self) -> Iterator[int]:
        return iter(self._rows)

    def __getitem__(self, seq: int) -> int:
        return self._rows[seq]

    def items(self) -> Iterator[tuple[int, int]]:
        """Every ``(seq, row)``."""
        return iter(self._rows.items())

    def get(self, seq: int) -> int | None:
        """The row of ``seq``, None without one."""
        return self._rows.get(seq)

    def set(self, seq: int, row: int) -> None:
        """``seq`` lives in ``row``."""
        self._rows[seq] = row
        self._fit(seq)
        if self._table is not None:
            self._table[seq] = row

    def set_many(self, seqs: npt.NDArray[np.int64], rows: npt.NDArray[np.intp]) -> None:
        """Each of ``seqs`` lives in the row at the same position of ``rows``."""
        if not len(seqs):
            return
        self._rows.update(zip(seqs.tolist(), rows.tolist(), strict=True))
        self._fit(int(seqs.max()), int(seqs.min()))
        if self._table is not None:
            self._table[seqs] = rows

    def pop(self, seq: int) -> int | None:
        """Forget ``seq``; its row, None if it had none."""
        row = self._rows.pop(seq, None)
        if row is not None and self._table is not None:
            self._table[seq] = NO_ROW
        return row

    def rows_of(self, seqs: Sequence[int]) -> npt.NDArray[np.intp]:
        """The row of each of ``seqs``, in their order (:data:`NO_ROW`: none)."""
        if self._table is None and not self._dense():
            return np.fromiter(
                map(self._rows.get, seqs, repeat(NO_ROW)), dtype=np.intp, count=len(seqs)
            )
        table = self._table if self._table is not None else self._build()
        wanted = np.fromiter(seqs, dtype=np.int64, count=len(seqs))
        inside = (wanted >= 0) & (wanted < len(table))
        found = np.full(len(wanted), NO_ROW, dtype=np.intp)
        found[inside] = table[wanted[inside]]
        return found

    def _dense(self) -> bool:
        return not self._negative and self._largest < SPARSE_FACTOR * len(self) + TABLE_MINIMUM

    def _fit(self, largest: int, smallest: int | None = None) -> None:
        """Note seqs up to ``largest`` (and down to ``smallest``); grow the array to hold
        them, or drop it when it would be too sparse."""
        self._largest = max(self._largest, largest)
        if (smallest if smallest is not None else largest) < 0:
            self._negative = True  # no array can be indexed by it: the dictionary only
        table = self._table
        if table is None or (largest < len(table) and not self._negative):
            return
        if not self._dense():
            self._table = None
            return
        size = max(largest + 1, len(table) + len(table) // 2, TABLE_MINIMUM)
        grown = np.full(size, NO_ROW, dtype=np.int32)
        grown[: len(table)] = table
        self._table = grown

    def _build(self) -> npt.NDArray[np.int32]:
        """The array from the dictionary (once the seqs are dense again)."""
        table = np.full(max(self._largest + 1, TABLE_MINIMUM), NO_ROW, dtype=np.int32)
        if self._rows:
            count = len(self._rows)
            table[np.fromiter(self._rows.keys(), dtype=np.int64, count=count)] = np.fromiter(
                self._rows.values(), dtype=np.int32, count=count
            )
        self._table = table
        return table
