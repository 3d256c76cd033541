"""Near-duplicate collapse: one hit per repeated memory, saying how many it stands for.

Two candidates are near-duplicates when their text (title and content,
whitespace-normalised, case-folded) is the same, or when their vectors have
a cosine of at least ``threshold`` (0.97 by default). Candidates are visited
best score first; each is kept unless it duplicates a kept one, in which case
the kept one counts it. A recall is scoped to one namespace, so duplicates
never span namespaces.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from recalld.retrieval.vector_index import VectorIndex
from recalld.store.retrieval import CandidateRow

__all__ = ["Selection", "select"]


@dataclass
class Selection:
    """Which pool positions are returned, in order, and what collapsed into what."""

    kept: list[int] = field(default_factory=list)
    duplicates: dict[int, list[int]] = field(default_factory=dict)
    collapsed_into: dict[int, int] = field(default_factory=dict)


def text_key(row: CandidateRow) -> str:
    """A digest of the memory's normalised text (the "same content hash")."""
    text = " ".join(f"{row.title or ''}\n{row.content}".split()).casefold()
    return hashlib.blake2b(text.encode("utf-8", errors="replace"), digest_size=16).hexdigest()


def select(
    rows: Sequence[CandidateRow],
    order: Sequence[int],
    limit: int,
    index: VectorIndex | None,
    threshold: float,
) -> Selection:
    """Walk ``order`` (pool positions, best first), keep ``limit`` distinct memories.

    Every candidate in ``order`` is examined, so a kept memory counts all its
    duplicates among them, not only those ranked before the limit.
    """
    selection = Selection()
    kept_keys: dict[str, int] = {}
    seqs = [rows[position].seq for position in order]
    vector_seqs, matrix = index.vectors(seqs) if index is not None else ([], np.zeros((0, 0)))
    vector_of = {seq: matrix[row] for row, seq in enumerate(vector_seqs)}
    kept_vectors: list[tuple[int, np.ndarray]] = []
    for position in order:
        row = rows[position]
        key = text_key(row)
        twin = kept_keys.get(key)
        vector = vector_of.get(row.seq)
        if twin is None and vector is not None and kept_vectors:
            stacked = np.stack([item for _, item in kept_vectors])
            similarities = stacked @ vector
            best = int(np.argmax(similarities))
            if float(similarities[best]) >= threshold:
                twin = kept_vectors[best][0]
        if twin is not None:
            selection.duplicates[twin].append(position)
            selection.collapsed_into[position] = twin
            continue
        if len(selection.kept) >= limit:
            continue
        selection.kept.append(position)
        selection.duplicates[position] = []
        kept_keys[key] = position
        if vector is not None:
            kept_vectors.append((position, vector))
    return selection
