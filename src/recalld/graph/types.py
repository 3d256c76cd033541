"""Value types of the knowledge graph, shared by the extractors, the store and the queries.

Nothing here imports an implementation: the store protocol and the extractors
both speak these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "ENTITY_NAME_MAX_CHARS",
    "ENTITY_TYPE_MAX_CHARS",
    "GENERIC_TYPES",
    "RELATION_PREDICATE_MAX_CHARS",
    "ExtractedEntity",
    "ExtractedRelation",
    "Extraction",
    "ExtractionInput",
]

ENTITY_NAME_MAX_CHARS = 200
ENTITY_TYPE_MAX_CHARS = 100
RELATION_PREDICATE_MAX_CHARS = 100
# Types an extractor gives when it cannot tell what a name is; a specific type replaces them.
GENERIC_TYPES = frozenset({"name", "topic", "tag", "unknown"})


@dataclass(frozen=True)
class ExtractionInput:
    """What an extractor reads of one memory."""

    text: str
    speaker: str | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExtractedEntity:
    """One entity found in a memory: its name as written, a type, and how often it occurs."""

    name: str
    type: str
    count: int = 1


@dataclass(frozen=True)
class ExtractedRelation:
    """A (subject, predicate, object) triple found in a memory; names as in the entities."""

    subject: str
    predicate: str
    object: str


@dataclass(frozen=True)
class Extraction:
    """Everything one memory contributes to the graph."""

    entities: tuple[ExtractedEntity, ...] = ()
    relations: tuple[ExtractedRelation, ...] = field(default_factory=tuple)
