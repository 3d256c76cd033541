"""Browsing the knowledge graph: entities, one entity in full, relations, neighbourhoods.

A component the :class:`~recalld.service.MemoryService` owns as ``service.graph``
(the REST routes under ``/v1/graph``, ``recalld graph ...`` and the native MCP
tools ``entities`` and ``neighbourhood`` call it). Every call works in one
namespace; nothing here changes the graph except :meth:`GraphBrowser.rebuild`,
which queues re-extraction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from recalld import _validate as check
from recalld._cursor import cursor_text, cursor_values
from recalld._text import prompt_line, shown
from recalld._time import Clock
from recalld.config import Settings
from recalld.errors import NotFoundError, ValidationError
from recalld.graph.models import (
    CoMention,
    EntityDetail,
    EntityPage,
    EntityView,
    MemoryEntities,
    MentionedEntity,
    MentionView,
    Neighbourhood,
    ObservationPage,
    ObservationView,
    RelationPage,
    RelationView,
)
from recalld.graph.names import check_entity_lookup, check_predicate, entity_key
from recalld.graph.query import GraphWalk
from recalld.indexing import Indexing
from recalld.store.base import Scope, Store
from recalld.store.graph import EntityRecord, RelationRecord

__all__ = ["CURSOR_MAX_CHARS", "GraphBrowser", "entity_view", "relation_view"]

MAX_DEPTH = 3
NEIGHBOURHOOD_LIMIT = 200
MENTIONS_SHOWN = 20
# Page sizes when the caller gives none; every default is held to RECALLD_MAX_LIMIT.
ENTITIES_LIMIT = 50
RELATIONS_LIMIT = 100
OBSERVATIONS_LIMIT = 100


def entity_view(record: EntityRecord) -> EntityView:
    """The public shape of a stored entity."""
    return EntityView(
        name=record.name,
        key=record.key,
        type=record.type,
        declared=record.declared,
        mentions=record.mentions,
        observations=record.observations,
        created_at=record.created_at,
        updated_at=record.updated_at,
    )


def relation_view(record: RelationRecord) -> RelationView:
    """The public shape of a stored relation."""
    return RelationView(
        subject=record.subject,
        predicate=record.predicate,
        object=record.object,
        declared=record.declared,
        sources=record.sources,
        at=record.at,
    )


# The longest cursor a graph listing mints: an entity key is at most 200 name characters,
# each at most 33 bytes of UTF-8 once NFKC and case folding have expanded it (U+FDFA
# becomes 18 Arabic letters), so 6600 bytes with the kind and a 64-bit id around it: 8,860
# characters of base64. REST takes cursors up to this length.
CURSOR_MAX_CHARS = 9000


def encode_cursor(kind: str, *values: Any) -> str:
    """An opaque cursor for a graph listing (its key as UTF-8: see :func:`cursor_text`)."""
    return cursor_text([kind, *values])


def decode_cursor(
    cursor: str, kind: str, shape: tuple[type, ...], returned_by: str = "this listing"
) -> list[Any]:
    """The values of a cursor of listing ``kind``, one of each type in ``shape`` (``int``:
    a store id, 0 to 2**63 - 1; ``str``: text a store can compare); anything else is
    refused (field ``cursor``): a forged one must not reach the database."""
    refused = ValidationError("cursor", f"is not a cursor {returned_by} returned")
    values = cursor_values(cursor, refused)
    if not isinstance(values, list) or len(values) != len(shape) + 1 or values[0] != kind:
        raise refused
    if not all(_holds(value, wanted) for value, wanted in zip(values[1:], shape, strict=True)):
        raise refused
    return values[1:]


def _holds(value: Any, wanted: type) -> bool:
    if wanted is int:
        return type(value) is int and 0 <= value < 2**63
    if wanted is str:
        # A NUL ends a C string; a lone surrogate cannot be encoded for the database.
        return isinstance(value, str) and "\x00" not in value and _encodable(value)
    raise TypeError(f"no cursor value of type {wanted.__name__}")


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


class GraphBrowser:
    """Read access to the graph of one store (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        indexing: Indexing,
        resolve_namespace: Callable[[str | None], str],
    ) -> None:
        self._store = store
        self._settings = settings
        self._clock = clock
        self._indexing = indexing
        self._namespace = resolve_namespace

    def _scope(self, namespace: str, now: datetime) -> Scope:
        return Scope(namespaces=(namespace,), now=now)

    def named_in(self, text: str, namespace: str) -> list[str]:
        """The names of the namespace's entities that ``text`` names (for mention triggers).

        Empty when no graph is built; the same matching as the graph channel's seeds.
        """
        if self._indexing.extractor is None or not text.strip():
            return []
        walk = GraphWalk(
            self._store.graph,
            seed_limit=self._settings.graph_seed_limit,
            fanout=self._settings.graph_fanout,
        )
        return [seed.name for seed in walk.seeds(namespace, text, self._clock())]

    def _find(self, namespace: str, name: str, now: datetime, field: str = "name") -> EntityRecord:
        text = check_entity_lookup(name, field)
        if text is None:
            raise NotFoundError(f"no entity named {shown(name)} in {namespace!r}")
        found = self._store.graph.entities_by_key(namespace, [entity_key(text)], now)
        if not found:
            raise NotFoundError(f"no entity named {shown(text)} in {namespace!r}")
        return next(iter(found.values()))

    def entities(
        self,
        *,
        query: str | None = None,
        type: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        namespace: str | None = None,
    ) -> EntityPage:
        """Entities by name (their key), optionally those whose name or type contains ``query``
        and of one ``type``, a page at a time (``limit``: 50 by default). Both compare in
        any case by Python's lower case (as ``search_nodes``), the same on every store."""
        scope_namespace = self._namespace(namespace)
        limit = check.limit(limit, self._settings, default=ENTITIES_LIMIT)
        if query is not None and len(query) > 200:
            raise ValidationError("query", f"is {len(query)} characters; the limit is 200")
        if query is not None:
            check.free_text(query, "query")  # a NUL: PostgreSQL cannot look it up
        if type is not None and len(type) > 100:  # as an entity's type (REST says so too)
            raise ValidationError("type", f"is {len(type)} characters; the limit is 100")
        if type is not None:
            check.free_text(type, "type")  # a NUL: SQLite's GLOB would stop reading there
        after = None
        if cursor is not None:
            key, entity_id = decode_cursor(cursor, "entities", (str, int))
            after = (key, entity_id)
        records = self._store.graph.list_entities(
            scope_namespace,
            self._clock(),
            query=query or None,
            type=type or None,
            limit=limit + 1,
            after=after,
        )
        next_cursor = None
        if len(records) > limit:
            records = records[:limit]
            next_cursor = encode_cursor("entities", records[-1].key, records[-1].id)
        return EntityPage(entities=[entity_view(r) for r in records], next_cursor=next_cursor)

    def entity(
        self,
        name: str,
        *,
        namespace: str | None = None,
        mentions: int | None = None,
        observations: int | None = None,
    ) -> EntityDetail:
        """One entity with its aliases, first observations (``graph_page_size`` by default;
        the entity's ``observations`` counts them all), newest mentions (20 by default) and
        first relations (``graph_page_size``; ``relations_cursor`` continues them in
        :meth:`relations` of this entity)."""
        scope_namespace = self._namespace(namespace)
        mentions = check.limit(mentions, self._settings, "mentions", default=MENTIONS_SHOWN)
        # An entity gathers any number of observations (the knowledge tools add 1,000 a
        # call): 10,000 of them made one detail of a megabyte, read whole.
        observations = check.limit(
            observations, self._settings, "observations", default=self._settings.graph_page_size
        )
        now = self._clock()
        record = self._find(scope_namespace, name, now)
        graph = self._store.graph
        observed = graph.first_observations(scope_namespace, record.id, now, observations + 1)
        observations_cursor = None
        if len(observed) > observations:
            observed = observed[:observations]
            observations_cursor = encode_cursor("observations", record.id, observed[-1][0])
        mention_rows = graph.mentions(scope_namespace, [record.id], now, mentions)
        seqs = [seq for seq, _ in observed] + [row.seq for row in mention_rows]
        memories = self._store.semantic.visible_memories(self._scope(scope_namespace, now), seqs)
        aliases = sorted(
            {row.surface for row in mention_rows if row.surface != record.name}, key=str.lower
        )
        shown = self._settings.graph_page_size
        relations = graph.relations(
            scope_namespace, now, entity_ids=[record.id], predicate=None, limit=shown + 1
        )
        relations_cursor = None
        if len(relations) > shown:
            relations = relations[:shown]
            relations_cursor = encode_cursor("relations", relations[-1].id)
        return EntityDetail(
            entity=entity_view(record),
            aliases=aliases,
            observations=[
                ObservationView(memory_id=memories[seq].id, content=content)
                for seq, content in observed
                if seq in memories
            ],
            mentions=[
                MentionView(
                    memory_id=memories[row.seq].id,
                    surface=row.surface,
                    count=row.count,
                    at=memories[row.seq].at,
                    prompt_line=prompt_line(memories[row.seq]),
                )
                for row in mention_rows
                if row.seq in memories
            ],
            relations=[relation_view(relation) for relation in relations],
            relations_cursor=relations_cursor,
            observations_cursor=observations_cursor,
        )

    def observations(
        self,
        entity: str,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        namespace: str | None = None,
    ) -> ObservationPage:
        """Entity ``entity``'s observations, oldest first, a page at a time (``limit``: 100
        by default; ``cursor``: ``next_cursor`` of the last page, or ``observations_cursor``
        of :meth:`entity`): the detail shows only the first of them."""
        scope_namespace = self._namespace(namespace)
        limit = check.limit(limit, self._settings, default=OBSERVATIONS_LIMIT)
        now = self._clock()
        record = self._find(scope_namespace, entity, now, "entity")
        after = 0
        if cursor is not None:
            cursor_entity, after = decode_cursor(
                cursor, "observations", (int, int), "this entity's observations listing"
            )
            # A cursor of another entity would page it from an unrelated position.
            if cursor_entity != record.id:
                raise ValidationError(
                    "cursor", "is not a cursor this entity's observations listing returned"
                )
        observed = self._store.graph.first_observations(
            scope_namespace, record.id, now, limit + 1, after
        )
        next_cursor = None
        if len(observed) > limit:
            observed = observed[:limit]
            next_cursor = encode_cursor("observations", record.id, observed[-1][0])
        memories = self._store.semantic.visible_memories(
            self._scope(scope_namespace, now), [seq for seq, _ in observed]
        )
        return ObservationPage(
            entity=record.name,
            observations=[
                ObservationView(memory_id=memories[seq].id, content=content)
                for seq, content in observed
                if seq in memories
            ],
            next_cursor=next_cursor,
        )

    def entities_of_memory(self, memory_id: str, *, namespace: str | None = None) -> MemoryEntities:
        """The entities memory ``memory_id`` mentions (most mentioned first); 404 when the
        memory is not visible in the namespace."""
        scope_namespace = self._namespace(namespace)
        now = self._clock()
        memory = self._store.get(self._scope(scope_namespace, now), id=memory_id)
        if memory is None:
            raise NotFoundError(f"no memory {shown(memory_id)} in {scope_namespace!r}")
        graph = self._store.graph
        rows = graph.entities_of(scope_namespace, [memory.seq])
        records = graph.entity_by_id(scope_namespace, [row.entity_id for row in rows], now)
        found = [
            MentionedEntity(
                entity=entity_view(records[row.entity_id]), surface=row.surface, count=row.count
            )
            for row in rows
            if row.entity_id in records
        ]
        found.sort(key=lambda item: (-item.count, item.entity.key))
        return MemoryEntities(memory_id=memory.id, entities=found)

    def relations(
        self,
        *,
        entity: str | None = None,
        predicate: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        namespace: str | None = None,
    ) -> RelationPage:
        """Relations (touching ``entity``, of ``predicate``) in creation order, a page at a time
        (``limit``: 100 by default)."""
        scope_namespace = self._namespace(namespace)
        limit = check.limit(limit, self._settings, default=RELATIONS_LIMIT)
        now = self._clock()
        entity_ids = None
        if entity is not None:
            entity_ids = [self._find(scope_namespace, entity, now, "entity").id]
        if predicate is not None:
            predicate = check_predicate(predicate, "predicate")
        after = 0
        if cursor is not None:
            (after,) = decode_cursor(cursor, "relations", (int,))
        records = self._store.graph.relations(
            scope_namespace,
            now,
            entity_ids=entity_ids,
            predicate=predicate,
            limit=limit + 1,
            after_id=after,
        )
        next_cursor = None
        if len(records) > limit:
            records = records[:limit]
            next_cursor = encode_cursor("relations", records[-1].id)
        return RelationPage(relations=[relation_view(r) for r in records], next_cursor=next_cursor)

    def neighbourhood(
        self,
        entity: str,
        *,
        depth: int = 1,
        limit: int | None = None,
        namespace: str | None = None,
    ) -> Neighbourhood:
        """Entities and relations within ``depth`` (1-3) relation hops of ``entity``, and the
        entities most often mentioned alongside it; at most ``limit`` entities (200 by
        default)."""
        scope_namespace = self._namespace(namespace)
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
            raise ValidationError("depth", f"must be an integer from 1 to {MAX_DEPTH}")
        limit = check.limit(limit, self._settings, default=NEIGHBOURHOOD_LIMIT)
        graph = self._store.graph
        now = self._clock()
        center = self._find(scope_namespace, entity, now, "entity")
        seen: dict[int, None] = {center.id: None}
        relations: dict[int, RelationRecord] = {}
        frontier = [center.id]
        truncated = False
        # Relations read per hop: one more than are kept tells a hop that had more (many
        # predicates between the same few entities) apart from one that had exactly that.
        relations_per_hop = limit * 4
        for _ in range(depth):
            if not frontier:
                break
            # A hop reads again the relations kept at the hop before (they touch this
            # frontier too): read past them, so that they never fill the hop's share.
            found = graph.relations(
                scope_namespace,
                now,
                entity_ids=frontier,
                predicate=None,
                limit=relations_per_hop + len(relations) + 1,
            )
            found = [record for record in found if record.id not in relations]
            if len(found) > relations_per_hop:
                found = found[:relations_per_hop]
                truncated = True
            keys = {key for record in found for key in (record.subject_key, record.object_key)}
            by_key = graph.entities_by_key(scope_namespace, sorted(keys), now)
            frontier = []
            for record in found:
                subject, target = by_key.get(record.subject_key), by_key.get(record.object_key)
                if subject is None or target is None:
                    continue  # an end deleted by another client between the two reads
                ends = [subject.id, target.id]
                if any(end not in seen for end in ends) and len(seen) >= limit:
                    truncated = True
                    continue
                relations[record.id] = record
                for end in ends:
                    if end not in seen:
                        seen[end] = None
                        frontier.append(end)
        records = graph.entity_by_id(scope_namespace, list(seen), now)
        return Neighbourhood(
            entity=entity_view(center),
            depth=depth,
            entities=[entity_view(records[i]) for i in seen if i != center.id and i in records],
            relations=[relation_view(r) for r in relations.values()],
            co_mentioned=self._co_mentioned(scope_namespace, center.id, limit, now),
            truncated=truncated,
        )

    def _co_mentioned(
        self, namespace: str, entity_id: int, limit: int, now: datetime
    ) -> list[CoMention]:
        graph = self._store.graph
        seqs = [
            row.seq
            for row in graph.mentions(namespace, [entity_id], now, self._settings.graph_fanout)
        ]
        shared: Counter[int] = Counter(
            row.entity_id
            for row in graph.entities_of(namespace, seqs)
            if row.entity_id != entity_id
        )
        wanted = min(limit, 20)
        # Ties go by the entity's key (its name folded: NFKC, case), unique in a
        # namespace: the stores list a memory's mentions in no set order, so the
        # counter's own order of equal counts differed between SQLite and PostgreSQL.
        counts = sorted(shared.values(), reverse=True)
        least = counts[wanted - 1] if len(counts) >= wanted else 0
        records = graph.entity_by_id(
            namespace, [entity for entity, count in shared.items() if count >= least], now
        )
        top = sorted(records, key=lambda entity: (-shared[entity], records[entity].key))
        return [
            CoMention(name=records[i].name, type=records[i].type, memories=shared[i])
            for i in top[:wanted]
        ]

    def rebuild(self, namespaces: Sequence[str] | None = None) -> int:
        """Queue re-extraction of every memory of ``namespaces`` (default: the current one);
        returns how many memories were queued. The worker does the work."""
        extractor = self._indexing.extractor
        if extractor is None:
            raise ValidationError(
                "graph_extractor", "no graph extractor is configured (graph_extractor='none')"
            )
        scoped = (
            [self._namespace(name) for name in namespaces]
            if namespaces
            else [self._namespace(None)]
        )
        queued = self._store.graph.rebuild(scoped, extractor.name, self._clock())
        worker = self._indexing.worker
        if worker is not None:
            worker.notify()
        return queued
