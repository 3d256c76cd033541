"""Writing extractions into the PostgreSQL graph, with every shared row taken in one order.

Graph rows are shared between memories: two memories naming "Alice Smith" upsert the
same entity row, two stating the same fact the same relation row. A worker completes a
batch of jobs in one transaction, and several workers (and recall's catch-up) complete
batches at once, so rows taken job by job were taken in different orders by different
transactions, and they deadlocked (an outside test saw seventeen in a few minutes, each
costing a batch the wait for its lease). So everything here takes rows in one global
order, the one :func:`lock_extraction_rows` takes too for a write that drops a memory's
extraction:

1. the memories (by ``seq``; the caller, with each memory's job);
2. every entity the batch upserts or may rename or drop, by ``(namespace, key)`` in code
   point order (``COLLATE "C"``, as Python sorts them);
3. every relation the batch upserts or may drop, by ``(subject_id, predicate,
   object_id)`` (the predicate in code point order).

Then the mentions and relation sources are written, and only then are the ones the
extractions lost deleted: the orphan and rename triggers (migrations 7 and 24) then touch
rows already held, and an entity one memory of the batch stops naming while another
starts is never orphaned (and dropped) in between.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from recalld.graph.names import entity_key
from recalld.graph.types import (
    ENTITY_NAME_MAX_CHARS,
    ENTITY_TYPE_MAX_CHARS,
    GENERIC_TYPES,
    RELATION_PREDICATE_MAX_CHARS,
    Extraction,
)
from recalld.store.graph import GraphJob, entity_key_hash
from recalld.store.postgres_connection import Connection

__all__ = ["GENERIC", "apply_extractions", "lock_extraction_rows"]

GENERIC = sorted(GENERIC_TYPES)
Triple = tuple[int, str, int]


@dataclass
class _Plan:
    """What one memory's extraction names: entity keys with their first spelling and
    type, mention counts, and relations between keys."""

    job: GraphJob
    at: datetime | None
    found: dict[str, tuple[str, str]] = field(default_factory=dict)
    mentioned: dict[str, int] = field(default_factory=dict)
    pairs: list[tuple[str | None, str, str | None]] = field(default_factory=list)
    ids: dict[str, int] = field(default_factory=dict)
    relation_ids: list[int] = field(default_factory=list)

    def note(self, name: str, type: str, count: int) -> str | None:
        key = entity_key(name)
        if not key or len(name) > ENTITY_NAME_MAX_CHARS:
            return None
        # The spelling and type this memory gives the entity (its first), its count.
        self.found.setdefault(key, (name, type[:ENTITY_TYPE_MAX_CHARS]))
        self.mentioned[key] = self.mentioned.get(key, 0) + count
        return key

    def triples(self) -> set[Triple]:
        return {
            (self.ids[subject], predicate, self.ids[target])
            for subject, predicate, target in self.pairs
            if subject is not None and target is not None and predicate
            if self.ids[subject] != self.ids[target]
        }


def _plan(job: GraphJob, extraction: Extraction, at: datetime | None) -> _Plan:
    """The same rules as on SQLite: an entity's counts add up; a relation's endpoint not
    listed as an entity becomes a ``topic`` mentioned once."""
    plan = _Plan(job, at)
    for entity in extraction.entities:
        plan.note(entity.name, entity.type, entity.count)
    for relation in extraction.relations:
        predicate = " ".join(relation.predicate.split())[:RELATION_PREDICATE_MAX_CHARS]
        ends = []
        for name in (relation.subject, relation.object):
            key = entity_key(name)
            ends.append(key if key in plan.found else plan.note(name, "topic", 1))
        plan.pairs.append((ends[0], predicate, ends[1]))
    return plan


def _upsert_entity(
    connection: Connection, namespace: str, key: str, name: str, type: str, now: datetime
) -> int:
    # The name is the first extracted spelling; when the mentions giving a name or type go,
    # migration 24's triggers re-derive them from the mentions left.
    row = connection.execute(
        "INSERT INTO graph_entities(namespace, key, name, type, declared, created_at, updated_at)"
        " VALUES (%(ns)s, %(key)s, %(name)s, %(type)s, FALSE, %(now)s, %(now)s)"
        " ON CONFLICT (namespace, key) DO UPDATE SET"
        " type = CASE WHEN NOT graph_entities.declared"
        " AND graph_entities.type = ANY(%(generic)s) AND NOT (excluded.type = ANY(%(generic)s))"
        " THEN excluded.type ELSE graph_entities.type END,"
        " updated_at = excluded.updated_at RETURNING id",
        {"ns": namespace, "key": key, "name": name, "type": type, "now": now, "generic": GENERIC},
    ).fetchone()
    assert row is not None
    return int(row[0])


def _held_entities(connection: Connection, seqs: Sequence[int]) -> dict[tuple[str, str], int]:
    """The entities these memories mention now, by ``(namespace, key)``."""
    rows = connection.execute(
        "SELECT DISTINCT e.namespace, e.key, e.id FROM graph_mentions gm"
        " JOIN graph_entities e ON e.id = gm.entity_id WHERE gm.seq = ANY(%s)",
        (list(seqs),),
    ).fetchall()
    return {(str(namespace), str(key)): int(id) for namespace, key, id in rows}


def _held_relations(connection: Connection, seqs: Sequence[int]) -> dict[Triple, int]:
    """The relations these memories state now, by ``(subject_id, predicate, object_id)``."""
    rows = connection.execute(
        "SELECT DISTINCT r.subject_id, r.predicate, r.object_id, r.id"
        " FROM graph_relation_sources rs JOIN graph_relations r ON r.id = rs.relation_id"
        " WHERE rs.seq = ANY(%s)",
        (list(seqs),),
    ).fetchall()
    return {
        (int(subject), str(predicate), int(target)): int(id)
        for subject, predicate, target, id in rows
    }


def _drop_buried(connection: Connection, plans: Sequence[_Plan]) -> list[int]:
    """Take out of each plan the entities the knowledge tools deleted after its memory was
    written (migration 30's tombstones), with the relations that name them; the ids of
    those already upserted come back (see :func:`apply_extractions`)."""
    wanted = sorted(
        {(plan.job.namespace, entity_key_hash(key)) for plan in plans for key in plan.found}
    )
    if not wanted:
        return []
    rows = connection.execute(
        "SELECT t.namespace, t.key_hash, t.up_to_seq FROM graph_entity_tombstones t"
        " JOIN unnest(%s::text[], %s::text[]) AS w(namespace, key_hash)"
        " ON t.namespace = w.namespace AND t.key_hash = w.key_hash",
        ([namespace for namespace, _ in wanted], [digest for _, digest in wanted]),
    ).fetchall()
    buried = {(str(namespace), str(digest)): int(seq) for namespace, digest, seq in rows}
    dropped: list[int] = []
    if not buried:
        return dropped
    for plan in plans:
        gone = {
            key
            for key in plan.found
            if buried.get((plan.job.namespace, entity_key_hash(key)), 0) >= plan.job.seq
        }
        for key in gone:
            del plan.found[key]
            del plan.mentioned[key]
            if key in plan.ids:
                dropped.append(plan.ids.pop(key))
        plan.pairs = [
            (None if subject in gone else subject, predicate, None if target in gone else target)
            for subject, predicate, target in plan.pairs
        ]
    return dropped


def lock_extraction_rows(connection: Connection, seqs: Sequence[int]) -> None:
    """Lock the entities and relations these memories' extractions hold, in the global
    order, before a write deletes their mentions and sources (whose triggers rename or
    drop those rows). The caller holds the memories."""
    if not seqs:
        return
    connection.execute(
        "SELECT 1 FROM graph_entities WHERE id IN"
        " (SELECT entity_id FROM graph_mentions WHERE seq = ANY(%s))"
        ' ORDER BY namespace COLLATE "C", key COLLATE "C" FOR UPDATE',
        (list(seqs),),
    )
    connection.execute(
        "SELECT 1 FROM graph_relations WHERE id IN"
        " (SELECT relation_id FROM graph_relation_sources WHERE seq = ANY(%s))"
        ' ORDER BY subject_id, predicate COLLATE "C", object_id FOR UPDATE',
        (list(seqs),),
    )


def apply_extractions(
    connection: Connection,
    extractions: Sequence[tuple[GraphJob, Extraction, datetime | None]],
    now: datetime,
) -> None:
    """Replace each memory's mentions and relation sources with its extraction's (the
    caller holds the memories and their jobs), taking shared rows in the global order."""
    plans = [_plan(job, extraction, at) for job, extraction, at in extractions]
    if not plans:
        return
    _drop_buried(connection, plans)
    seqs = [plan.job.seq for plan in plans]
    # Entities: those upserted (by each memory naming them, in seq order: the first one's
    # spelling names a new entity) and those only held now (FOR UPDATE: the deletes below
    # may drop them), merged into one order.
    naming: dict[tuple[str, str], list[_Plan]] = {}
    for plan in plans:
        for key in plan.found:
            naming.setdefault((plan.job.namespace, key), []).append(plan)
    held = _held_entities(connection, seqs)
    for entity in sorted(naming.keys() | held.keys()):
        namespace, key = entity
        if entity not in naming:
            connection.execute(
                "SELECT 1 FROM graph_entities WHERE id = %s FOR UPDATE", (held[entity],)
            )
            continue
        for plan in naming[entity]:
            name, type = plan.found[key]
            plan.ids[key] = _upsert_entity(connection, namespace, key, name, type, now)
    # A delete_entities that committed while an upsert above waited for the row it deleted
    # (the tombstones were read before): that upsert inserted the entity anew. Read again
    # (a statement now sees that commit) and drop it, unless a later memory names it.
    dropped = set(_drop_buried(connection, plans))
    dropped -= {entity_id for plan in plans for entity_id in plan.ids.values()}
    if dropped:
        connection.execute(
            "DELETE FROM graph_entities e WHERE e.id = ANY(%s) AND NOT e.declared"
            " AND NOT EXISTS (SELECT 1 FROM graph_mentions m WHERE m.entity_id = e.id)"
            " AND NOT EXISTS (SELECT 1 FROM graph_observations o WHERE o.entity_id = e.id)"
            " AND NOT EXISTS (SELECT 1 FROM graph_relations r WHERE r.subject_id = e.id"
            " OR r.object_id = e.id)",
            (sorted(dropped),),
        )
    # Relations, the same way.
    stating: dict[Triple, list[_Plan]] = {}
    for plan in plans:
        for triple in sorted(plan.triples()):
            stating.setdefault(triple, []).append(plan)
    sourced = _held_relations(connection, seqs)
    for triple in sorted(stating.keys() | sourced.keys()):
        if triple not in stating:
            connection.execute(
                "SELECT 1 FROM graph_relations WHERE id = %s FOR UPDATE", (sourced[triple],)
            )
            continue
        subject_id, predicate, target_id = triple
        row = connection.execute(
            "INSERT INTO graph_relations(namespace, subject_id, predicate, object_id,"
            " declared, created_at) VALUES (%s, %s, %s, %s, FALSE, %s)"
            " ON CONFLICT (subject_id, predicate, object_id) DO UPDATE SET"
            " namespace = graph_relations.namespace RETURNING id",
            (stating[triple][0].job.namespace, subject_id, predicate, target_id, now),
        ).fetchone()
        assert row is not None
        for plan in stating[triple]:
            plan.relation_ids.append(int(row[0]))
    # Every mention and source written before any is deleted (see the module's docstring).
    mentions = sorted(
        (plan.ids[key], plan.job.seq, *plan.found[key], count)
        for plan in plans
        for key, count in plan.mentioned.items()
    )
    sources = sorted(
        (relation_id, plan.job.seq, plan.at) for plan in plans for relation_id in plan.relation_ids
    )
    with connection.cursor() as cursor:
        if mentions:
            cursor.executemany(
                "INSERT INTO graph_mentions(entity_id, seq, surface, type, count)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (entity_id, seq) DO UPDATE SET"
                " surface = excluded.surface, type = excluded.type, count = excluded.count",
                mentions,
            )
        if sources:
            cursor.executemany(
                "INSERT INTO graph_relation_sources(relation_id, seq, at) VALUES (%s, %s, %s)"
                " ON CONFLICT (relation_id, seq) DO UPDATE SET at = excluded.at",
                sources,
            )
    for plan in plans:
        connection.execute(
            "DELETE FROM graph_mentions WHERE seq = %s AND NOT (entity_id = ANY(%s))",
            (plan.job.seq, sorted(plan.ids.values())),
        )
        connection.execute(
            "DELETE FROM graph_relation_sources WHERE seq = %s AND NOT (relation_id = ANY(%s))",
            (plan.job.seq, plan.relation_ids),
        )
