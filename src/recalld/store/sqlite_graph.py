"""The SQLite side of the knowledge graph: entities, mentions, relations, the graph jobs.

Graph jobs live in the same ``jobs`` table as embedding jobs (``kind =
'graph'``, the extractor as ``model``): enqueued in the memory's own
transaction, leased with ``BEGIN IMMEDIATE``, retried with backoff, their
errors kept. Completing a job replaces the memory's mentions and relation
sources with the new extraction in one transaction, adding before removing so
an entity that is still mentioned is never dropped and re-created. Orphans
(an undeclared entity without mentions, an undeclared relation without
sources) are removed by the graph migration's triggers, including when
``forget`` cascades.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import apsw

from recalld._text import new_id
from recalld._time import from_storage, to_storage
from recalld.graph.matching import substring_pattern
from recalld.graph.names import entity_key, search_key
from recalld.graph.types import (
    ENTITY_NAME_MAX_CHARS,
    ENTITY_TYPE_MAX_CHARS,
    GENERIC_TYPES,
    RELATION_PREDICATE_MAX_CHARS,
    Extraction,
)
from recalld.store.graph import (
    EntityRecord,
    GraphCounts,
    GraphJob,
    MentionRecord,
    RelationRecord,
    extraction_settles,
    graph_text_hash,
    list_in_chunks,
    search_in_chunks,
)
from recalld.store.semantic import JobFailure
from recalld.store.sqlite_connection import SQLiteDatabase
from recalld.store.sqlite_graph_tombstones import buried
from recalld.store.sqlite_semantic import release_leased

__all__ = ["SQLiteGraph", "enqueue_graph"]

T = TypeVar("T")

GENERIC_SQL = "(" + ", ".join(f"'{name}'" for name in sorted(GENERIC_TYPES)) + ")"
# Inside a write: what the entity row holds, counting every memory (expired ones too).
ENTITY_COLUMNS = (
    "e.id, e.namespace, e.key, e.name, e.type, e.declared,"
    " (SELECT count(*) FROM graph_mentions gm WHERE gm.entity_id = e.id),"
    " (SELECT count(*) FROM graph_observations go WHERE go.entity_id = e.id),"
    " e.created_at, e.updated_at"
)
# The reads show the graph as the purge will leave it: a memory past its TTL is hidden from
# every read until the purge deletes it (and what it said with it), so it neither counts
# nor keeps an entity or a relation shown. Live is "not among the memories expired at
# :now" (the complement of mentions()' test): those are read once per statement off the
# expiry index (the purge keeps them few), so a mention is tested without reading its
# memory's row; a speaker with tens of thousands of mentions is still counted off the index.
EXPIRED = "(SELECT x.seq FROM memories x WHERE x.expires_at <= :now)"
LIVE_ENTITY_COLUMNS = (
    "e.id, e.namespace, e.key, e.name, e.type, e.declared,"
    " (SELECT count(*) FROM graph_mentions gm"
    f" WHERE gm.entity_id = e.id AND gm.seq NOT IN {EXPIRED}),"
    " (SELECT count(*) FROM graph_observations go"
    f" WHERE go.entity_id = e.id AND go.seq NOT IN {EXPIRED}),"
    " e.created_at, e.updated_at"
)
LIVE_SOURCES = f"graph_relation_sources rs WHERE rs.relation_id = r.id AND rs.seq NOT IN {EXPIRED}"
RELATION_COLUMNS = (
    "r.id, r.namespace, s.name, s.key, r.predicate, o.name, o.key, r.declared,"
    f" (SELECT count(*) FROM {LIVE_SOURCES}), (SELECT max(rs.at) FROM {LIVE_SOURCES})"
)
# Mentions found in the knowledge tools' observation memories (databases extracted them
# before those memories were left out of extraction).
OBSERVATIONS_LEFT_OUT = (
    " AND NOT EXISTS (SELECT 1 FROM graph_observations go WHERE go.seq = gm.seq)"
)
RELATION_FROM = (
    "graph_relations r JOIN graph_entities s ON s.id = r.subject_id"
    " JOIN graph_entities o ON o.id = r.object_id"
)


def _shown(alias: str) -> str:
    """Whether entity ``alias`` is shown: declared, or mentioned by a live memory (an
    undeclared entity has no observations: adding one declares it)."""
    return (
        f"({alias}.declared OR EXISTS (SELECT 1 FROM graph_mentions gm"
        f" WHERE gm.entity_id = {alias}.id AND gm.seq NOT IN {EXPIRED}))"
    )


# A relation is shown when it is declared or stated by a live memory, and both its entities
# are shown (the purge drops a relation with the entity it leaves orphaned).
RELATION_SHOWN = (
    f"(r.declared OR EXISTS (SELECT 1 FROM {LIVE_SOURCES})) AND {_shown('s')} AND {_shown('o')}"
)


def enqueue_graph(connection: apsw.Connection, seq: int, model: str, now: datetime) -> str:
    """Queue a graph extraction job for memory ``seq`` inside the caller's transaction."""
    job_id = new_id()
    stamp = to_storage(now)
    connection.execute(
        "INSERT INTO jobs(id, seq, kind, model, state, attempts, run_after, created_at, updated_at)"
        " VALUES (?, ?, 'graph', ?, 'queued', 0, ?, ?, ?)",
        (job_id, seq, model, stamp, stamp, stamp),
    )
    return job_id


