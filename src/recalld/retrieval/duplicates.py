"""Near-duplicate collapse: one hit per repeated memory, saying how many it stands for.

Two candidates of the same source and key (or without them) are near-duplicates
when their text (title and content, whitespace-normalised, case-folded) is the
same, or when their vectors have a cosine of at least ``threshold`` (0.97 by
default). Candidates are visited best score first; each is kept unless it
duplicates a kept one, in which case the kept one counts it. A recall is
scoped to one namespace, so duplicates never span namespaces; nor do they span
sources: the same finding from two sources is two pieces of attributed
evidence, and hiding one would lose where it came from; nor do they span keys (two
key/value records holding the same value are two records).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from recalld.embeddings.base import dot_rows
from recalld.retrieval.vector_source import VectorSource
from recalld.store.retrieval import CandidateRow

__all__ = ["Selection", "select"]


@dataclass
class Selection:
    """Which pool positions are returned, in order, and what collapsed into what."""

    kept: list[int] = field(default_factory=list)
    duplicates: dict[int, list[int]] = field(default_factory=dict)
    collapsed_into: dict[int, int] = field(default_factory=dict)


# Candidates past the limit whose similarities to the others are computed up front with
# the first ``limit`` (room for that many duplicates among the best).
HEAD_EXTRA = 8

Origin = tuple[str | None, str | None]


def text_key(row: CandidateRow) -> tuple[str | None, str | None, str]:
    """The memory's source, key and text, whitespace-normalised and case-folded: equal
    keys, same text from the same source under the same key (kept on the row, which the
    store's row cache hands to the next recall)."""
    key: tuple[str | None, str | None, str] | None = row.text_key
    if key is None:
        text = " ".join(f"{row.title or ''}\n{row.content}".split()).casefold()
        key = row.text_key = (row.source, row.key, text)
    return key


def select(
    rows: Sequence[CandidateRow],
    order: Sequence[int],
    limit: int,
    index: VectorSource | None,
    threshold: float,
) -> Selection:
    """Walk ``order`` (pool positions, best first), keep ``limit`` distinct memories.

    Every candidate in ``order`` is examined, so a kept memory counts all its
    duplicates among them, not only those ranked before the limit. Once ``limit``
    memories are kept the rest can only be their duplicates or be dropped: they
    are compared with the kept ones all at once.
    """
    selection = Selection()
    kept_keys: dict[tuple[str | None, str | None, str], int] = {}
    seqs = [rows[position].seq for position in order]
    vector_seqs, matrix = index.vectors(seqs) if index is not None else ([], np.zeros((0, 0)))
    vector_row = {seq: row for row, seq in enumerate(vector_seqs)}
    # The similarities among the first candidates, in one product (dot_rows adds each pair
    # in the same order either way: the same values as one candidate at a time).
    head = [vector_row[seq] for seq in seqs[: limit + HEAD_EXTRA] if seq in vector_row]
    similar = dot_rows(matrix[head], matrix[head]).tolist() if head else []
    place = {row: number for number, row in enumerate(head)}
    kept_rows: list[int] = []  # matrix rows of the kept memories that have a vector
    kept_with_vector: list[int] = []  # their pool positions
    kept_origins: list[Origin] = []  # and their sources and keys
    kept_by_origin: dict[Origin, list[tuple[int, int]]] = {}  # (matrix row, position)
    visited = 0
    for position in order:
        if len(selection.kept) >= limit:
            break
        visited += 1
        row = rows[position]
        key = text_key(row)
        twin = kept_keys.get(key)
        found = vector_row.get(row.seq)
        origin = (row.source, row.key)
        if twin is None and found is not None and origin in kept_by_origin:
            twin = _closest(found, kept_by_origin[origin], matrix, similar, place, threshold)
        if twin is not None:
            selection.duplicates[twin].append(position)
            selection.collapsed_into[position] = twin
            continue
        selection.kept.append(position)
        selection.duplicates[position] = []
        kept_keys[key] = position
        if found is not None:
            kept_rows.append(found)
            kept_with_vector.append(position)
            kept_origins.append(origin)
            kept_by_origin.setdefault(origin, []).append((found, position))
    rest = order[visited:]
    if not rest:
        return selection
    twins: dict[int, int] = {}
    if kept_rows:
        with_vector = [position for position in rest if rows[position].seq in vector_row]
        if with_vector:
            candidates = matrix[[vector_row[rows[position].seq] for position in with_vector]]
            similarities = dot_rows(candidates, matrix[kept_rows])
            # Each (source, key) as a small number: the comparison is then numpy's.
            number: dict[tuple[str | None, str | None], int] = {}
            kept_numbers = np.array([number.setdefault(o, len(number)) for o in kept_origins])
            numbers = np.array(
                [
                    number.get((rows[position].source, rows[position].key), -1)
                    for position in with_vector
                ]
            )
            same_source = numbers[:, None] == kept_numbers[None, :]
            similarities = np.where(same_source, similarities, -np.inf)
            best = np.argmax(similarities, axis=1)
            close = similarities[np.arange(len(with_vector)), best] >= threshold
            twins = {
                position: kept_with_vector[int(choice)]
                for position, choice, near in zip(with_vector, best, close, strict=True)
                if near
            }
    for position in rest:
        twin = kept_keys.get(text_key(rows[position]))
        if twin is None:
            twin = twins.get(position)
        if twin is not None:
            selection.duplicates[twin].append(position)
            selection.collapsed_into[position] = twin
    return selection


def _closest(
    found: int,
    kept: Sequence[tuple[int, int]],
    matrix: npt.NDArray[np.floating],
    similar: list[list[float]],
    place: dict[int, int],
    threshold: float,
) -> int | None:
    """The position of the first of ``kept`` (matrix row, position: the kept memories of
    the candidate's source and key) most similar to matrix row ``found``, if that
    similarity reaches ``threshold``. From ``similar`` (by ``place``) when the candidate
    is among the first ones, whose kept memories come before it; else computed."""
    number = place.get(found)
    if number is not None:
        values = similar[number]
        similarities = [values[place[row]] for row, _ in kept]
    else:
        similarities = dot_rows(matrix[[row for row, _ in kept]], matrix[found]).tolist()
    best, best_value = None, -math.inf
    for (_, position), value in zip(kept, similarities, strict=True):
        if value > best_value:  # the first of equals, as numpy's argmax
            best, best_value = position, value
    return best if best_value >= threshold else None
