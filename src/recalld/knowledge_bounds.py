"""How much one knowledge call (or one write of an mcp-memory import) may hold: the
items of a list and the observations in all (moved out of :mod:`recalld.knowledge`,
which grew to its size limit)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from recalld.errors import ValidationError

if TYPE_CHECKING:
    from recalld.store.graph import GraphTransaction

__all__ = [
    "ENTITY_OBSERVATION_CHARACTERS",
    "MAX_ITEMS",
    "MAX_OBSERVATIONS",
    "Tally",
    "bounded_items",
    "check_entity_room",
    "check_observation_edit",
    "entity_room_error",
    "first_of_each",
    "import_batches",
]

Item = TypeVar("Item")

MAX_ITEMS = 1_000
# The observations one call writes or deletes in all: 1,000 items of 1,000 each were a
# million memories in one write transaction (minutes, every other writer waiting).
MAX_OBSERVATIONS = 10_000
# The observation text one entity holds in all, in characters: 10,000 of 64 KiB each was
# 640 MB in one entity, which every read of it (open_nodes, a read_graph page's first
# entity) carried whole. A read_graph page carries as much beyond its first entity.
ENTITY_OBSERVATION_CHARACTERS = 1_000_000
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


def entity_room_error(name: str, held: int, adding: Sequence[str]) -> str | None:
    """Why observations ``adding`` may not join entity ``name``, holding ``held`` characters
    of them (past ``ENTITY_OBSERVATION_CHARACTERS``), or None when they fit. Adding nothing
    always fits: an entity already past the bound answers a call that repeats what it holds
    (an import run again) as unchanged."""
    total = held + sum(map(len, adding))
    if total <= ENTITY_OBSERVATION_CHARACTERS or not adding:
        return None
    return (
        f"would give entity {name!r} {total} characters of observations; the limit is"
        f" {ENTITY_OBSERVATION_CHARACTERS} per entity (it holds {held}: delete some first)"
    )


def check_entity_room(field: str, name: str, held: int, adding: Sequence[str]) -> None:
    """Refuse (naming ``field``) what :func:`entity_room_error` refuses."""
    refused = entity_room_error(name, held, adding)
    if refused is not None:
        raise ValidationError(field, refused)


def check_observation_edit(
    graph: GraphTransaction, seq: int, old: str, new: str, field: str = "content"
) -> None:
    """Refuse (naming ``field``) the new text ``new`` of memory ``seq`` (now ``old``) when
    it would take an entity it is an observation of past ``ENTITY_OBSERVATION_CHARACTERS``:
    an edit, call after call, grew an entity as the knowledge tools may not."""
    if len(new) <= len(old):
        return
    for entity_id, name in graph.observed_by(seq):
        total = graph.observation_characters(entity_id) - len(old) + len(new)
        if total > ENTITY_OBSERVATION_CHARACTERS:
            raise ValidationError(
                field,
                f"is {len(new)} characters, an observation of entity {name!r}: it would"
                f" hold {total} characters of observations; the limit is"
                f" {ENTITY_OBSERVATION_CHARACTERS} per entity",
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


def first_of_each(items: Iterable[Item], identity: Callable[[Item], object]) -> list[Item]:
    """``items`` without those whose identity an earlier one had."""
    firsts: dict[object, Item] = {}
    for item in items:
        firsts.setdefault(identity(item), item)
    return list(firsts.values())