def _ids(values: Sequence[int]) -> str:
    return json.dumps([int(value) for value in values])


def _entity(row: Sequence[Any]) -> EntityRecord:
    return EntityRecord(
        id=int(row[0]),
        namespace=row[1],
        key=row[2],
        name=row[3],
        type=row[4],
        declared=bool(row[5]),
        mentions=int(row[6]),
        observations=int(row[7]),
        created_at=from_storage(row[8]),
        updated_at=from_storage(row[9]),
    )


def _relation(row: Sequence[Any]) -> RelationRecord:
    return RelationRecord(
        id=int(row[0]),
        namespace=row[1],
        subject=row[2],
        subject_key=row[3],
        predicate=row[4],
        object=row[5],
        object_key=row[6],
        declared=bool(row[7]),
        sources=int(row[8]),
        at=None if row[9] is None else from_storage(row[9]),
    )


def _upsert_entity(
    connection: apsw.Connection, namespace: str, key: str, name: str, type: str, stamp: str
) -> int:
    # The name is the first extracted spelling; when the mentions giving a name or type go,
    # migration 24's triggers re-derive them from the mentions left.
    row = connection.execute(
        "INSERT INTO graph_entities(namespace, key, name, type, declared, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, 0, ?, ?) ON CONFLICT(namespace, key) DO UPDATE SET"
        " type = CASE WHEN graph_entities.declared = 0"
        f" AND graph_entities.type IN {GENERIC_SQL} AND excluded.type NOT IN {GENERIC_SQL}"
        " THEN excluded.type ELSE graph_entities.type END,"
        " updated_at = excluded.updated_at RETURNING id",
        (namespace, key, name, type, stamp, stamp),
    ).fetchone()
    assert row is not None
    return int(row[0])


