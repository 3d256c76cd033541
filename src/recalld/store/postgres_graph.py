"""The PostgreSQL side of the knowledge graph: entities, mentions, relations, the graph jobs.

The same rules as :mod:`recalld.store.sqlite_graph`: graph jobs share the
``jobs`` table (``kind = 'graph'``), are claimed ``FOR UPDATE SKIP LOCKED``,
retried with backoff; completing one replaces its memory's mentions and
relation sources, adding before removing; orphans are dropped by the graph
migration's triggers. A batch writes its graph rows in one global order (see
:mod:`.postgres_graph_extraction`), so workers extracting memories that mention
the same entities take their row locks in the same order (a deadlock the
database still detects is retried whole). Keys sort by code point
(``COLLATE "C"``), as SQLite sorts them.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from recalld.graph.matching import substring_pattern
from recalld.graph.names import entity_key, search_key
from recalld.graph.types import Extraction
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
from recalld.store.postgres_connection import (
    UNBOUNDED_LOCK_WAIT,
    Connection,
    PostgresDatabase,
    lock_saying_so,
)
from recalld.store.postgres_graph_extraction import apply_extractions
from recalld.store.postgres_job_rows import release_leased
from recalld.store.postgres_rows import local_instant
from recalld.store.postgres_semantic import _failure, enqueue_jobs

__all__ = ["PostgresGraph", "enqueue_graph"]

T = TypeVar("T")

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
# now" (the complement of mentions()' test): those are read once per statement off the
# expiry index into a hashed subplan (the purge keeps them few), so a mention is tested
# without reading its memory's row; a speaker with tens of thousands of mentions is still
# counted off the index.
EXPIRED = "(SELECT x.seq FROM memories x WHERE x.expires_at <= %(now)s)"
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
    # OFFSET 0 keeps the EXISTS a probe of this entity's mentions: else the planner may
    # hash the entity ids of every live mention in the store, to test a page of entities.
    return (
        f"({alias}.declared OR EXISTS (SELECT 1 FROM graph_mentions gm"
        f" WHERE gm.entity_id = {alias}.id AND gm.seq NOT IN {EXPIRED} OFFSET 0))"
    )


# A relation is shown when it is declared or stated by a live memory, and both its entities
# are shown (the purge drops a relation with the entity it leaves orphaned).
RELATION_SHOWN = (
    f"(r.declared OR EXISTS (SELECT 1 FROM {LIVE_SOURCES} OFFSET 0))"
    f" AND {_shown('s')} AND {_shown('o')}"
)


def enqueue_graph(connection: Connection, seq: int, model: str, now: datetime) -> str:
    """Queue a graph extraction job for memory ``seq`` inside the caller's transaction."""
    return enqueue_jobs(connection, "graph", [seq], model, now)[0]


def _ids(values: Sequence[int]) -> list[int]:
    return [int(value) for value in values]


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
        created_at=row[8],
        updated_at=row[9],
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
        at=row[9],
    )


