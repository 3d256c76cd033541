"""The knowledge graph as the MCP reference memory server models it, on recalld's graph.

Entities (a name, a type, observations) and directed relations (``from``,
``to``, ``relationType``) live in the same tables as the extracted graph
(:mod:`recalld.store.graph`): an entity created here is *declared* (kept
without mentions, with the type given); an **observation is a memory**
(kind ``observation``, titled with the entity's name, linked to it), so what
an agent writes here is recalled by every other dialect, and entities
extracted from memories written elsewhere are nodes here too, with their
newest mentioning memories listed after their observations. Observations are
never extracted themselves: the graph here is what the user declared, plus
what memories written elsewhere name
(:meth:`recalld.store.graph.GraphStore.complete_jobs`).

Decisions the reference leaves open: names are matched on their key
(:func:`recalld.graph.names.entity_key`: case-insensitive, ``_`` = space); an
existing *extracted* entity named by ``create_entities`` becomes declared,
takes the type and observations given and counts as created; a relation
needs both of its entities to exist (a clear error names the field
otherwise; the reference would store a dangling relation); unknown names in
deletes are reported in the message, never raised. Every operation is one
write transaction, so concurrent writers in any number of processes lose
nothing (the reference server rewrites one JSON file and does lose writes).
``read_graph`` is paged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from recalld import _validate as check
from recalld import knowledge_import, knowledge_relations
from recalld._text import prompt_line
from recalld._time import Clock
from recalld.config import Settings
from recalld.conflicts import after_commit, rerunning_on_conflict
from recalld.errors import ValidationError
from recalld.graph.names import check_entity_name, check_entity_type, check_predicate, entity_key
from recalld.graph_browser import decode_cursor, encode_cursor
from recalld.knowledge_bounds import (
    Tally,
    bounded_items,
    check_entity_room,
    first_of_each,
)
from recalld.knowledge_model import (
    AddedObservations,
    KnowledgeEntity,
    KnowledgeGraphPage,
    KnowledgeImportReport,
    KnowledgeRelation,
    ObservationAddition,
    ObservationDeletion,
    RemovalReport,
)
from recalld.knowledge_relations import relation_identity, relation_keys, relation_label
from recalld.model import Memory, NewMemory, Receipt
from recalld.store.base import Scope, Store, StoreTransaction
from recalld.store.graph import EntityRecord, RelationRecord

__all__ = [
    "AddedObservations",
    "KnowledgeEntity",
    "KnowledgeGraph",
    "KnowledgeGraphPage",
    "KnowledgeImportReport",
    "KnowledgeRelation",
    "ObservationAddition",
    "ObservationDeletion",
    "RemovalReport",
]

OBSERVATION_KIND = "observation"
MENTIONS_AS_OBSERVATIONS = 5
# The first read's size when gathering the relations touching some entities (each next
# one reads twice as many).
RELATION_CHUNK = 1_000
# The observation text (in characters) one page of ``read_graph`` or ``search_nodes`` carries
# beyond its first entity: an entity gathers any number of observations (1,000 a call), so
# a default page of 100 such entities of 10,000 each came back as one answer of 43 MB.
PAGE_OBSERVATION_CHARACTERS = 1_000_000
# How many entities' observations a page reads first while it fills its budget (each next
# read takes twice as many: a page of 1,000 small entities is seven reads, not a hundred).
PAGE_READ_CHUNK = 10

WriteMemory = Callable[[StoreTransaction, NewMemory, str], tuple[Receipt, Memory]]


class KnowledgeGraph:
    """The reference server's nine operations over one store (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        write_memory: WriteMemory,
        after_forget: Callable[[], object],
        resolve_namespace: Callable[[str | None], str],
    ) -> None:
        self._store = store
        self._settings = settings
        self._clock = clock
        self._write_memory = write_memory
        self._after_forget = after_commit(after_forget)
        self._namespace = resolve_namespace

    # -- validation ------------------------------------------------------------------

    def _observation(self, value: str, field: str) -> str:
        return check.content(value, self._settings, field)

    def _parse(self, model: type[BaseModel], data: Any, field: str) -> Any:
        if isinstance(data, model):
            return data
        return check.parse_model(model, data, prefix=f"{field}.")

    # -- writes -----------------------------------------------------------------------

    def _add_observation(
        self, tx: StoreTransaction, namespace: str, entity: EntityRecord, content: str
    ) -> None:
        draft = NewMemory(
            content=content,
            title=entity.name,
            kind=OBSERVATION_KIND,
            meta={"entity": entity.name, "entity_type": entity.type},
        )
        _, memory = self._write_memory(tx, draft, namespace)
        tx.graph.link_observation(entity.id, memory.seq)

    @rerunning_on_conflict("create_entities")
    def create_entities(
        self, entities: Sequence[KnowledgeEntity | dict[str, Any]], *, namespace: str | None = None
    ) -> list[KnowledgeEntity]:
        """Create entities with their observations; returns those that were new.

        An entity whose name is already declared is left as it is (the
        reference's rule); all or nothing.
        """
        scope_namespace = self._namespace(namespace)
        parsed: list[KnowledgeEntity] = []
        tally = Tally("entities")
        for index, item in enumerate(bounded_items("entities", entities)):
            entity = self._parse(KnowledgeEntity, item, f"entities[{index}]")
            tally.add(bounded_items(f"entities[{index}].observations", entity.observations))
            parsed.append(
                KnowledgeEntity(
                    name=check_entity_name(entity.name, f"entities[{index}].name"),
                    entity_type=check_entity_type(
                        entity.entity_type, f"entities[{index}].entityType"
                    ),
                    observations=[
                        self._observation(text, f"entities[{index}].observations[{number}]")
                        for number, text in enumerate(entity.observations)
                    ],
                )
            )
            given = list(dict.fromkeys(parsed[-1].observations))
            check_entity_room(f"entities[{index}].observations", entity.name, 0, given)
        created: list[KnowledgeEntity] = []
        now = self._clock()
        with self._store.transaction() as tx:
            tx.graph.lock_entities(scope_namespace, (entity_key(e.name) for e in parsed))
            # Declared in key order, as an extraction upserts them, so that neither waits
            # for a row the other holds (adversarial pass a68); observations and answer
            # in the order given. sorted() is stable: a name given twice, its first wins.
            declared: dict[int, tuple[EntityRecord, bool]] = {}
            for index in sorted(range(len(parsed)), key=lambda at: entity_key(parsed[at].name)):
                entity = parsed[index]
                declared[index] = tx.graph.declare_entity(
                    scope_namespace, entity.name, entity.entity_type, now
                )
            for index, entity in enumerate(parsed):
                record, changed = declared[index]
                if not changed:
                    continue
                observations = list(dict.fromkeys(entity.observations))
                for content in observations:
                    self._add_observation(tx, scope_namespace, record, content)
                created.append(entity.model_copy(update={"observations": observations}))
        return created

    @rerunning_on_conflict("create_relations")
    def create_relations(
        self,
        relations: Sequence[KnowledgeRelation | dict[str, Any]],
        *,
        namespace: str | None = None,
    ) -> list[KnowledgeRelation]:
        """Create relations between existing entities; returns those that were new."""
        scope_namespace = self._namespace(namespace)
        parsed = [
            self._checked_relation(item, f"relations[{index}]")
            for index, item in enumerate(bounded_items("relations", relations))
        ]
        created: list[KnowledgeRelation] = []
        now = self._clock()
        with self._store.transaction() as tx:
            tx.graph.lock_entities(scope_namespace, relation_keys(parsed))
            for index, relation in enumerate(parsed):
                for field, name in (("from", relation.source), ("to", relation.target)):
                    if tx.graph.find_entity(scope_namespace, entity_key(name), now) is None:
                        raise ValidationError(
                            f"relations[{index}].{field}",
                            f"no entity named {name!r}; create it with create_entities first",
                        )
            ends = [name for relation in parsed for name in (relation.source, relation.target)]
            declared = knowledge_relations.declared_entities(tx.graph, scope_namespace, ends, now)
            for relation in parsed:
                source = declared[entity_key(relation.source)].id
                target = declared[entity_key(relation.target)].id
                if tx.graph.declare_relation(
                    scope_namespace, source, relation.relation_type, target, now
                ):
                    created.append(relation)
        return created

    def _checked_relation(self, item: Any, field: str) -> KnowledgeRelation:
        relation: KnowledgeRelation = self._parse(KnowledgeRelation, item, field)
        return KnowledgeRelation(
            source=check_entity_name(relation.source, f"{field}.from"),
            target=check_entity_name(relation.target, f"{field}.to"),
            relation_type=check_predicate(relation.relation_type, f"{field}.relationType"),
        )

    @rerunning_on_conflict("add_observations")
    def add_observations(
        self,
        observations: Sequence[ObservationAddition | dict[str, Any]],
        *,
        namespace: str | None = None,
    ) -> list[AddedObservations]:
        """Add observations to existing entities (an unknown entity is an error naming it)."""
        scope_namespace = self._namespace(namespace)
        parsed: list[tuple[str, list[str]]] = []
        tally = Tally("observations")
        for index, item in enumerate(bounded_items("observations", observations)):
            addition = self._parse(ObservationAddition, item, f"observations[{index}]")
            tally.add(bounded_items(f"observations[{index}].contents", addition.contents))
            name = check_entity_name(addition.entity_name, f"observations[{index}].entityName")
            contents = [
                self._observation(text, f"observations[{index}].contents[{number}]")
                for number, text in enumerate(addition.contents)
            ]
            parsed.append((name, contents))
        results: list[AddedObservations] = []
        # Each entity's observation text, summed once a call: 1,000 items naming one entity
        # of 10,000 observations summed them 1,000 times (4 s became 12 s).
        held: dict[int, int] = {}
        now = self._clock()
        with self._store.transaction() as tx:
            tx.graph.lock_entities(scope_namespace, (entity_key(name) for name, _ in parsed))
            for index, (name, _) in enumerate(parsed):
                if tx.graph.find_entity(scope_namespace, entity_key(name), now) is None:
                    raise ValidationError(
                        f"observations[{index}].entityName", f"no entity named {name!r}"
                    )
            names = (name for name, _ in parsed)
            declared = knowledge_relations.declared_entities(tx.graph, scope_namespace, names, now)
            for index, (name, contents) in enumerate(parsed):
                record = declared[entity_key(name)]
                wanted = list(dict.fromkeys(contents))
                existing = {content for _, content in tx.graph.observations(record.id, now, wanted)}
                added = [content for content in wanted if content not in existing]
                if record.id not in held:
                    held[record.id] = tx.graph.observation_characters(record.id)
                field = f"observations[{index}].contents"
                check_entity_room(field, name, held[record.id], added)
                held[record.id] += sum(map(len, added))
                for content in added:
                    self._add_observation(tx, scope_namespace, record, content)
                results.append(AddedObservations(entity_name=name, added_observations=added))
        return results

    @rerunning_on_conflict("delete_entities")
    def delete_entities(
        self, names: Sequence[str], *, namespace: str | None = None
    ) -> RemovalReport:
        """Delete entities with their observations (forgotten) and relations; unknown names
        are reported, not raised."""
        scope_namespace = self._namespace(namespace)
        checked = [
            check_entity_name(name, f"entityNames[{index}]")
            for index, name in enumerate(bounded_items("entityNames", names))
        ]
        now = self._clock()
        with self._store.transaction() as tx:
            tx.graph.lock_entities(scope_namespace, (entity_key(name) for name in checked))
            # A name given again (in any spelling of its key) was answered by its first:
            # reporting it "not found" too would contradict its deletion.
            named = {
                name: tx.graph.find_entity(scope_namespace, entity_key(name), now)
                for name in first_of_each(checked, entity_key)
            }
            found = [entity for entity in named.values() if entity is not None]
            # Every observation (expired ones too: the entity is forgotten now), then the
            # entities, each in order: as an extraction or a forget takes memories and
            # entities, so that none of them deadlocks with this (adversarial pass a68).
            observed = (
                seq for entity in found for seq, _ in tx.graph.observations(entity.id, None)
            )
            for seq in sorted(observed):
                tx.delete(seq)
            for entity in sorted(found, key=lambda entity: entity.key):
                tx.graph.delete_entity(entity.id)
            if found:
                tx.dropped_content("forget", now)
        if found:
            self._after_forget()
        deleted = [name for name, entity in named.items() if entity is not None]
        return _report("entities", deleted, [name for name in named if name not in deleted])

    @rerunning_on_conflict("delete_observations")
    def delete_observations(
        self,
        deletions: Sequence[ObservationDeletion | dict[str, Any]],
        *,
        namespace: str | None = None,
    ) -> RemovalReport:
        """Forget the given observation memories of each entity; unknown entities and
        observations are reported, not raised."""
        scope_namespace = self._namespace(namespace)
        parsed = []
        tally = Tally("deletions")
        for index, item in enumerate(bounded_items("deletions", deletions)):
            deletion = self._parse(ObservationDeletion, item, f"deletions[{index}]")
            tally.add(bounded_items(f"deletions[{index}].observations", deletion.observations))
            name = check_entity_name(deletion.entity_name, f"deletions[{index}].entityName")
            parsed.append((name, list(deletion.observations)))
        # One entity named in two deletions (in any spelling of its key) is one list, and
        # a text given twice is one: each is answered once, as deleted or as not found.
        merged: dict[str, tuple[str, list[str]]] = {}
        for name, wanted in parsed:
            merged.setdefault(entity_key(name), (name, []))[1].extend(wanted)
        deleted: list[str] = []
        missing: list[str] = []
        now = self._clock()
        with self._store.transaction() as tx:
            tx.graph.lock_entities(scope_namespace, merged)
            for name, wanted in merged.values():
                found = tx.graph.find_entity(scope_namespace, entity_key(name), now)
                if found is None:
                    missing.append(f"entity {name!r}")
                    continue
                by_content: dict[str, list[int]] = {}
                for seq, content in tx.graph.observations(found.id, now, wanted):
                    by_content.setdefault(content, []).append(seq)
                for text in dict.fromkeys(wanted):
                    seqs = by_content.pop(text, None)
                    if seqs is None:
                        missing.append(f"{name!r}: {text[:60]!r}")
                        continue
                    for seq in seqs:
                        tx.delete(seq)
                    deleted.append(f"{name!r}: {text[:60]!r}")
            if deleted:
                tx.dropped_content("forget", now)
        if deleted:
            self._after_forget()
        return _report("observations", deleted, missing)

    @rerunning_on_conflict("delete_relations")
    def delete_relations(
        self,
        relations: Sequence[KnowledgeRelation | dict[str, Any]],
        *,
        namespace: str | None = None,
    ) -> RemovalReport:
        """Delete relations; unknown ones are reported, not raised."""
        scope_namespace = self._namespace(namespace)
        parsed = [
            self._checked_relation(item, f"relations[{index}]")
            for index, item in enumerate(bounded_items("relations", relations))
        ]
        deleted: list[str] = []
        missing: list[str] = []
        now = self._clock()
        with self._store.transaction() as tx:
            tx.graph.lock_entities(scope_namespace, relation_keys(parsed))
            for relation in first_of_each(parsed, relation_identity):
                label = relation_label(relation.source, relation.relation_type, relation.target)
                source = tx.graph.find_entity(scope_namespace, entity_key(relation.source), now)
                target = tx.graph.find_entity(scope_namespace, entity_key(relation.target), now)
                if (
                    source is not None
                    and target is not None
                    and tx.graph.delete_relation(
                        scope_namespace, source.id, relation.relation_type, target.id
                    )
                ):
                    deleted.append(label)
                else:
                    missing.append(label)
            if deleted:
                tx.dropped_content("forget", now)
        if deleted:
            self._after_forget()
        return _report("relations", deleted, missing)

    # -- reads ------------------------------------------------------------------------

    def _entities(
        self, namespace: str, records: Sequence[EntityRecord], now: datetime
    ) -> list[KnowledgeEntity]:
        graph = self._store.graph
        ids = [record.id for record in records]
        observed = graph.observation_memories(namespace, ids, now)
        # Memories written elsewhere only: an observation (of this entity or any other) is
        # the declared graph, never a mention, so an entity reads the same on every page.
        mentions = graph.mentions(
            namespace, ids, now, MENTIONS_AS_OBSERVATIONS * 2, observations=False
        )
        memories = self._store.semantic.visible_memories(
            Scope(namespaces=(namespace,), now=now), sorted({row.seq for row in mentions})
        )
        mentioned: dict[int, list[str]] = {}
        for row in mentions:
            lines = mentioned.setdefault(row.entity_id, [])
            if row.seq in memories and len(lines) < MENTIONS_AS_OBSERVATIONS:
                lines.append(prompt_line(memories[row.seq]))
        return [
            KnowledgeEntity(
                name=record.name,
                entity_type=record.type,
                observations=[content for _, content in observed.get(record.id, [])]
                + mentioned.get(record.id, []),
            )
            for record in records
        ]

    def _page_entities(
        self, namespace: str, records: Sequence[EntityRecord], now: datetime
    ) -> list[KnowledgeEntity]:
        """The first of ``records`` whose observations fit in ``PAGE_OBSERVATION_CHARACTERS``
        (the first entity always, whole: an entity is never cut), read a few at a time, then
        more, so a page of large entities is not read whole to be cut."""
        entities: list[KnowledgeEntity] = []
        characters = 0
        start, size = 0, PAGE_READ_CHUNK
        while start < len(records):
            for entity in self._entities(namespace, records[start : start + size], now):
                characters += sum(len(text) for text in entity.observations)
                if entities and characters > PAGE_OBSERVATION_CHARACTERS:
                    return entities
                entities.append(entity)
            start, size = start + size, size * 2
        return entities

    @staticmethod
    def _relations(records: Iterable[RelationRecord]) -> list[KnowledgeRelation]:
        return [
            KnowledgeRelation(source=r.subject, target=r.object, relation_type=r.predicate)
            for r in records
        ]

    def read_graph(
        self, *, limit: int | None = None, cursor: str | None = None, namespace: str | None = None
    ) -> KnowledgeGraphPage:
        """A page of entities (by name) with the relations that start at them.

        ``limit`` defaults to ``graph_page_size`` (or ``max_limit``, when that is
        lower); ``nextCursor`` (with ``hasMore``) fetches the next page, so a large
        graph never comes back in one answer. A page ends early, before the entity whose
        observations would take it past ``PAGE_OBSERVATION_CHARACTERS``.
        """
        scope_namespace = self._namespace(namespace)
        size = check.limit(limit, self._settings, default=self._settings.graph_page_size)
        after = None
        if cursor is not None:
            key, entity_id = decode_cursor(cursor, "graph", (str, int), "read_graph")
            after = (key, entity_id)
        graph = self._store.graph
        now = self._clock()
        records = graph.list_entities(
            scope_namespace, now, query=None, type=None, limit=size + 1, after=after
        )
        has_more = len(records) > size
        entities = self._page_entities(scope_namespace, records[:size], now)
        has_more = has_more or len(entities) < min(size, len(records))
        records = records[: len(entities)]
        return KnowledgeGraphPage(
            entities=entities,
            relations=self._relations(
                graph.relations_from(scope_namespace, [record.id for record in records], now)
            ),
            next_cursor=encode_cursor("graph", records[-1].key, records[-1].id)
            if has_more
            else None,
            has_more=has_more,
        )

    def _touching(
        self, namespace: str, records: Sequence[EntityRecord], now: datetime
    ) -> list[KnowledgeRelation]:
        """The relations with at least one end among ``records``, by subject as
        ``read_graph`` lists them (the reference's rule for ``search_nodes`` and
        ``open_nodes``: an opened node's connections to nodes not opened are how an agent
        discovers them)."""
        ids = [record.id for record in records]
        found: list[RelationRecord] = []
        after = 0
        size = RELATION_CHUNK
        while ids:
            chunk = self._store.graph.relations(
                namespace, now, entity_ids=ids, predicate=None, limit=size, after_id=after
            )
            found += chunk
            if len(chunk) < size:
                break
            after = chunk[-1].id
            # Each read finds the entities' relations anew before skipping to ``after``: a
            # chunk of fixed size made a hub of 100,000 relations a hundred such reads (18 s
            # on SQLite); doubling makes it seven.
            size *= 2
        found.sort(key=lambda relation: (relation.subject_key, relation.id))
        return self._relations(found)

    def search_nodes(self, query: str, *, namespace: str | None = None) -> KnowledgeGraphPage:
        """Entities whose name, type or observations contain ``query`` (in any case, Unicode
        lower case on both sides as the reference does; or whose key contains the query's
        key), and the relations touching them; at most ``graph_page_size`` entities (or
        ``max_limit``, when that is lower), fewer when their observations pass
        ``PAGE_OBSERVATION_CHARACTERS`` (``hasMore`` says so)."""
        scope_namespace = self._namespace(namespace)
        if len(query) > 1_000:
            raise ValidationError("query", f"is {len(query)} characters; the limit is 1000")
        # A default above RECALLD_MAX_LIMIT is lowered to it, as read_graph's is.
        size = min(self._settings.graph_page_size, self._settings.max_limit)
        now = self._clock()
        # The query as given, as the reference reads it: "   " finds what holds three spaces.
        records = self._store.graph.search_entities(scope_namespace, query, now, size + 1)
        has_more = len(records) > size
        entities = self._page_entities(scope_namespace, records[:size], now)
        has_more = has_more or len(entities) < min(size, len(records))
        records = records[: len(entities)]
        return KnowledgeGraphPage(
            entities=entities,
            relations=self._touching(scope_namespace, records, now),
            has_more=has_more,
        )

    def open_nodes(
        self, names: Sequence[str], *, namespace: str | None = None
    ) -> KnowledgeGraphPage:
        """The named entities (unknown names are skipped) and the relations touching them."""
        scope_namespace = self._namespace(namespace)
        keys = [
            entity_key(check_entity_name(name, f"names[{index}]"))
            for index, name in enumerate(bounded_items("names", names))
        ]
        now = self._clock()
        found = self._store.graph.entities_by_key(scope_namespace, keys, now)
        records = [found[key] for key in dict.fromkeys(keys) if key in found]
        entities = self._page_entities(scope_namespace, records, now)
        if len(entities) < len(records):
            # The reference's answer has no page: refused whole, never cut silently.
            raise ValidationError(
                "names",
                f"the entities named hold more than {PAGE_OBSERVATION_CHARACTERS} characters"
                f" of observations; the limit is {PAGE_OBSERVATION_CHARACTERS} per call (one"
                f" entity is always answered): open fewer names (the first {len(entities)} fit)",
            )
        return KnowledgeGraphPage(
            entities=entities,
            relations=self._touching(scope_namespace, records, now),
        )

    def version(self, *, namespace: str | None = None) -> int:
        """A number that changes when the namespace's graph may have (for notifications:
        it may also change when the graph did not)."""
        return self._store.graph.version(self._namespace(namespace), self._clock())

    # -- import --------------------------------------------------------------------------

    def import_jsonl(
        self, lines: Iterable[str] | Iterable[bytes], *, namespace: str | None = None
    ) -> KnowledgeImportReport:
        """Import the reference server's ``memory.jsonl`` (one entity or relation per line).

        Entities are written first, then relations (whose entities may appear
        later in the file). An entity already present gains the observations
        it lacks. A bad line is reported by number and nothing of it is
        written; the other lines still import (:mod:`recalld.knowledge_import`).
        """
        return knowledge_import.import_jsonl(
            self._store,
            self._clock,
            self._namespace(namespace),
            lines,
            self._import_line,
            self._add_observation,
        )

    def _import_line(self, line: str) -> KnowledgeEntity | KnowledgeRelation:
        # Depth is checked before parsing: a line nested thousands deep made the parser
        # recurse out of the stack, and the whole file failed.
        data = check.load_json(line, "line")
        if not isinstance(data, dict):
            raise ValidationError("line", "a line must be a JSON object")
        kind = data.pop("type", None)
        if kind == "entity":
            entity: KnowledgeEntity = self._parse(KnowledgeEntity, data, "entity")
            return KnowledgeEntity(
                name=check_entity_name(entity.name, "name"),
                entity_type=check_entity_type(entity.entity_type, "entityType"),
                observations=[
                    self._observation(text, f"observations[{number}]")
                    for number, text in enumerate(entity.observations)
                ],
            )
        if kind == "relation":
            return self._checked_relation(data, "relation")
        raise ValidationError("type", f"must be 'entity' or 'relation', got {kind!r}")


def _report(what: str, deleted: Sequence[str], missing: Sequence[str]) -> RemovalReport:
    message = (
        f"{what.capitalize()} deleted successfully"
        if not missing
        else (f"Deleted {len(deleted)} {what}; not found: {', '.join(missing)}")
    )
    return RemovalReport(message=message, deleted=list(deleted), not_found=list(missing))