class SQLiteGraph:
    """:class:`recalld.store.graph.GraphStore` on the store's connections."""

    def __init__(self, database: SQLiteDatabase) -> None:
        self._database = database
        # version()'s last answer per namespace, with the mark of change it was read at
        # (the connection, its PRAGMA data_version and total_changes) and the next expiry.
        self._versions: dict[str, tuple[tuple[Any, ...], int, str | None]] = {}

    def _transact(self, operation: Callable[[apsw.Connection], T]) -> T:
        return self._database.write(operation)

    def _read(self, sql: str, params: dict[str, Any] | tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._database.read(sql, params)

    # -- the extraction queue ---------------------------------------------------

    def claim_jobs(
        self,
        worker_id: str,
        model: str,
        limit: int,
        now: datetime,
        lease_until: datetime,
        max_attempts: int,
    ) -> list[GraphJob]:
        stamp = to_storage(now)

        def step(connection: apsw.Connection) -> list[GraphJob]:
            connection.execute(
                "UPDATE jobs SET state = 'failed', lease_owner = NULL, updated_at = :now,"
                " last_error = 'the worker holding it stopped (lease expired) '"
                " || attempts || ' times' WHERE kind = 'graph' AND model = :model"
                " AND state = 'running' AND lease_until <= :now AND attempts >= :max",
                {"now": stamp, "model": model, "max": max_attempts},
            )
            columns = (
                "SELECT j.id, j.seq, j.attempts, m.id, m.namespace, m.title, m.content, m.tags,"
                " m.meta, m.at, m.speaker FROM jobs j CROSS JOIN memories m ON m.seq = j.seq"
                " WHERE j.kind = 'graph' AND j.model = :model"
            )
            params = {"model": model, "now": stamp, "limit": limit}
            # Two index range reads (taken-over leases first, then due jobs in order), so a
            # claim costs the same with 100 queued jobs as with 100,000.
            rows: list[tuple[Any, ...]] = connection.execute(
                f"{columns} AND j.state = 'running' AND j.lease_until <= :now LIMIT :limit",
                params,
            ).fetchall()
            if len(rows) < limit:
                params["limit"] = limit - len(rows)
                rows += connection.execute(
                    f"{columns} AND j.state = 'queued' AND j.run_after <= :now"
                    " ORDER BY j.run_after, j.id LIMIT :limit",
                    params,
                ).fetchall()
            connection.executemany(
                "UPDATE jobs SET state = 'running', lease_owner = ?, lease_until = ?,"
                " attempts = attempts + 1, updated_at = ? WHERE id = ?",
                [(worker_id, to_storage(lease_until), stamp, row[0]) for row in rows],
            )
            return [
                GraphJob(
                    id=row[0],
                    seq=int(row[1]),
                    model=model,
                    attempts=int(row[2]) + 1,
                    memory_id=row[3],
                    namespace=row[4],
                    title=row[5],
                    content=row[6],
                    tags=tuple(json.loads(row[7])),
                    meta=json.loads(row[8]),
                    at=None if row[9] is None else datetime.fromisoformat(row[9]),
                    speaker=row[10],
                )
                for row in rows
            ]

        return self._transact(step)

    def complete_jobs(
        self,
        worker_id: str,
        model: str,
        results: Sequence[tuple[GraphJob, Extraction]],
        now: datetime,
    ) -> int:
        stamp = to_storage(now)

        def step(connection: apsw.Connection) -> int:
            completed = 0
            for job, extraction in results:
                memory = connection.execute(
                    "SELECT title, content, tags, meta, at_utc, speaker FROM memories"
                    " WHERE seq = ?",
                    (job.seq,),
                ).fetchone()
                digest = graph_text_hash(job.title, job.content, job.tags, job.meta, job.speaker)
                current = (
                    None
                    if memory is None
                    else graph_text_hash(
                        memory[0],
                        memory[1],
                        json.loads(memory[2]),
                        json.loads(memory[3]),
                        memory[5],
                    )
                )
                held = connection.execute(
                    "SELECT state, lease_owner, model FROM jobs WHERE id = ?", (job.id,)
                ).fetchone()
                unchanged = memory is not None and current == digest
                if held is None or not extraction_settles(held, worker_id, model, unchanged):
                    continue
                # The memory changed after the claim: its newer job extracts the new text.
                if memory is not None and unchanged:
                    # The knowledge tools' observations are the graph the user declared:
                    # what the extractor reads in them is no node of its own.
                    observed = connection.execute(
                        "SELECT 1 FROM graph_observations WHERE seq = ? LIMIT 1", (job.seq,)
                    ).fetchone()
                    found = Extraction() if observed is not None else extraction
                    self._apply(connection, job, found, memory[4], stamp)
                    connection.execute(
                        "INSERT INTO graph_extracted(seq, model, text_hash, extracted_at)"
                        " VALUES (?, ?, ?, ?) ON CONFLICT(seq) DO UPDATE SET"
                        " model = excluded.model, text_hash = excluded.text_hash,"
                        " extracted_at = excluded.extracted_at",
                        (job.seq, model, digest, stamp),
                    )
                connection.execute(
                    "UPDATE jobs SET state = 'done', lease_owner = NULL, lease_until = NULL,"
                    " last_error = NULL, completed_at = ?, updated_at = ? WHERE id = ?",
                    (stamp, stamp, job.id),
                )
                completed += 1
            return completed

        return self._transact(step)

    @staticmethod
    def _apply(
        connection: apsw.Connection,
        job: GraphJob,
        extraction: Extraction,
        at: str | None,
        stamp: str,
    ) -> None:
        """Upsert the extraction's entities, mentions, relations; then drop what it lost."""
        ids: dict[str, int] = {}
        # Per entity: the spelling and type this memory gives it (its first), and the count.
        counts: dict[int, tuple[str, str, int]] = {}

        def entity_id(name: str, type: str, count: int) -> int | None:
            key = entity_key(name)
            if not key or len(name) > ENTITY_NAME_MAX_CHARS or buried(connection, job, key):
                return None
            if key not in ids:
                ids[key] = _upsert_entity(
                    connection, job.namespace, key, name, type[:ENTITY_TYPE_MAX_CHARS], stamp
                )
            found = ids[key]
            surface, given, seen = counts.get(found, (name, type[:ENTITY_TYPE_MAX_CHARS], 0))
            counts[found] = (surface, given, seen + count)
            return found

        for entity in extraction.entities:
            entity_id(entity.name, entity.type, entity.count)
        relation_ids: list[int] = []
        for relation in extraction.relations:
            predicate = " ".join(relation.predicate.split())[:RELATION_PREDICATE_MAX_CHARS]
            subject = ids.get(entity_key(relation.subject)) or entity_id(
                relation.subject, "topic", 1
            )
            target = ids.get(entity_key(relation.object)) or entity_id(relation.object, "topic", 1)
            if subject is None or target is None or subject == target or not predicate:
                continue
            row = connection.execute(
                "INSERT INTO graph_relations(namespace, subject_id, predicate, object_id,"
                " declared, created_at) VALUES (?, ?, ?, ?, 0, ?)"
                " ON CONFLICT(subject_id, predicate, object_id) DO UPDATE SET"
                " namespace = graph_relations.namespace RETURNING id",
                (job.namespace, subject, predicate, target, stamp),
            ).fetchone()
            assert row is not None
            relation_ids.append(int(row[0]))
        connection.executemany(
            "INSERT INTO graph_mentions(entity_id, seq, surface, type, count)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT(entity_id, seq) DO UPDATE SET"
            " surface = excluded.surface, type = excluded.type, count = excluded.count",
            [
                (found, job.seq, surface, type, count)
                for found, (surface, type, count) in counts.items()
            ],
        )
        connection.executemany(
            "INSERT INTO graph_relation_sources(relation_id, seq, at) VALUES (?, ?, ?)"
            " ON CONFLICT(relation_id, seq) DO UPDATE SET at = excluded.at",
            [(relation_id, job.seq, at) for relation_id in dict.fromkeys(relation_ids)],
        )
        connection.execute(
            "DELETE FROM graph_mentions WHERE seq = ? AND entity_id NOT IN"
            " (SELECT value FROM json_each(?))",
            (job.seq, _ids(list(counts))),
        )
        connection.execute(
            "DELETE FROM graph_relation_sources WHERE seq = ? AND relation_id NOT IN"
            " (SELECT value FROM json_each(?))",
            (job.seq, _ids(relation_ids)),
        )

    def retry_job(
        self, worker_id: str, job: GraphJob, error: str, now: datetime, run_after: datetime | None
    ) -> None:
        stamp = to_storage(now)

        def step(connection: apsw.Connection) -> None:
            if run_after is None:
                connection.execute(
                    "UPDATE jobs SET state = 'failed', lease_owner = NULL, lease_until = NULL,"
                    " last_error = ?, updated_at = ? WHERE id = ? AND lease_owner = ?",
                    (error[:2000], stamp, job.id, worker_id),
                )
                return
            connection.execute(
                "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL,"
                " last_error = ?, run_after = ?, updated_at = ? WHERE id = ? AND lease_owner = ?",
                (error[:2000], to_storage(run_after), stamp, job.id, worker_id),
            )

        self._transact(step)

    def release_jobs(self, worker_id: str, jobs: Sequence[GraphJob], now: datetime) -> int:
        ids = [job.id for job in jobs]
        return self._transact(lambda connection: release_leased(connection, worker_id, ids, now))

    def backfill_jobs(self, model: str, now: datetime, *, retry_failed: bool = False) -> int:
        def step(connection: apsw.Connection) -> int:
            connection.execute(
                "DELETE FROM jobs WHERE kind = 'graph' AND model != ?"
                " AND state IN ('queued', 'failed')",
                (model,),
            )
            if retry_failed:  # gone, so their memories are queued again below
                connection.execute(
                    "DELETE FROM jobs WHERE kind = 'graph' AND model = ? AND state = 'failed'",
                    (model,),
                )
            missing: list[tuple[Any, ...]] = connection.execute(
                "SELECT m.seq FROM memories m WHERE NOT EXISTS"
                " (SELECT 1 FROM graph_extracted g WHERE g.seq = m.seq AND g.model = :model)"
                # "+": look the memory's jobs up by seq, never scan jobs by kind (quadratic).
                " AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.seq = m.seq AND +j.kind = 'graph'"
                " AND j.model = :model AND j.state IN ('queued', 'running', 'failed'))",
                {"model": model},
            ).fetchall()
            for (seq,) in missing:
                enqueue_graph(connection, int(seq), model, now)
            return len(missing)

        return self._transact(step)

    def rebuild(self, namespaces: Sequence[str], model: str, now: datetime) -> int:
        names = json.dumps(list(namespaces))

        def step(connection: apsw.Connection) -> int:
            connection.execute(
                "DELETE FROM jobs WHERE kind = 'graph' AND state IN ('queued', 'failed')"
                " AND seq IN (SELECT seq FROM memories"
                " WHERE namespace IN (SELECT value FROM json_each(?)))",
                (names,),
            )
            seqs: list[tuple[Any, ...]] = connection.execute(
                "SELECT seq FROM memories WHERE namespace IN (SELECT value FROM json_each(?))",
                (names,),
            ).fetchall()
            for (seq,) in seqs:
                enqueue_graph(connection, int(seq), model, now)
            return len(seqs)

        return self._transact(step)

    # -- reads ---------------------------------------------------------------------

    def entities_by_key(
        self, namespace: str, keys: Sequence[str], now: datetime
    ) -> dict[str, EntityRecord]:
        if not keys:
            return {}
        rows = self._read(
            f"SELECT {LIVE_ENTITY_COLUMNS} FROM graph_entities e WHERE e.namespace = :namespace"
            f" AND e.key IN (SELECT value FROM json_each(:keys)) AND {_shown('e')}",
            {"namespace": namespace, "keys": json.dumps(list(keys)), "now": to_storage(now)},
        )
        return {record.key: record for record in map(_entity, rows)}

    def entity_by_id(
        self, namespace: str, entity_ids: Sequence[int], now: datetime
    ) -> dict[int, EntityRecord]:
        if not entity_ids:
            return {}
        rows = self._read(
            f"SELECT {LIVE_ENTITY_COLUMNS} FROM json_each(:ids) AS wanted"
            " CROSS JOIN graph_entities e ON e.id = wanted.value"
            f" WHERE e.namespace = :namespace AND {_shown('e')}",
            {"ids": _ids(entity_ids), "namespace": namespace, "now": to_storage(now)},
        )
        return {record.id: record for record in map(_entity, rows)}

    def list_entities(
        self,
        namespace: str,
        now: datetime,
        *,
        query: str | None,
        type: str | None,
        limit: int,
        after: tuple[str, int] | None,
    ) -> list[EntityRecord]:
        params: dict[str, Any] = {"namespace": namespace, "limit": limit, "now": to_storage(now)}
        where = ["e.namespace = :namespace"]
        if type is not None:
            # The whole type in any case (NOCASE folded ASCII only; see list_entities' query).
            params["type"] = substring_pattern(type).glob[1:-1]
            where.append("e.type GLOB :type")
        if query:
            # As search_entities: GLOB reads the pattern's character classes, so a name or
            # type matches in any case, the same on both stores (LIKE folded ASCII only).
            params["key"] = entity_key(query) or query
            params["glob"] = substring_pattern(query).glob
            where.append("(instr(e.key, :key) > 0 OR e.name GLOB :glob OR e.type GLOB :glob)")
        if after is not None:
            params["after_key"], params["after_id"] = after
            where.append("(e.key, e.id) > (:after_key, :after_id)")
        where.append(_shown("e"))
        sql = (
            f"SELECT {LIVE_ENTITY_COLUMNS} FROM graph_entities e WHERE {' AND '.join(where)}"
            " ORDER BY e.key, e.id LIMIT :limit OFFSET :offset"
        )
        return list_in_chunks(
            lambda chunk, offset: [
                _entity(row) for row in self._read(sql, params | {"limit": chunk, "offset": offset})
            ],
            query,
            params.get("key", ""),
            type,
            limit,
        )

    def search_entities(
        self, namespace: str, text: str, now: datetime, limit: int
    ) -> list[EntityRecord]:
        if "\x00" in text:
            return []  # no name, type or memory holds one (and GLOB would stop reading there)
        pattern = substring_pattern(text)
        # The query's own key (nothing trimmed: see search_key); the name whose key is the
        # query's, trimmed, comes first.
        key = search_key(text)
        params: dict[str, Any] = {
            "namespace": namespace,
            "key": key,
            "exact": entity_key(text),
            "glob": pattern.glob,
            "now": to_storage(now),
        }
        # GLOB is case-sensitive and reads the pattern's character classes (see
        # recalld.graph.matching); the key is case-folded on both sides already.
        sql = (
            f"SELECT {LIVE_ENTITY_COLUMNS} FROM graph_entities e"
            " WHERE e.namespace = :namespace AND ("
            " e.name GLOB :glob OR e.type GLOB :glob"
            " OR (:key != '' AND instr(e.key, :key) > 0)"
            " OR EXISTS (SELECT 1 FROM graph_observations o"
            " JOIN memories m ON m.seq = o.seq WHERE o.entity_id = e.id"
            " AND (m.expires_at IS NULL OR m.expires_at > :now)"
            f" AND m.content GLOB :glob)) AND {_shown('e')}"
            " ORDER BY e.key = :exact DESC, e.key, e.id LIMIT :limit OFFSET :offset"
        )
        return search_in_chunks(
            lambda chunk, offset: [
                _entity(row) for row in self._read(sql, params | {"limit": chunk, "offset": offset})
            ],
            lambda ids: self.observation_memories(namespace, ids, now),
            pattern,
            key,
            limit,
        )

    def mentions(
        self,
        namespace: str,
        entity_ids: Sequence[int],
        now: datetime,
        per_entity: int,
        *,
        observations: bool = True,
    ) -> list[MentionRecord]:
        if not entity_ids:
            return []
        rows = self._read(
            "SELECT entity_id, seq, surface, count FROM (SELECT gm.entity_id, gm.seq,"
            " gm.surface, gm.count, row_number() OVER"
            " (PARTITION BY gm.entity_id ORDER BY gm.seq DESC) AS rank"
            # CROSS JOIN keeps the planner driving from the few entities asked for.
            " FROM json_each(:ids) AS wanted"
            " CROSS JOIN graph_mentions gm ON gm.entity_id = wanted.value"
            " CROSS JOIN memories m ON m.seq = gm.seq"
            " WHERE m.namespace = :namespace AND (m.expires_at IS NULL OR m.expires_at > :now)"
            f"{'' if observations else OBSERVATIONS_LEFT_OUT})"
            " WHERE rank <= :per ORDER BY entity_id, seq DESC",
            {
                "ids": _ids(entity_ids),
                "namespace": namespace,
                "now": to_storage(now),
                "per": per_entity,
            },
        )
        return [MentionRecord(int(a), int(b), str(c), int(d)) for a, b, c, d in rows]

    def entities_of(self, namespace: str, seqs: Sequence[int]) -> list[MentionRecord]:
        if not seqs:
            return []
        rows = self._read(
            "SELECT gm.entity_id, gm.seq, gm.surface, gm.count FROM json_each(?) AS wanted"
            " CROSS JOIN graph_mentions gm ON gm.seq = wanted.value"
            " CROSS JOIN graph_entities e ON e.id = gm.entity_id WHERE e.namespace = ?",
            (_ids(seqs), namespace),
        )
        return [MentionRecord(int(a), int(b), str(c), int(d)) for a, b, c, d in rows]

    def observation_memories(
        self, namespace: str, entity_ids: Sequence[int], now: datetime
    ) -> dict[int, list[tuple[int, str]]]:
        if not entity_ids:
            return {}
        rows = self._read(
            "SELECT o.entity_id, m.seq, m.content FROM json_each(?) AS wanted"
            " CROSS JOIN graph_observations o ON o.entity_id = wanted.value"
            " CROSS JOIN memories m ON m.seq = o.seq WHERE m.namespace = ?"
            " AND (m.expires_at IS NULL OR m.expires_at > ?) ORDER BY m.seq",
            (_ids(entity_ids), namespace, to_storage(now)),
        )
        found: dict[int, list[tuple[int, str]]] = {}
        for entity, seq, content in rows:
            found.setdefault(int(entity), []).append((int(seq), str(content)))
        return found

    def first_observations(
        self, namespace: str, entity_id: int, now: datetime, limit: int, after: int = 0
    ) -> list[tuple[int, str]]:
        rows = self._read(
            "SELECT m.seq, m.content FROM graph_observations o"
            " CROSS JOIN memories m ON m.seq = o.seq WHERE o.entity_id = ? AND o.seq > ?"
            " AND m.namespace = ? AND (m.expires_at IS NULL OR m.expires_at > ?)"
            " ORDER BY o.seq LIMIT ?",
            (entity_id, after, namespace, to_storage(now), limit),
        )
        return [(int(seq), str(content)) for seq, content in rows]

    def version(self, namespace: str, now: datetime) -> int:
        # Watchers poll this four times a second, and counting a namespace's rows takes
        # 17 ms at 50,000 entities: they are counted again only when the file changed. Any
        # commit by another connection (of this process or another) moves PRAGMA
        # data_version, this connection's own writes move its total_changes: every write
        # shows, an UPDATE too (an entity's type, declared over an extracted one), where
        # the ends of the AUTOINCREMENT sequences missed it. An expiry writes nothing: the
        # memories expired by now are counted, again once the next expiry has passed.
        stamp = to_storage(now)

        def read(connection: apsw.Connection) -> int:
            # The mark is read before the counts: a commit between them is counted again.
            data_version: list[tuple[Any, ...]] = connection.execute(
                "PRAGMA data_version"
            ).fetchall()
            mark = (connection, int(data_version[0][0]), connection.total_changes())
            known = self._versions.get(namespace)
            if known is not None and known[0] == mark and (known[2] is None or stamp < known[2]):
                return known[1]
            # The namespace's own counts and ends, so a change elsewhere changes nothing
            # here. Ids are AUTOINCREMENT (never reused): a delete and an add between two
            # calls still move the largest, and the counts catch a delete alone. The expired
            # are read off the expiry index (`+namespace`: few until the purge), not off
            # every row of the namespace.
            rows = connection.execute(
                "SELECT (SELECT count(*) FROM graph_entities WHERE namespace = ?1),"
                " (SELECT max(id) FROM graph_entities WHERE namespace = ?1),"
                " (SELECT max(updated_at) FROM graph_entities WHERE namespace = ?1),"
                " (SELECT count(*) FROM graph_relations WHERE namespace = ?1),"
                " (SELECT max(id) FROM graph_relations WHERE namespace = ?1),"
                " (SELECT count(*) FROM memories WHERE namespace = ?1),"
                " (SELECT max(updated_at) FROM memories WHERE namespace = ?1),"
                " (SELECT count(*) FROM memories WHERE +namespace = ?1 AND expires_at <= ?2),"
                " (SELECT min(expires_at) FROM memories WHERE expires_at > ?2)",
                (namespace, stamp),
            ).fetchall()
            *counts, next_expiry = rows[0]
            version = zlib.crc32(repr(tuple(counts)).encode())
            self._versions[namespace] = (
                mark,
                version,
                None if next_expiry is None else str(next_expiry),
            )
            return version

        return self._database.run(read)

    def relations(
        self,
        namespace: str,
        now: datetime,
        *,
        entity_ids: Sequence[int] | None,
        predicate: str | None,
        limit: int,
        after_id: int = 0,
    ) -> list[RelationRecord]:
        params: dict[str, Any] = {
            "namespace": namespace,
            "limit": limit,
            "after": after_id,
            "now": to_storage(now),
        }
        where = ["r.namespace = :namespace", "r.id > :after"]
        if entity_ids is not None:
            # "+" keeps the namespace index out: the id lists below are far more selective.
            where[0] = "+r.namespace = :namespace"
            params["ids"] = _ids(entity_ids)
            # Two index lookups (by subject, by object) rather than a scan of the namespace.
            where.append(
                "r.id IN (SELECT x.id FROM json_each(:ids) AS w CROSS JOIN graph_relations x"
                " ON x.subject_id = w.value UNION SELECT y.id FROM json_each(:ids) AS w"
                " CROSS JOIN graph_relations y ON y.object_id = w.value)"
            )
        if predicate is not None:
            params["predicate"] = predicate
            where.append("r.predicate = :predicate")
        where.append(RELATION_SHOWN)
        rows = self._read(
            f"SELECT {RELATION_COLUMNS} FROM {RELATION_FROM} WHERE {' AND '.join(where)}"
            " ORDER BY r.id LIMIT :limit",
            params,
        )
        return [_relation(row) for row in rows]

    def relations_from(
        self, namespace: str, subject_ids: Sequence[int], now: datetime
    ) -> list[RelationRecord]:
        if not subject_ids:
            return []
        rows = self._read(
            f"SELECT {RELATION_COLUMNS} FROM {RELATION_FROM} WHERE +r.namespace = :namespace"
            " AND r.id IN (SELECT x.id FROM json_each(:ids) AS w CROSS JOIN graph_relations x"
            f" ON x.subject_id = w.value) AND {RELATION_SHOWN} ORDER BY s.key, r.id",
            {"namespace": namespace, "ids": _ids(subject_ids), "now": to_storage(now)},
        )
        return [_relation(row) for row in rows]

    def counts(self, namespaces: Sequence[str], failures_limit: int) -> GraphCounts:
        names = json.dumps(list(namespaces))
        inside = "namespace IN (SELECT value FROM json_each(:names))"
        params: dict[str, Any] = {"names": names, "limit": failures_limit}

        def one(sql: str) -> int:
            return int(self._read(sql, params)[0][0])

        entities = one(f"SELECT count(*) FROM graph_entities WHERE {inside}")
        relations = one(f"SELECT count(*) FROM graph_relations WHERE {inside}")
        mentions = one(
            "SELECT count(*) FROM graph_mentions gm JOIN graph_entities e ON e.id = gm.entity_id"
            f" WHERE e.{inside}"
        )
        observations = one(
            "SELECT count(*) FROM graph_observations go"
            f" JOIN graph_entities e ON e.id = go.entity_id WHERE e.{inside}"
        )
        extracted = self._read(
            "SELECT g.model, count(*) FROM graph_extracted g JOIN memories m ON m.seq = g.seq"
            f" WHERE m.{inside} GROUP BY 1 ORDER BY 1",
            params,
        )
        jobs = self._read(
            "SELECT j.state, count(*) FROM jobs j JOIN memories m ON m.seq = j.seq"
            f" WHERE j.kind = 'graph' AND m.{inside} GROUP BY 1",
            params,
        )
        failures = self._read(
            "SELECT j.id, m.id, m.namespace, j.model, j.state, j.attempts, j.last_error,"
            " j.updated_at FROM jobs j JOIN memories m ON m.seq = j.seq"
            f" WHERE j.kind = 'graph' AND m.{inside}"
            " AND (j.state = 'failed' OR j.last_error IS NOT NULL)"
            " ORDER BY j.updated_at DESC LIMIT :limit",
            params,
        )
        by_state = {"queued": 0, "running": 0, "done": 0, "failed": 0}
        by_state.update({str(state): int(count) for state, count in jobs})
        return GraphCounts(
            entities=entities,
            relations=relations,
            mentions=mentions,
            observations=observations,
            extracted={str(model): int(count) for model, count in extracted},
            jobs_by_state=by_state,
            failures=[
                JobFailure(
                    job_id=row[0],
                    memory_id=row[1],
                    namespace=row[2],
                    model=row[3],
                    state=row[4],
                    attempts=int(row[5]),
                    error=row[6],
                    updated_at=from_storage(row[7]),
                )
                for row in failures
            ],
        )
