"""How the knowledge tools name and order relations (kept apart from :mod:`recalld.knowledge`,
which they would push past the house's 800 lines)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from recalld.graph.names import entity_key

if TYPE_CHECKING:
    from recalld.knowledge import KnowledgeRelation

__all__ = ["relation_identity", "relation_keys", "relation_label"]


def relation_label(source: str, relation_type: str, target: str) -> str:
    """How a relation is named in a removal report."""
    return f"{source} -[{relation_type}]-> {target}"


def relation_keys(relations: Iterable[KnowledgeRelation]) -> list[str]:
    """The keys of the relations' ends."""
    return [
        entity_key(name) for relation in relations for name in (relation.source, relation.target)
    ]


def relation_identity(relation: KnowledgeRelation) -> tuple[str, str, str]:
    """A relation as the store matches it: its ends' keys and its type exactly."""
    return (entity_key(relation.source), relation.relation_type, entity_key(relation.target))
