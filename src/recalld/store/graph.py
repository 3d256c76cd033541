"""The storage protocol of the knowledge graph: entities, mentions, relations, graph jobs.

A store that keeps a graph exposes an object with :class:`GraphStore` as
``store.graph`` (reads, the extraction queue) and, inside a write transaction,
one with :class:`GraphTransaction` as ``tx.graph`` (the knowledge tools'
writes, atomic with the memory writes they come with). Every read takes the
namespace it may see: namespaces are walls here too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from recalld.graph.matching import SubstringPattern, entity_matches, substring_pattern
from recalld.graph.types import Extraction
from recalld.store.semantic import JobFailure
from recalld.store.sql import PENDING_JOB_STATES

__all__ = [
    "LONE_TOMBSTONE",
    "STALE_TOMBSTONES",
    "EntityRecord",
    "GraphCounts",
    "GraphJob",
    "GraphStore",
    "GraphTransaction",
    "MentionRecord",
    "RelationRecord",
    "entity_key_hash",
    "extraction_settles",
    "graph_text_hash",
    "list_in_chunks",
    "search_in_chunks",
]

# The tombstones of a namespace no memory needs any more: none of it at or before the last
# memory written before the deletion is left, so no extraction can bring the entity back,
# and the key's hash would only confirm to a guessed name that the entity once existed
# ("forget leaves no trace"). A memory written later has a larger seq. The namespace's
# oldest memory is read once (the subquery is not correlated): a NOT EXISTS per tombstone
# scanned the namespace's memories for each, and forgetting an old memory beside 10,000
# tombstones and 20,000 memories held the write lock for 2 to 26 s (review of pass e66).
# The same SQL on both stores (PostgreSQL's takes them as %(name)s: see
# postgres_graph_writes); only tombstones at or after ``seq`` (the memory deleted) count.
STALE_TOMBSTONES = (
    "DELETE FROM graph_entity_tombstones WHERE namespace = :namespace AND up_to_seq >= :seq"
    " AND up_to_seq < coalesce((SELECT min(seq) FROM memories WHERE namespace = :namespace),"
    " 9223372036854775807)"
)
# The tombstone an entity's deletion just wrote, unless a memory of its namespace is left
# for it to protect (its ``up_to_seq`` is the newest memory's: every one left is at or
# before it). Only that row: dropping every stale one of the namespace there took the
# rows of another deletion's tombstones in no set order, and two deletions of entities
# deadlocked on PostgreSQL (review of pass e66).
LONE_TOMBSTONE = (
    "DELETE FROM graph_entity_tombstones WHERE namespace = :namespace"
    " AND key_hash = :key_hash AND NOT EXISTS (SELECT 1 FROM memories"
    " WHERE namespace = :namespace)"
)


def extraction_settles(held: Sequence[Any], worker_id: str, model: str, unchanged: bool) -> bool:
    """Whether a worker's extraction settles its job, ``held`` being the job's row now
    ``(state, lease_owner, model)`` and ``unchanged`` whether the memory still holds the
    text extracted (False: it was edited or forgotten since).

    The worker's own running job is settled (its extraction applied only when
    ``unchanged``). A job another worker claimed after this one's lease ran out, or handed
    back queued, is settled too when it still waits for this extractor and the text is the
    one extracted, as a held vector settles its job (:func:`recalld.store.semantic.
    completes`): a database down longer than the lease left the worker holding the
    extraction, and it was dropped and extracted again, another attempt counted each
    lease (adversarial pass e66). A job marked failed is never settled: what failed it is
    the record of why the memory has no graph."""
    state, owner, job_model = held[0], held[1], held[2]
    if state == "running" and owner == worker_id:
        return True
    return state in PENDING_JOB_STATES and job_model == model and unchanged


def graph_text_hash(
    title: str | None,
    content: str,
    tags: Sequence[str],
    meta: dict[str, Any],
    speaker: str | None = None,
) -> str:
    """A digest of everything an extractor reads, to detect a memory changed since its claim."""
    people = [meta.get(name) for name in ("speaker", "author")] if isinstance(meta, dict) else []
    if speaker is not None:
        people.append(speaker)
    payload = json.dumps([title, content, list(tags), people], ensure_ascii=False, default=str)
    return hashlib.blake2b(payload.encode(), digest_size=12).hexdigest()


def entity_key_hash(key: str) -> str:
    """How a deleted entity's key is kept in ``graph_entity_tombstones`` (migration 30):
    its SHA-256, never the name, which the memories naming it may take with them."""
    return hashlib.sha256(key.encode()).hexdigest()


def search_in_chunks(
    fetch: Callable[[int, int], list[EntityRecord]],
    observations: Callable[[Sequence[int]], dict[int, list[tuple[int, str]]]],
    pattern: SubstringPattern,
    key: str,
    limit: int,
) -> list[EntityRecord]:
    """The first ``limit`` entities ``search_entities`` answers, from a store's candidate
    query ``fetch(chunk, offset)`` (in the answer's order).

    An exact pattern's candidates are the answer; a wider one's are checked against
    their names, types and live observations, a chunk at a time until ``limit`` pass.
    """
    if pattern.exact:
        return fetch(limit, 0)
    chunk = max(limit, 100)
    found: list[EntityRecord] = []
    offset = 0
    while len(found) < limit:
        candidates = fetch(chunk, offset)
        observed = observations([record.id for record in candidates])
        found += [
            record
            for record in candidates
            if entity_matches(
                pattern,
                key,
                name=record.name,
                entity_key=record.key,
                type=record.type,
                observations=(content for _, content in observed.get(record.id, [])),
            )
        ]
        if len(candidates) < chunk:
            break
        offset += chunk
    return found[:limit]


def list_in_chunks(
    fetch: Callable[[int, int], list[EntityRecord]],
    query: str | None,
    key: str,
    type: str | None,
    limit: int,
) -> list[EntityRecord]:
    """The first ``limit`` entities ``list_entities`` answers, from a store's candidate query
    ``fetch(chunk, offset)`` (in the answer's order) for ``query`` (its key part ``key``)
    and ``type``.

    As :func:`search_in_chunks`: when a pattern is wider than its question (a dotted
    capital I or a sigma: see :mod:`recalld.graph.matching`) the candidates are checked by
    Python's lower case (a name or type contains ``query``, or the key contains ``key``;
    the type is ``type``), a chunk at a time, so "İ" does not list every name with an "i".
    """
    pattern = substring_pattern(query) if query else None
    wide_type = type is not None and not substring_pattern(type).exact
    if (pattern is None or pattern.exact) and not wide_type:
        return fetch(limit, 0)

    def answers(record: EntityRecord) -> bool:
        if type is not None and record.type.lower() != type.lower():
            return False
        return pattern is None or entity_matches(
            pattern, key, name=record.name, entity_key=record.key, type=record.type, observations=()
        )

    chunk = max(limit, 100)
    found: list[EntityRecord] = []
    offset = 0
    while len(found) < limit:
        candidates = fetch(chunk, offset)
        found += [record for record in candidates if answers(record)]
        if len(candidates) < chunk:
            break
        offset += chunk
    return found[:limit]


@dataclass(frozen=True)
class GraphJob:
    """A claimed extraction job and the parts of its memory an extractor reads."""

    id: str
    seq: int
    model: str
    attempts: int
    memory_id: str
    namespace: str
    title: str | None
    content: str
    tags: tuple[str, ...]
    meta: dict[str, Any]
    at: datetime | None
    speaker: str | None = None


@dataclass(frozen=True)
class EntityRecord:
    """One entity with its mention and observation counts."""

    id: int
    namespace: str
    key: str
    name: str
    type: str
    declared: bool
    mentions: int
    observations: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class RelationRecord:
    """One relation with its endpoints' names, how many memories state it, and the latest ``at``."""

    id: int
    namespace: str
    subject: str
    subject_key: str
    predicate: str
    object: str
    object_key: str
    declared: bool
    sources: int
    at: datetime | None


@dataclass(frozen=True)
class MentionRecord:
    """An entity mentioned by a memory: the memory's seq and the spelling found there."""

    entity_id: int
    seq: int
    surface: str
    count: int


@dataclass(frozen=True)
class GraphCounts:
    """Raw numbers behind the graph part of the status, for some namespaces."""

    entities: int
    relations: int
    mentions: int
    observations: int
    extracted: dict[str, int]
    jobs_by_state: dict[str, int]
    failures: list[JobFailure] = field(default_factory=list)


class GraphTransaction(Protocol):
    """Graph writes inside the caller's write transaction (the knowledge tools)."""

    def lock_entities(self, namespace: str, keys: Iterable[str]) -> None:
        """Hold off every other writer of these entities until this transaction ends, so a
        call that reads an entity and then writes on what it read runs as if alone (a
        delete does not miss an observation added meanwhile, a relation does not bring
        back an entity deleted meanwhile). Taken in key order: two writers cannot
        deadlock. SQLite's write transaction holds off every other writer already."""
        ...

    def find_entity(self, namespace: str, key: str, now: datetime) -> EntityRecord | None:
        """The entity with that key in the namespace if the reads show it at ``now`` (see
        :class:`GraphStore`), with the reads' counts: one known only from expired memories
        is hidden from the writes too, as a name never seen (the purge deletes it)."""
        ...

    def declare_entity(
        self, namespace: str, name: str, type: str | None, now: datetime
    ) -> tuple[EntityRecord, bool]:
        """Create the entity, or mark an extracted one declared; ``True`` when that changed it.

        A declared entity stays until it is deleted, mentions or not, with the name and
        type it was declared with. ``name`` and ``type`` replace an extracted entity's;
        with ``type`` None it keeps its own while a live memory gives them, else takes
        those the purge will leave it (a new entity's type is then ``unknown``). An
        entity :meth:`find_entity` does not find at ``now`` is declared as a new one.
        """
        ...

    def link_observation(self, entity_id: int, seq: int) -> None:
        """Make memory ``seq`` an observation of the entity."""
        ...

    def observations(
        self, entity_id: int, now: datetime | None, among: Sequence[str] | None = None
    ) -> list[tuple[int, str]]:
        """The entity's observation memories as ``(seq, content)``, oldest first: those
        live at ``now`` (as the reads show them), or every one when ``now`` is None; only
        those whose content is one of ``among`` when it is given (compared in the
        database: an entity may hold thousands of long ones)."""
        ...

    def observation_characters(self, entity_id: int) -> int:
        """The characters of all the entity's observation memories (expired ones too, until
        the purge), for the per-entity bound of :mod:`recalld.knowledge_bounds`."""
        ...

    def observed_by(self, seq: int) -> list[tuple[int, str]]:
        """The entities memory ``seq`` is an observation of, as ``(id, name)``."""
        ...

    def declare_relation(
        self, namespace: str, subject_id: int, predicate: str, object_id: int, now: datetime
    ) -> bool:
        """Create (or mark declared) a relation; ``True`` when it did not exist declared."""
        ...

    def delete_relation(
        self, namespace: str, subject_id: int, predicate: str, object_id: int
    ) -> bool:
        """Delete the relation; returns whether it existed."""
        ...

    def delete_entity(self, entity_id: int) -> None:
        """Delete the entity with its mentions, observation links and relations, and keep a
        tombstone of it: extraction of a memory written before never brings it back (one
        written after does; declaring it again lifts the tombstone)."""
        ...

    def retime_sources(self, seq: int) -> None:
        """Give the relations memory ``seq`` states its current ``at`` (read from its row,
        rewritten in this transaction): a new time changes nothing an extractor reads, so
        the memory is not extracted again, and its relations' ``at`` stays its own."""
        ...

    def drop_extraction(self, seq: int) -> None:
        """Forget what extraction found in memory ``seq``: its mentions, the relations it
        sourced and its extraction record (entities and relations left with no mention
        or source go too, unless declared). Its text changed: nothing the old text said
        may outlive it, and its new text is extracted again."""
        ...


class GraphStore(Protocol):
    """Reads of the graph and its extraction queue; each method is one transaction or read."""

    # -- the extraction queue -------------------------------------------------

    def claim_jobs(
        self,
        worker_id: str,
        model: str,
        limit: int,
        now: datetime,
        lease_until: datetime,
        max_attempts: int,
    ) -> list[GraphJob]:
        """Atomically lease up to ``limit`` runnable graph jobs of extractor ``model``."""
        ...

    def complete_jobs(
        self,
        worker_id: str,
        model: str,
        results: Sequence[tuple[GraphJob, Extraction]],
        now: datetime,
    ) -> int:
        """Replace each job's memory's mentions and relations with its extraction.

        One transaction; only jobs still leased by ``worker_id`` count, or taken over
        and still waiting for the same text (:func:`extraction_settles`), and a
        memory whose text changed after the claim is left to its newer job. A
        memory that is an entity's observation (the knowledge tools) records an
        empty extraction: those tools' graph is the one their user declared.
        """
        ...

    def retry_job(
        self, worker_id: str, job: GraphJob, error: str, now: datetime, run_after: datetime | None
    ) -> None:
        """Record a failed attempt: queue it again at ``run_after``, or fail it for good (None)."""
        ...

    def release_jobs(self, worker_id: str, jobs: Sequence[GraphJob], now: datetime) -> int:
        """Hand back jobs ``worker_id`` claimed but could not settle because the store failed
        (a full disk, a database gone away): queued again at once, their claim not counted
        as an attempt. Only jobs still leased by ``worker_id`` change; returns how many."""
        ...

    def backfill_jobs(self, model: str, now: datetime, *, retry_failed: bool = False) -> int:
        """Queue extraction of every memory not extracted by ``model`` and not queued for it.

        Pending jobs of other extractors are dropped; returns how many were queued. With
        ``retry_failed``, a job of ``model`` that failed for good counts as none (its
        memory is queued again, its attempts from zero).
        """
        ...

    def rebuild(self, namespaces: Sequence[str], model: str, now: datetime) -> int:
        """Queue re-extraction of every memory of ``namespaces``; returns how many."""
        ...

    # -- reads ------------------------------------------------------------------
    # What the reads show is the graph as the purge will leave it: an entity or relation is
    # shown when it is declared or backed by a memory live at ``now`` (an expired one is
    # hidden from every read until the purge deletes it), a relation only with both of its
    # entities, and the counts (mentions, observations, sources, the latest ``at``) are
    # those of live memories.

    def entities_by_key(
        self, namespace: str, keys: Sequence[str], now: datetime
    ) -> dict[str, EntityRecord]:
        """The entities among ``keys`` shown at ``now``, by key."""
        ...

    def entity_by_id(
        self, namespace: str, entity_ids: Sequence[int], now: datetime
    ) -> dict[int, EntityRecord]:
        """The entities among ``entity_ids`` shown at ``now``, by id."""
        ...

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
        """Entities by key, after a keyset cursor; ``query`` is a substring of name, key or type."""
        ...

    def search_entities(
        self, namespace: str, text: str, now: datetime, limit: int
    ) -> list[EntityRecord]:
        """Entities whose name, type or live observations contain ``text`` in any case (the
        Unicode lower case of both sides, :mod:`recalld.graph.matching`), or whose key
        contains ``text``'s key; the entity whose key it is first, then by key."""
        ...

    def mentions(
        self,
        namespace: str,
        entity_ids: Sequence[int],
        now: datetime,
        per_entity: int,
        *,
        observations: bool = True,
    ) -> list[MentionRecord]:
        """Live memories mentioning each entity, newest first, at most ``per_entity`` each;
        without the knowledge tools' observation memories unless ``observations``."""
        ...

    def entities_of(self, namespace: str, seqs: Sequence[int]) -> list[MentionRecord]:
        """Every entity mentioned by the given memories."""
        ...

    def observation_memories(
        self, namespace: str, entity_ids: Sequence[int], now: datetime
    ) -> dict[int, list[tuple[int, str]]]:
        """Each entity's live observation memories as ``(seq, content)``, oldest first."""
        ...

    def first_observations(
        self, namespace: str, entity_id: int, now: datetime, limit: int, after: int = 0
    ) -> list[tuple[int, str]]:
        """One entity's first ``limit`` live observation memories after memory ``after``
        (a seq; 0: from its first) as ``(seq, content)``, oldest first, reading no more of
        them (an entity may have any number)."""
        ...

    def version(self, namespace: str, now: datetime) -> int:
        """A number that changes when the namespace's entities, relations or memories come,
        go, change or expire by ``now`` (for watchers, which call it often; a mention an
        extraction adds to an entity already there does not change it)."""
        ...

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
        """Relations touching ``entity_ids`` (all when None), optionally of one predicate."""
        ...

    def relations_from(
        self, namespace: str, subject_ids: Sequence[int], now: datetime
    ) -> list[RelationRecord]:
        """Every relation shown at ``now`` whose subject is one of ``subject_ids``."""
        ...

    def counts(self, namespaces: Sequence[str], failures_limit: int) -> GraphCounts:
        """Entities, relations, mentions, extractions and graph jobs in ``namespaces``."""
        ...
