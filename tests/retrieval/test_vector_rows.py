"""The vector index's seq -> row map: many seqs at once, by array or by dictionary."""

from __future__ import annotations

import numpy as np
import pytest

from recalld.retrieval import vector_rows
from recalld.retrieval.vector_rows import NO_ROW, RowsBySeq


def _expected(rows: RowsBySeq, seqs: list[int]) -> list[int]:
    return [NO_ROW if rows.get(seq) is None else rows[seq] for seq in seqs]


def test_rows_of_many_seqs_agree_with_single_lookups_as_seqs_come_and_go() -> None:
    rows = RowsBySeq()
    for row, seq in enumerate(range(1, 301)):
        rows.set(seq, row)
    rows.set_many(np.arange(301, 401, dtype=np.int64), np.arange(300, 400, dtype=np.intp))
    asked = [5, 400, 0, -3, 10**9, 250, 5]
    assert rows.rows_of(asked).tolist() == [4, 399, NO_ROW, NO_ROW, NO_ROW, 249, 4]
    assert rows._table is not None  # built by the first many-seq lookup
    assert rows.pop(250) == 249
    assert rows.pop(250) is None
    rows.set(5, 7)  # a re-embedded memory moves to a new row
    rows.set(70_000, 400)  # past the array's end: it grows
    asked = [5, 250, 70_000, 69_999]
    assert rows.rows_of(asked).tolist() == [7, NO_ROW, 400, NO_ROW]
    assert rows.rows_of(asked).tolist() == _expected(rows, asked)
    assert len(rows) == 400
    assert 70_000 in rows
    assert 250 not in rows


def test_sparse_seqs_fall_back_to_the_dictionary_and_come_back_dense(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vector_rows, "TABLE_MINIMUM", 16)
    rows = RowsBySeq()
    for seq in range(10):
        rows.set(seq, seq)
    assert rows.rows_of([3]).tolist() == [3]
    assert rows._table is not None
    # One seq far beyond 8x the live count: no array that large is kept.
    rows.set(1_000_000, 10)
    assert rows._table is None
    asked = [3, 1_000_000, 999_999]
    assert rows.rows_of(asked).tolist() == [3, 10, NO_ROW]
    assert rows._table is None
    # Enough live seqs again: the array is built from the dictionary once more.
    rows.set_many(
        np.arange(2_000, 2_000 + 130_000, dtype=np.int64),
        np.arange(11, 11 + 130_000, dtype=np.intp),
    )
    assert rows.rows_of(asked).tolist() == [3, 10, NO_ROW]
    assert rows._table is not None
    assert rows.rows_of([2_000, 131_999]).tolist() == [11, 130_010]


def test_a_negative_seq_keeps_every_lookup_in_the_dictionary() -> None:
    rows = RowsBySeq()
    rows.set(4, 0)
    assert rows.rows_of([4]).tolist() == [0]
    rows.set(-2, 1)  # an array indexed by seq cannot hold it (it would wrap around)
    assert rows._table is None
    assert rows.rows_of([-2, 4, 3]).tolist() == [1, 0, NO_ROW]
    assert rows._table is None
