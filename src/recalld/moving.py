"""Moving a database between stores: ``recalld migrate --to postgresql://… [--from PATH]``.

Everything is copied: memories with their ids and every field (they get new
``seq`` numbers in the target, which every copied row is renumbered to), tags,
vectors with their model, jobs in their state (a leased job becomes queued
again: its worker belonged to the source), core memory, signal features and
readings, trigger history and queued recollections, intentions with their
triggers and streaks, API tokens (their hashes), and the knowledge graph
(entities, mentions, observations, relations and their sources, what was
extracted by which extractor). Worker heartbeats and the vector change log are
not copied: the target keeps its own.

It is idempotent and resumable: a memory whose id is already in the target is
not written again (its ``seq`` there is used), and every other row is skipped
when its identity (see :mod:`recalld.store.tables`) is already present, so an
interrupted copy is finished by running it again. It works in both directions
(SQLite → PostgreSQL and back); both stores must be at the same schema version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from recalld._time import Clock, utc_now
from recalld.errors import ValidationError
from recalld.model import Memory
from recalld.store.base import Scope, Store, stored_record
from recalld.store.tables import COPIED_TABLES, Table

__all__ = ["BATCH_ROWS", "CopyReport", "Progress", "copy_store"]

BATCH_ROWS = 500
# (table, rows handled, rows in the source) after each batch.
Progress = Callable[[str, int, int], None]
SEQ_COLUMNS = ("seq",)
ENTITY_COLUMNS = ("entity_id", "subject_id", "object_id")


@dataclass
class CopyReport:
    """Rows copied per table (``copied``) and rows already in the target (``skipped``)."""

    copied: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)


@dataclass
class _Numbers:
    """Source id → target id, for memories (seq), entities and relations."""

    seqs: dict[int, int] = field(default_factory=dict)
    entities: dict[int, int] = field(default_factory=dict)
    relations: dict[int, int] = field(default_factory=dict)


def _batches(source: Store, table: Table) -> Iterator[list[dict[str, Any]]]:
    after: tuple[Any, ...] | None = None
    while True:
        rows = source.tables.read(table, after, BATCH_ROWS)
        if not rows:
            return
        yield rows
        after = tuple(rows[-1][name] for name in table.order)


class _Copier:
    def __init__(self, source: Store, target: Store, clock: Clock, progress: Progress | None):
        self.source = source
        self.target = target
        self.clock = clock
        self.progress = progress
        self.numbers = _Numbers()
        self.report = CopyReport()

    def _tick(self, table: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(table, done, total)

    def memories(self) -> None:
        namespaces = self.source.namespaces()
        scope = Scope(namespaces=tuple(namespaces), now=self.clock(), include_expired=True)
        total = self.source.counts(scope).count
        done = copied = 0
        batch: list[Memory] = []

        def flush() -> None:
            nonlocal copied
            with self.target.transaction() as tx:
                for memory in batch:
                    existing = tx.find(memory.namespace, id=memory.id)
                    if existing is None:
                        existing = tx.insert(stored_record(memory))
                        copied += 1
                    self.numbers.seqs[memory.seq] = existing.seq
            batch.clear()

        for memory in self.source.iterate(scope) if namespaces else iter(()):
            batch.append(memory)
            if len(batch) >= BATCH_ROWS:
                done += len(batch)
                flush()
                self._tick("memories", done, total)
        if batch:
            done += len(batch)
            flush()
        self._tick("memories", done, total)
        self.report.copied["memories"] = copied
        self.report.skipped["memories"] = done - copied

    def _renumber(self, table: Table, row: dict[str, Any]) -> dict[str, Any] | None:
        """The row with its references renumbered for the target (None: it refers to a
        memory, entity or relation that was not copied)."""
        renumbered = dict(row)
        for name in SEQ_COLUMNS:
            if name in renumbered:
                seq = self.numbers.seqs.get(int(renumbered[name]))
                if seq is None:
                    return None
                renumbered[name] = seq
        for name in ENTITY_COLUMNS:
            if name in renumbered:
                entity = self.numbers.entities.get(int(renumbered[name]))
                if entity is None:
                    return None
                renumbered[name] = entity
        if "relation_id" in renumbered:
            relation = self.numbers.relations.get(int(renumbered["relation_id"]))
            if relation is None:
                return None
            renumbered["relation_id"] = relation
        if table.name == "jobs" and renumbered["state"] == "running":
            # Its lease belongs to a worker of the source database.
            renumbered.update(state="queued", lease_owner=None, lease_until=None)
        return renumbered

    def table(self, table: Table) -> None:
        total = self.source.tables.count(table)
        done = copied = 0
        sources: list[dict[str, Any]] = []
        for rows in _batches(self.source, table):
            renumbered = [self._renumber(table, row) for row in rows]
            copied += self.target.tables.write(
                table, [row for row in renumbered if row is not None]
            )
            done += len(rows)
            if table.generated is not None and table.name != "pending_recollections":
                sources += rows
            self._tick(table.name, done, total)
        self._tick(table.name, done, total)
        self.report.copied[table.name] = copied
        self.report.skipped[table.name] = done - copied
        if table.name == "graph_entities":
            self._map(table, sources, self.numbers.entities)
        elif table.name == "graph_relations":
            self._map(table, sources, self.numbers.relations)

    def _map(self, table: Table, sources: list[dict[str, Any]], into: dict[int, int]) -> None:
        """Learn the target ids of copied rows by their identity."""
        generated = table.generated
        assert generated is not None
        targets: dict[tuple[Any, ...], int] = {}
        for rows in _batches(self.target, table):
            for row in rows:
                targets[tuple(row[name] for name in table.identity)] = int(row[generated])
        for row in sources:
            renumbered = self._renumber(table, row)
            if renumbered is None:
                continue
            found = targets.get(tuple(renumbered[name] for name in table.identity))
            if found is not None:
                into[int(row[generated])] = found


def copy_store(
    source: Store,
    target: Store,
    *,
    clock: Clock = utc_now,
    progress: Progress | None = None,
) -> CopyReport:
    """Copy every memory and everything attached to it from ``source`` into ``target``.

    See the module docstring; safe to run again after an interruption.
    """
    if source.schema_version != target.schema_version:
        raise ValidationError(
            "to",
            f"the source is at schema version {source.schema_version} and the target at"
            f" {target.schema_version}: upgrade recalld where both are opened",
        )
    copier = _Copier(source, target, clock, progress)
    tables = {table.name: table for table in COPIED_TABLES}
    copier.table(tables["tokens"])
    copier.memories()
    for table in COPIED_TABLES:
        if table.name != "tokens":
            copier.table(table)
    target.tables.analyze()
    return replace(copier.report)
