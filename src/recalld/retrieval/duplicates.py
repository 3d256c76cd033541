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

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

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


def text_key(row: CandidateRow) -> tuple[str | None, str | None, str]:
    """The memory's source, key and text, whitespace-normalised and case-folded: equal
    keys, same text from the same source under the same key."""
    text = " ".join(f"{row.title or ''}\n{row.content}".split()).casefold()
    return row.source, row.key, text


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
    kept_rows: list[int] = []  # matrix rows of the kept memories that have a vector
    kept_with_vector: list[int] = []  # their pool positions
    kept_origins: list[tuple[str | None, str | None]] = []  # and their sources and keys
    visited = 0
    for position in order:
        if len(selection.kept) >= limit:
            break
        visited += 1
        row = rows[position]
        key = text_key(row)
        twin = kept_keys.get(key)
        found = vector_row.get(row.seq)
        if twin is None and found is not None and kept_rows:
            similarities = dot_rows(matrix[kept_rows], matrix[found])
            same_source = np.array([origin == (row.source, row.key) for origin in kept_origins])
            similarities = np.where(same_source, similarities, -np.inf)
            best = int(np.argmax(similarities))
            if float(similarities[best]) >= threshold:
                twin = kept_with_vector[best]
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
            kept_origins.append((row.source, row.key))
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
