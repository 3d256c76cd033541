"""How much one knowledge call (or one write of an mcp-memory import) may hold: the
items of a list and the observations in all (moved out of :mod:`recalld.knowledge`,
which grew to its size limit)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from recalld.errors import ValidationError

__all__ = ["MAX_ITEMS", "MAX_OBSERVATIONS", "Tally", "bounded_items", "import_batches"]

Item = TypeVar("Item")

MAX_ITEMS = 1_000
# The observations one call writes or deletes in all: 1,000 items of 1,000 each were a
# million memories in one write transaction (minutes, every other writer waiting).
MAX_OBSERVATIONS = 10_000
# An import writes this many entities a transaction at most.
IMPORT_BATCH_ENTITIES = 500


def bounded_items(field: str, values: Sequence[Any]) -> Sequence[Any]:
    """``values``, refused naming ``field`` when over ``MAX_ITEMS``."""
    if len(values) > MAX_ITEMS:
        raise ValidationError(field, f"{len(values)} items; the limit is {MAX_ITEMS} per call")
    return values


class Tally:
    """Counts a call's observations across its items (each list already held to
    ``MAX_ITEMS``), refusing past ``MAX_OBSERVATIONS`` before any more is checked."""

    def __init__(self, field: str) -> None:
        self._field = field
        self._total = 0

    def add(self, values: Sequence[Any]) -> None:
        """Count ``values``; raises ValidationError naming the field past the bound."""
        self._total += len(values)
        if self._total > MAX_OBSERVATIONS:
            raise ValidationError(
                self._field,
                f"holds more than {MAX_OBSERVATIONS} observations in all; the limit is"
                f" {MAX_OBSERVATIONS} per call",
            )


def import_batches(items: Sequence[Item], size: Callable[[Item], int]) -> Iterator[list[Item]]:
    """An import's entities, 500 or ``MAX_OBSERVATIONS`` observations (``size``) a write at
    most (an entity is never split): 500 of 1,000 each were half a million memories in
    one write."""
    batch: list[Item] = []
    held = 0
    for item in items:
        if batch and (len(batch) == IMPORT_BATCH_ENTITIES or held + size(item) > MAX_OBSERVATIONS):
            yield batch
            batch, held = [], 0
        batch.append(item)
        held += size(item)
    if batch:
        yield batch
