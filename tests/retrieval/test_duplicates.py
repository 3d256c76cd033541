"""Near-duplicate collapse (:mod:`recalld.retrieval.duplicates`), past the limit too."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from recalld.embeddings.base import Vectors
from recalld.retrieval.duplicates import select
from recalld.store.retrieval import CandidateRow


def _row(seq: int, content: str, source: str | None = None, key: str | None = None) -> CandidateRow:
    return CandidateRow(
        seq=seq,
        id=f"m{seq}",
        namespace="default",
        title=None,
        content=content,
        tags=(),
        speaker=None,
        source=source,
        at_utc=None,
        index_state="indexed",
        key=key,
    )


class _Vectors:
    """The vectors of some seqs (a memory still queued for embedding has none)."""

    def __init__(self, vectors: dict[int, list[float]]) -> None:
        self._vectors = {
            seq: np.asarray(value, dtype=np.float32) / np.linalg.norm(value)
            for seq, value in vectors.items()
        }

    def vectors(self, seqs: Sequence[int]) -> tuple[list[int], Vectors]:
        found = [seq for seq in seqs if seq in self._vectors]
        return found, np.stack([self._vectors[seq] for seq in found])


def test_duplicates_past_the_limit_are_counted_by_text_and_by_vector() -> None:
    rows = [
        _row(1, "The wifi password is on the fridge"),
        _row(2, "The printer is upstairs"),
        _row(3, "the WiFi   password is on the fridge"),  # same text, no vector yet
        _row(4, "Password: see the fridge"),  # a near-twin of 1 by vector
        _row(5, "Lunch is at noon"),  # unlike anything kept: dropped, counted nowhere
        _row(6, "A printer upstairs"),  # a near-twin of 2 by vector
        _row(7, "Printer's upstairs."),  # close to 2, but under the threshold
    ]
    index = _Vectors(
        {
            1: [1.0, 0.0, 0.0],
            2: [0.0, 1.0, 0.0],
            4: [0.99, 0.05, 0.0],
            5: [0.0, 0.0, 1.0],
            6: [0.01, 1.0, 0.02],
            7: [0.0, 0.9, 0.5],
        }
    )
    order = list(range(len(rows)))
    selection = select(rows, order, 2, index, 0.97)  # type: ignore[arg-type]
    assert selection.kept == [0, 1]
    assert selection.duplicates == {0: [2, 3], 1: [5]}
    assert selection.collapsed_into == {2: 0, 3: 0, 5: 1}
    # With room for every memory, the same twins collapse and the others are kept.
    wide = select(rows, order, 10, index, 0.97)  # type: ignore[arg-type]
    assert wide.kept == [0, 1, 4, 6]
    assert wide.duplicates == {0: [2, 3], 1: [5], 4: [], 6: []}


def test_the_same_words_from_two_sources_are_two_pieces_of_evidence() -> None:
    # batbox's findings are attributed: the advisory's copy of a finding is not hidden
    # behind the report's, by text or by vector, before or past the limit.
    rows = [
        _row(1, "Dock 4 crane is out of service", "file:///srv/reports/dock.md"),
        _row(2, "Dock 4 crane is out of service", "https://vendor.example/advisory/42"),
        _row(3, "dock 4 crane is  out of service", "file:///srv/reports/dock.md"),
        _row(4, "The dock 4 crane is out of service", "https://vendor.example/advisory/42"),
        _row(5, "Dock 4's crane is out of service"),
    ]
    index = _Vectors({1: [1.0, 0.0], 2: [1.0, 0.0], 4: [1.0, 0.01], 5: [1.0, 0.02]})
    order = list(range(len(rows)))
    wide = select(rows, order, 10, index, 0.97)  # type: ignore[arg-type]
    assert wide.kept == [0, 1, 4]
    assert wide.duplicates == {0: [2], 1: [3], 4: []}
    narrow = select(rows, order, 1, index, 0.97)  # type: ignore[arg-type]
    assert narrow.kept == [0]
    assert narrow.duplicates == {0: [2]}


def test_two_key_value_records_holding_one_value_are_two_records() -> None:
    rows = [
        _row(1, "Melbourne", key="staging.region"),
        _row(2, "Melbourne", key="prod.region"),
        _row(3, "melbourne ", key="staging.region"),
    ]
    index = _Vectors({1: [1.0, 0.0], 2: [1.0, 0.0], 3: [1.0, 0.0]})
    selection = select(rows, [0, 1, 2], 10, index, 0.97)  # type: ignore[arg-type]
    assert selection.kept == [0, 1]
    assert selection.duplicates == {0: [2], 1: []}


def test_twins_beyond_the_first_candidates_compared_are_still_found() -> None:
    # Ten vector twins of the best memory rank before the second distinct one: the walk
    # goes past the candidates whose similarities are computed up front (limit + 8).
    rows = [_row(1, "The boat leaves at nine")]
    rows += [_row(seq, f"Boat departs at nine ({seq})") for seq in range(2, 12)]
    rows += [_row(12, "Lunch is at noon"), _row(13, "Lunch at noon, see you")]
    vectors = {1: [1.0, 0.0, 0.0], 12: [0.0, 1.0, 0.0], 13: [0.0, 1.0, 0.01]}
    vectors.update({seq: [1.0, 0.001 * seq, 0.0] for seq in range(2, 12)})
    order = list(range(len(rows)))
    selection = select(rows, order, 2, _Vectors(vectors), 0.97)  # type: ignore[arg-type]
    assert selection.kept == [0, 11]
    assert selection.duplicates == {0: list(range(1, 11)), 11: [12]}
    assert selection.collapsed_into == {**{place: 0 for place in range(1, 11)}, 12: 11}