class PostgresGraph:
    """:class:`recalld.store.graph.GraphStore` on the store's connection pool."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._database = database

    def _transact(self, operation: Callable[[Connection], T]) -> T:
        return self._database.write(operation)

    def _read(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
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
        def step(connection: Connection) -> list[GraphJob]:
            connection.execute(
                "UPDATE jobs SET state = 'failed', lease_owner = NULL, updated_at = %(now)s,"
                " last_error = 'the worker holding it stopped (lease expired) '"
                " || attempts || ' times' WHERE id IN (SELECT id FROM jobs"
                " WHERE kind = 'graph' AND model = %(model)s AND state = 'running'"
                " AND lease_until <= %(now)s AND attempts >= %(max)s FOR UPDATE SKIP LOCKED)",
                {"now": now, "model": model, "max": max_attempts},
            )
            claimed = connection.execute(
                "WITH picked AS (SELECT id FROM jobs WHERE kind = 'graph' AND model = %(model)s"
                " AND ((state = 'queued' AND run_after <= %(now)s)"
                " OR (state = 'running' AND lease_until <= %(now)s))"
                " ORDER BY run_after, id LIMIT %(limit)s FOR UPDATE SKIP LOCKED)"
                " UPDATE jobs j SET state = 'running', lease_owner = %(worker)s,"
                " lease_until = %(lease)s, attempts = j.attempts + 1, updated_at = %(now)s"
                " FROM picked WHERE j.id = picked.id"
                " RETURNING j.id, j.seq, j.attempts, j.run_after",
                {
                    "model": model,
                    "now": now,
                    "limit": limit,
                    "worker": worker_id,
                    "lease": lease_until,
                },
            ).fetchall()
            if not claimed:
                return []
            memories = {
                int(row[0]): row[1:]
                for row in connection.execute(
                    "SELECT seq, id, namespace, title, content, tags, meta, at_utc, at_offset,"
                    " speaker FROM memories WHERE seq = ANY(%s)",
                    ([int(row[1]) for row in claimed],),
                ).fetchall()
            }
            jobs = []
            for job_id, seq, attempts, _ in sorted(claimed, key=lambda row: (row[3], row[0])):
                memory = memories.get(int(seq))
                if memory is None:
                    continue
                jobs.append(
                    GraphJob(
                        id=job_id,
                        seq=int(seq),
                        model=model,
                        attempts=int(attempts),
                        memory_id=memory[0],
                        namespace=memory[1],
                        title=memory[2],
                        content=memory[3],
                        tags=tuple(memory[4]),
                        meta=dict(memory[5]),
                        at=local_instant(memory[6], memory[7]),
                        speaker=memory[8],
                    )
                )
            return jobs

        return self._transact(step)

    def complete_jobs(
        self,
        worker_id: str,
        model: str,
        results: Sequence[tuple[GraphJob, Extraction]],
        now: datetime,
    ) -> int:
        def step(connection: Connection) -> int:
            completed = 0
            applied: list[tuple[GraphJob, Extraction, datetime | None]] = []
            seen: set[int] = set()
            # Memories and their jobs in seq order, then the graph rows of the whole batch
            # in one order (see postgres_graph_extraction): no two completions, nor recall's
            # catch-up, take the same rows in opposite orders.
            for job, extraction in sorted(results, key=lambda item: (item[0].seq, item[0].id)):
                # The memory first, then the job: the order forget locks them in.
                memory = connection.execute(
                    "SELECT title, content, tags, meta, at_utc, speaker FROM memories"
                    " WHERE seq = %s FOR SHARE",
                    (job.seq,),
                ).fetchone()
                held = connection.execute(
                    "SELECT state, lease_owner, model FROM jobs WHERE id = %s FOR UPDATE",
                    (job.id,),
                ).fetchone()
                digest = graph_text_hash(job.title, job.content, job.tags, job.meta, job.speaker)
                current = (
                    None
                    if memory is None
                    else graph_text_hash(
                        memory[0], memory[1], list(memory[2]), dict(memory[3]), memory[5]
                    )
                )
                unchanged = memory is not None and current == digest
                if held is None or not extraction_settles(held, worker_id, model, unchanged):
                    continue
                # The memory changed after the claim: its newer job extracts the new text.
                # Two jobs of one memory in a batch read the same text: it is applied once.
                if memory is not None and unchanged and job.seq not in seen:
                    seen.add(job.seq)
                    # The knowledge tools' observations are the graph the user declared:
                    # what the extractor reads in them is no node of its own.
                    observed = connection.execute(
                        "SELECT 1 FROM graph_observations WHERE seq = %s LIMIT 1", (job.seq,)
                    ).fetchone()
                    found = Extraction() if observed is not None else extraction
                    applied.append((job, found, memory[4]))
                    connection.execute(
                        "INSERT INTO graph_extracted(seq, model, text_hash, extracted_at)"
                        " VALUES (%s, %s, %s, %s) ON CONFLICT (seq) DO UPDATE SET"
                        " model = excluded.model, text_hash = excluded.text_hash,"
                        " extracted_at = excluded.extracted_at",
                        (job.seq, model, digest, now),
                    )
                connection.execute(
                    "UPDATE jobs SET state = 'done', lease_owner = NULL, lease_until = NULL,"
                    " last_error = NULL, completed_at = %s, updated_at = %s WHERE id = %s",
                    (now, now, job.id),
                )
                completed += 1
            apply_extractions(connection, applied, now)
            return completed

        return self._transact(step)

    def retry_job(
        self, worker_id: str, job: GraphJob, error: str, now: datetime, run_after: datetime | None
    ) -> None:
        def step(connection: Connection) -> None:
            if run_after is None:
                connection.execute(
                    "UPDATE jobs SET state = 'failed', lease_owner = NULL, lease_until = NULL,"
                    " last_error = %s, updated_at = %s WHERE id = %s AND lease_owner = %s",
                    (error[:2000], now, job.id, worker_id),
                )
                return
            connection.execute(
                "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL,"
                " last_error = %s, run_after = %s, updated_at = %s"
                " WHERE id = %s AND lease_owner = %s",
                (error[:2000], run_after, now, job.id, worker_id),
            )

        self._transact(step)

    def release_jobs(self, worker_id: str, jobs: Sequence[GraphJob], now: datetime) -> int:
        ids = [job.id for job in jobs]
        return self._transact(lambda connection: release_leased(connection, worker_id, ids, now))

    def backfill_jobs(self, model: str, now: datetime, *, retry_failed: bool = False) -> int:
        def step(connection: Connection) -> int:
            connection.execute(UNBOUNDED_LOCK_WAIT)  # another worker's backfill
            lock_saying_so(
                connection,
                f"backfill:graph:{model}",
                f"{self._database.display}: another worker is queueing the memories {model}"
                " has not extracted; waiting for it to finish (minutes on a large table)",
            )
            connection.execute(
                "DELETE FROM jobs WHERE kind = 'graph' AND model <> %s"
                " AND state IN ('queued', 'failed')",
                (model,),
            )
            if retry_failed:  # gone, so their memories are queued again below
                connection.execute(
                    "DELETE FROM jobs WHERE kind = 'graph' AND model = %s AND state = 'failed'",
                    (model,),
                )
            missing = [
                int(row[0])
                for row in connection.execute(
                    "SELECT m.seq FROM memories m WHERE NOT EXISTS"
                    " (SELECT 1 FROM graph_extracted g WHERE g.seq = m.seq AND g.model = %(model)s)"
                    " AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.seq = m.seq"
                    " AND j.kind = 'graph' AND j.model = %(model)s"
                    " AND j.state IN ('queued', 'running', 'failed')) ORDER BY m.seq",
                    {"model": model},
                ).fetchall()
            ]
            enqueue_jobs(connection, "graph", missing, model, now)
            return len(missing)

        return self._transact(step)

    def rebuild(self, namespaces: Sequence[str], model: str, now: datetime) -> int:
        names = list(namespaces)

        def step(connection: Connection) -> int:
            connection.execute(
                "DELETE FROM jobs WHERE kind = 'graph' AND state IN ('queued', 'failed')"
                " AND seq IN (SELECT seq FROM memories WHERE namespace = ANY(%s))",
                (names,),
            )
            seqs = [
                int(row[0])
                for row in connection.execute(
                    "SELECT seq FROM memories WHERE namespace = ANY(%s) ORDER BY seq", (names,)
                ).fetchall()
            ]
            enqueue_jobs(connection, "graph", seqs, model, now)
            return len(seqs)

        return self._transact(step)

    # -- reads ---------------------------------------------------------------------

    def entities_by_key(
        self, namespace: str, keys: Sequence[str], now: datetime
    ) -> dict[str, EntityRecord]:
        if not keys:
            return {}
        rows = self._read(
            f"SELECT {LIVE_ENTITY_COLUMNS} FROM graph_entities e"
            f" WHERE e.namespace = %(namespace)s AND e.key = ANY(%(keys)s) AND {_shown('e')}",
            {"namespace": namespace, "keys": list(keys), "now": now},
        )
        return {record.key: record for record in map(_entity, rows)}

    def entity_by_id(
        self, namespace: str, entity_ids: Sequence[int], now: datetime
    ) -> dict[int, EntityRecord]:
        if not entity_ids:
            return {}
        rows = self._read(
            f"SELECT {LIVE_ENTITY_COLUMNS} FROM graph_entities e WHERE e.id = ANY(%(ids)s)"
            f" AND e.namespace = %(namespace)s AND {_shown('e')}",
            {"ids": _ids(entity_ids), "namespace": namespace, "now": now},
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
        params: dict[str, Any] = {"namespace": namespace, "limit": limit, "now": now}
        where = ["e.namespace = %(namespace)s"]
        if type is not None:
            # The whole type in any case, as on SQLite (lower() folds what the locale folds).
            params["type"] = f"^{substring_pattern(type).regex}$"
            where.append("e.type ~ %(type)s")
        if query:
            # As search_entities: "~" reads the pattern's character classes, so a name or
            # type matches in any case, the same on both stores (ILIKE folded what the
            # database's locale folds: "istanbul" found "İstanbul" here, not on SQLite).
            params["key"] = entity_key(query) or query
            params["regex"] = substring_pattern(query).regex
            where.append("(strpos(e.key, %(key)s) > 0 OR e.name ~ %(regex)s OR e.type ~ %(regex)s)")
        if after is not None:
            params["after_key"], params["after_id"] = after
            where.append(
                '(e.key COLLATE "C" > %(after_key)s'
                ' OR (e.key COLLATE "C" = %(after_key)s AND e.id > %(after_id)s))'
            )
        where.append(_shown("e"))
        sql = (
            f"SELECT {LIVE_ENTITY_COLUMNS} FROM graph_entities e WHERE {' AND '.join(where)}"
            ' ORDER BY e.key COLLATE "C", e.id LIMIT %(limit)s OFFSET %(offset)s'
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
            return []  # no name, type or memory holds one (and PostgreSQL refuses it)
        pattern = substring_pattern(text)
        # The query's own key (nothing trimmed: see search_key); the name whose key is the
        # query's, trimmed, comes first.
        key = search_key(text)
        params: dict[str, Any] = {
            "namespace": namespace,
            "key": key,
            "exact": entity_key(text),
            "regex": pattern.regex,
            "now": now,
        }
        # "~" is case-sensitive whatever the locale and reads the pattern's character
        # classes (see recalld.graph.matching), so both stores give the same answers;
        # ILIKE would fold what the database's locale folds. The key is case-folded already.
        sql = (
            f"SELECT {LIVE_ENTITY_COLUMNS} FROM graph_entities e"
            " WHERE e.namespace = %(namespace)s AND ("
            " e.name ~ %(regex)s OR e.type ~ %(regex)s"
            " OR (%(key)s <> '' AND strpos(e.key, %(key)s) > 0)"
            " OR EXISTS (SELECT 1 FROM graph_observations o"
            " JOIN memories m ON m.seq = o.seq WHERE o.entity_id = e.id"
            " AND (m.expires_at IS NULL OR m.expires_at > %(now)s)"
            f" AND m.content ~ %(regex)s)) AND {_shown('e')}"
            ' ORDER BY e.key = %(exact)s DESC, e.key COLLATE "C", e.id'
            " LIMIT %(limit)s OFFSET %(offset)s"
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
            " FROM graph_mentions gm JOIN memories m ON m.seq = gm.seq"
            " WHERE gm.entity_id = ANY(%(ids)s) AND m.namespace = %(namespace)s"
            " AND (m.expires_at IS NULL OR m.expires_at > %(now)s)"
            f"{'' if observations else OBSERVATIONS_LEFT_OUT}) ranked"
            " WHERE rank <= %(per)s ORDER BY entity_id, seq DESC",
            {"ids": _ids(entity_ids), "namespace": namespace, "now": now, "per": per_entity},
        )
        return [MentionRecord(int(a), int(b), str(c), int(d)) for a, b, c, d in rows]

    def entities_of(self, namespace: str, seqs: Sequence[int]) -> list[MentionRecord]:
        if not seqs:
            return []
        rows = self._read(
            "SELECT gm.entity_id, gm.seq, gm.surface, gm.count FROM graph_mentions gm"
            " JOIN graph_entities e ON e.id = gm.entity_id"
            " WHERE gm.seq = ANY(%s) AND e.namespace = %s",
            (_ids(seqs), namespace),
        )
        return [MentionRecord(int(a), int(b), str(c), int(d)) for a, b, c, d in rows]

    def observation_memories(
        self, namespace: str, entity_ids: Sequence[int], now: datetime
    ) -> dict[int, list[tuple[int, str]]]:
        if not entity_ids:
            return {}
        rows = self._read(
            "SELECT o.entity_id, m.seq, m.content FROM graph_observations o"
            " JOIN memories m ON m.seq = o.seq WHERE o.entity_id = ANY(%s) AND m.namespace = %s"
            " AND (m.expires_at IS NULL OR m.expires_at > %s) ORDER BY m.seq",
            (_ids(entity_ids), namespace, now),
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
            " JOIN memories m ON m.seq = o.seq WHERE o.entity_id = %s AND o.seq > %s"
            " AND m.namespace = %s AND (m.expires_at IS NULL OR m.expires_at > %s)"
            " ORDER BY o.seq LIMIT %s",
            (entity_id, after, namespace, now, limit),
        )
        return [(int(seq), str(content)) for seq, content in rows]

    def version(self, namespace: str, now: datetime) -> int:
        # Watchers call this when the change feed tells of a write (or every few seconds).
        # Ids come from sequences (never reused): a delete and an add between two calls
        # still move the largest, and the counts catch a delete alone. An expiry writes
        # nothing: the memories expired by now are counted (review of pass f64).
        rows = self._read(
            "SELECT (SELECT count(*) FROM graph_entities WHERE namespace = %(ns)s),"
            " (SELECT max(id) FROM graph_entities WHERE namespace = %(ns)s),"
            " (SELECT count(*) FROM graph_relations WHERE namespace = %(ns)s),"
            " (SELECT max(id) FROM graph_relations WHERE namespace = %(ns)s),"
            " (SELECT count(*) FROM memories WHERE namespace = %(ns)s),"
            " (SELECT max(updated_at) FROM memories WHERE namespace = %(ns)s),"
            " (SELECT max(e.updated_at) FROM graph_entities e WHERE e.namespace = %(ns)s),"
            " (SELECT count(*) FROM memories WHERE namespace = %(ns)s"
            " AND expires_at <= %(now)s)",
            {"ns": namespace, "now": now},
        )
        return zlib.crc32(repr(rows[0]).encode())

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
            "now": now,
        }
        where = ["r.namespace = %(namespace)s", "r.id > %(after)s"]
        if entity_ids is not None:
            params["ids"] = _ids(entity_ids)
            where.append("(r.subject_id = ANY(%(ids)s) OR r.object_id = ANY(%(ids)s))")
        if predicate is not None:
            params["predicate"] = predicate
            where.append("r.predicate = %(predicate)s")
        where.append(RELATION_SHOWN)
        rows = self._read(
            f"SELECT {RELATION_COLUMNS} FROM {RELATION_FROM} WHERE {' AND '.join(where)}"
            " ORDER BY r.id LIMIT %(limit)s",
            params,
        )
        return [_relation(row) for row in rows]

    def relations_from(
        self, namespace: str, subject_ids: Sequence[int], now: datetime
    ) -> list[RelationRecord]:
        if not subject_ids:
            return []
        rows = self._read(
            f"SELECT {RELATION_COLUMNS} FROM {RELATION_FROM} WHERE r.namespace = %(namespace)s"
            f" AND r.subject_id = ANY(%(ids)s) AND {RELATION_SHOWN}"
            ' ORDER BY s.key COLLATE "C", r.id',
            {"namespace": namespace, "ids": _ids(subject_ids), "now": now},
        )
        return [_relation(row) for row in rows]

    def counts(self, namespaces: Sequence[str], failures_limit: int) -> GraphCounts:
        params: dict[str, Any] = {"names": list(namespaces), "limit": failures_limit}

        def one(sql: str) -> int:
            return int(self._read(sql, params)[0][0])

        entities = one("SELECT count(*) FROM graph_entities WHERE namespace = ANY(%(names)s)")
        relations = one("SELECT count(*) FROM graph_relations WHERE namespace = ANY(%(names)s)")
        mentions = one(
            "SELECT count(*) FROM graph_mentions gm JOIN graph_entities e ON e.id = gm.entity_id"
            " WHERE e.namespace = ANY(%(names)s)"
        )
        observations = one(
            "SELECT count(*) FROM graph_observations go"
            " JOIN graph_entities e ON e.id = go.entity_id WHERE e.namespace = ANY(%(names)s)"
        )
        extracted = self._read(
            "SELECT g.model, count(*) FROM graph_extracted g JOIN memories m ON m.seq = g.seq"
            ' WHERE m.namespace = ANY(%(names)s) GROUP BY 1 ORDER BY g.model COLLATE "C"',
            params,
        )
        jobs = self._read(
            "SELECT j.state, count(*) FROM jobs j JOIN memories m ON m.seq = j.seq"
            " WHERE j.kind = 'graph' AND m.namespace = ANY(%(names)s) GROUP BY 1",
            params,
        )
        failures = self._read(
            "SELECT j.id, m.id, m.namespace, j.model, j.state, j.attempts, j.last_error,"
            " j.updated_at FROM jobs j JOIN memories m ON m.seq = j.seq"
            " WHERE j.kind = 'graph' AND m.namespace = ANY(%(names)s)"
            " AND (j.state = 'failed' OR j.last_error IS NOT NULL)"
            " ORDER BY j.updated_at DESC LIMIT %(limit)s",
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
            failures=[_failure(row) for row in failures],
        )
