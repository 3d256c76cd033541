"""Importing the MCP reference memory server's ``memory.jsonl`` into the knowledge graph
(:meth:`recalld.knowledge.KnowledgeGraph.import_jsonl`).

Entities are written first, then relations (whose entities may appear later in the
file), a batch of lines per transaction. Each batch locks its entities' keys and declares
them in key order, as an extraction upserts them and as ``create_entities`` and
``create_relations`` do: in file order, an import naming Bob before Alice held Bob's row
while it waited for Alice's, which an extraction or another writer held while it waited
for Bob's, a deadlock. A batch PostgreSQL breaks as a deadlock or serialization failure
anyway is run again whole (:func:`recalld.conflicts.rerun_on_conflict`), its counts
taken only from the attempt that committed (adversarial pass c69: a 503 to the importer
before, and a failing batch's rolled-back lines were counted as kept).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from recalld import _validate as check
from recalld import knowledge_relations
from recalld._time import Clock
from recalld.conflicts import rerun_on_conflict
from recalld.errors import ValidationError
from recalld.graph.names import entity_key
from recalld.knowledge_bounds import entity_room_error, import_batches
from recalld.knowledge_model import KnowledgeEntity, KnowledgeImportReport, KnowledgeRelation
from recalld.knowledge_relations import relation_keys
from recalld.model import ImportLineError
from recalld.store.base import Store, StoreTransaction
from recalld.store.graph import EntityRecord
from recalld.transfer_lines import stopped_import

__all__ = ["RELATION_BATCH", "import_jsonl"]

# Relations written per transaction.
RELATION_BATCH = 500

ParseLine = Callable[[str], KnowledgeEntity | KnowledgeRelation]
AddObservation = Callable[[StoreTransaction, str, EntityRecord, str], None]


def import_jsonl(
    store: Store,
    clock: Clock,
    namespace: str,
    lines: Iterable[str] | Iterable[bytes],
    parse_line: ParseLine,
    add_observation: AddObservation,
) -> KnowledgeImportReport:
    """Import ``lines`` into ``namespace``: see the module docstring; ``parse_line`` checks
    one line (raising :class:`ValidationError`), ``add_observation`` writes one."""
    report = KnowledgeImportReport()
    entities: list[tuple[int, KnowledgeEntity]] = []
    relations: list[tuple[int, KnowledgeRelation]] = []
    for number, given in enumerate(lines, start=1):
        try:
            line = check.line_text(given)  # bytes are decoded line by line
            if not line.strip():
                continue
            parsed = parse_line(line)
        except ValidationError as error:
            report.refuse(ImportLineError(line=number, error=str(error)))
            continue
        if isinstance(parsed, KnowledgeEntity):
            entities.append((number, parsed))
        else:
            relations.append((number, parsed))
    now = clock()

    def entity_batch(batch: Sequence[tuple[int, KnowledgeEntity]]) -> KnowledgeImportReport:
        counts = KnowledgeImportReport()
        with store.transaction() as tx:
            tx.graph.lock_entities(namespace, (entity_key(e.name) for _, e in batch))
            held: dict[int, int] = {}  # as add_observations: each entity summed once
            # Key order (see the module docstring); sorted() is stable, so an entity on
            # two lines gains their observations in file order.
            for line in sorted(batch, key=lambda item: entity_key(item[1].name)):
                _import_entity(tx, namespace, line, held, now, counts, add_observation)
        return counts

    def relation_batch(batch: Sequence[tuple[int, KnowledgeRelation]]) -> KnowledgeImportReport:
        counts = KnowledgeImportReport()
        with store.transaction() as tx:
            tx.graph.lock_entities(namespace, relation_keys([r for _, r in batch]))
            _import_relations(tx, namespace, batch, now, counts)
        return counts

    written = 0
    for batch in import_batches(entities, lambda item: len(item[1].observations)):
        # A full or busy database says where it stopped and what it kept (stop 64).
        first, written = entities[written][0], written + len(batch)
        with stopped_import([first], report, in_file_order=False):
            counts = rerun_on_conflict(functools.partial(entity_batch, batch), what="import_jsonl")
        _add(report, counts)
    for start in range(0, len(relations), RELATION_BATCH):
        chunk = relations[start : start + RELATION_BATCH]
        with stopped_import([chunk[0][0]], report, in_file_order=False):
            counts = rerun_on_conflict(
                functools.partial(relation_batch, chunk), what="import_jsonl"
            )
        _add(report, counts)
    report.order_errors()
    return report


def _add(report: KnowledgeImportReport, counts: KnowledgeImportReport) -> None:
    report.entities += counts.entities
    report.observations += counts.observations
    report.relations += counts.relations
    report.unchanged += counts.unchanged
    report.refuse_all(counts)


def _import_entity(
    tx: StoreTransaction,
    namespace: str,
    line: tuple[int, KnowledgeEntity],
    held: dict[int, int],
    now: datetime,
    report: KnowledgeImportReport,
    add_observation: AddObservation,
) -> None:
    number, entity = line
    found = tx.graph.find_entity(namespace, entity_key(entity.name), now)
    wanted = list(dict.fromkeys(entity.observations))
    kept = [] if found is None else tx.graph.observations(found.id, now, wanted)
    new = [content for content in wanted if content not in {text for _, text in kept}]
    if found is not None and found.id not in held:
        held[found.id] = tx.graph.observation_characters(found.id)
    holds = 0 if found is None else held[found.id]
    refused = entity_room_error(entity.name, holds, new)
    if refused is not None:  # this line changes nothing; the others still import
        report.refuse(ImportLineError(line=number, error=f"observations: {refused}"))
        return
    record, created = tx.graph.declare_entity(namespace, entity.name, entity.entity_type, now)
    held[record.id] = holds + sum(map(len, new))
    for content in new:
        add_observation(tx, namespace, record, content)
    report.entities += int(created)
    report.observations += len(new)
    report.unchanged += int(not created and not new)


def _import_relations(
    tx: StoreTransaction,
    namespace: str,
    batch: Sequence[tuple[int, KnowledgeRelation]],
    now: datetime,
    report: KnowledgeImportReport,
) -> None:
    """A batch of relation lines: a line naming an entity that is not there is reported
    and skipped; the ends of the others are declared in key order, then the relations
    written in file order."""
    complete: list[KnowledgeRelation] = []
    for number, relation in batch:
        missing = next(
            (
                (field, name)
                for field, name in (("from", relation.source), ("to", relation.target))
                if tx.graph.find_entity(namespace, entity_key(name), now) is None
            ),
            None,
        )
        if missing is not None:
            report.refuse(
                ImportLineError(line=number, error=f"{missing[0]}: no entity named {missing[1]!r}")
            )
            continue
        complete.append(relation)
    ends = [name for relation in complete for name in (relation.source, relation.target)]
    declared = knowledge_relations.declared_entities(tx.graph, namespace, ends, now)
    for relation in complete:
        source = declared[entity_key(relation.source)].id
        target = declared[entity_key(relation.target)].id
        if tx.graph.declare_relation(namespace, source, relation.relation_type, target, now):
            report.relations += 1
        else:
            report.unchanged += 1
