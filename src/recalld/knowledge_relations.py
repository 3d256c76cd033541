"""How the knowledge tools name and order relations and the entities they touch (kept apart
from :mod:`recalld.knowledge`, which they would push past the house's 800 lines)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from recalld.graph.names import entity_key

if TYPE_CHECKING:
    from recalld.knowledge import KnowledgeRelation
    from recalld.store.graph import EntityRecord, GraphTransaction

__all__ = ["declared_entities", "relation_identity", "relation_keys", "relation_label"]


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


def declared_entities(
    graph: GraphTransaction, namespace: str, names: Iterable[str], now: datetime
) -> dict[str, EntityRecord]:
    """Each entity ``names`` names (all existing), declared under the first spelling given,
    by its key. Declared in key order, as an extraction upserts entities: declaring one
    known only from memories takes its row, so a call naming Bob before Alice held Bob's
    row while it waited for Alice's, which an extraction held while it waited for Bob's,
    a deadlock (review of pass a68)."""
    firsts: dict[str, str] = {}
    for name in names:
        firsts.setdefault(entity_key(name), name)
    return {
        key: graph.declare_entity(namespace, firsts[key], None, now)[0] for key in sorted(firsts)
    }
