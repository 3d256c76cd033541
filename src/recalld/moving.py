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

It is idempotent and resumable, and a finished run leaves the target equal to
the source for everything the copy wrote. The target keeps a ledger (schema
migration 25) of the memories and core memory rows a copy from each source
(its :meth:`~recalld.store.base.Store.location`) wrote; so a run

- copies a memory the target does not hold, and records it;
- skips a memory the target holds unchanged, and writes its missing rows;
- skips a memory edited in the target since the source's version (its edit stays) and
  the source's rows its older text gave (:data:`OF_THE_TEXT`: its vector, its graph
  mentions and relation sources; the entities and relations only they named are not
  left behind): the target's edit has its own, and a queued item the source fired since
  is copied with the edit's text;
- brings up to date a memory the target holds that changed in the source since:
  the target's row is deleted with everything that depends on it (as forget
  does) and the source's is copied with its rows;
- removes a memory this copy wrote earlier that the source no longer holds
  (forgotten, purged), as forget does: its rows go, and the store scrubs what
  they leave behind (:meth:`~recalld.store.base.Store.scrub`); so too a graph
  entity or relation this copy wrote (the ledger of migration 27) that the source
  deleted since;
- refuses, before writing it, a memory whose id the target gives to another
  memory (one with another ``created_at``, which the copy did not write): the
  run stops there, naming the id. Core memory that the target holds with other
  entries, which the copy did not write either, is refused the same way before
  anything is written (a memory the target held before is never overwritten);
- leaves out a memory whose TTL has passed (the target's purge would delete it, and
  until then the admin listing would show it again) with every row of it, counted as
  ``expired``; one an earlier run copied goes from the target as a forgotten one does,
  unless the target holds it alive, edited there since (its TTL renewed): that edit
  stays, as any edit made in the target does;
- reports, rather than copying, a memory today's rules refuse (a NUL in its
  ``meta``, which an older version accepted on SQLite), naming its id and the
  field, and the rows it could not copy because their memory is not in the
  target (refused, or written to the source while the copy ran): another run
  after the fix copies them.

Other rows are inserted when their identity (see :mod:`recalld.store.tables`) is
missing; a present row of a table whose rows change in place (jobs, intentions,
their streaks) is updated when it differs (a reminder cancelled in the source
since stays cancelled), and so is an API token present in both (a revocation
carries over). A queued recollection or reminder the target has delivered since
an earlier run copied it is not queued again (its firing is in the target's history).
It works in both directions (SQLite → PostgreSQL and back); both stores must be
at the same schema version.

One copy runs into a target at a time: a run holds the target's copy lock
(:meth:`~recalld.store.tables.TableAccess.copy_lock`) from its first read of the
target to its last write, and a second run started meanwhile waits for it, then
does its own run against what the first left (so it copies nothing twice). Two at
once would each find a row missing and insert it, and the second would fail on the
first's (PostgreSQL's unique violation).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from recalld._time import Clock, utc_now
from recalld._validate import nul_problem
from recalld.errors import ConflictError, ValidationError
from recalld.model import Memory, ScrubState
from recalld.store.base import MemoryRecord, Scope, Store, StoreTransaction, stored_record
from recalld.store.context import rewritten_pending
from recalld.store.tables import COPIED_TABLES, GraphKind, Table
from recalld.writing import expired

__all__ = ["BATCH_ROWS", "CopyReport", "Progress", "copy_store", "overwrite_conflict"]

BATCH_ROWS = 500
# (table, rows handled, rows in the source) after each batch.
Progress = Callable[[str, int, int], None]
SEQ_COLUMNS = ("seq",)
ENTITY_COLUMNS = ("entity_id", "subject_id", "object_id")
# Copied before the memories, compared row by row (each holds a few rows).
RECONCILED = ("tokens", "core_memory")
# What says a row changed later on one side: a row both hold differently is taken from the
# source only when the source's is newer, so a run again after the target went into use
# never takes back what was done there (an edit, a cancelled reminder, a finished job).
FRESHNESS = {
    "jobs": "updated_at",
    "core_memory": "updated_at",
    "intentions": "updated_at",
    "intention_streaks": "last_at",
}
DROPPED_REASON = "migrate"
# The rows that a memory's text gives (its vector, the entities it mentions, the record
# of that extraction): not copied onto a memory edited in the target since.
OF_THE_TEXT = ("vectors", "graph_mentions", "graph_relation_sources", "graph_extracted")
# The graph tables whose rows the target's ledger records (a run removes the ones the
# source deleted since): table -> the ledger's kind.
GRAPH_KINDS: dict[str, GraphKind] = {"graph_entities": "entity", "graph_relations": "relation"}
# The location of an in-memory SQLite database: each such store is a database of its own.
MEMORY_LOCATION = ":memory:"


@dataclass
class CopyReport:
    """Rows per table: ``copied`` (new in the target), ``updated`` (brought up to date),
    ``skipped`` (already there, the same), ``removed`` (memories, graph entities and
    relations a copy wrote earlier that the source no longer holds), ``left`` (not
    copied: their memory is not in the target), ``expired`` (not copied: their memory's
    TTL had passed, so it is not in the target); the memories
    ``refused`` (one line each, naming the id and the field), whether what the
    run removed or replaced is scrubbed (``scrub``), and ``adopted``: the memories the
    target held under the source's ids without the ledger naming this copy (an older
    recalld's copy, before migration 25, or an import of the source's export), taken as
    this copy's from now on: one the source forgot before this run cannot be told from
    the target's own and stays there."""

    copied: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)
    left: dict[str, int] = field(default_factory=dict)
    expired: dict[str, int] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    scrub: ScrubState = "none"
    adopted: int = 0

    @property
    def complete(self) -> bool:
        """Whether every row of the source is in the target."""
        return not self.refused and not any(self.left.values())


@dataclass
class _Numbers:
    """Source id → target id, for memories (seq), entities and relations."""

    seqs: dict[int, int] = field(default_factory=dict)
    entities: dict[int, int] = field(default_factory=dict)
    relations: dict[int, int] = field(default_factory=dict)
    _up_to: tuple[list[int], list[int]] = field(default_factory=lambda: ([], []))

    def up_to(self, seq: int) -> int:
        """The target seq of the newest memory copied from source seq ``seq`` or before it
        (0: none): a tombstone's last memory before its deletion, which need not be one
        that was copied (forgotten, of another namespace)."""
        sources, newest = self._up_to
        if len(sources) != len(self.seqs):
            sources, newest = sorted(self.seqs), []
            for source in sources:
                newest.append(max(self.seqs[source], newest[-1] if newest else 0))
            self._up_to = (sources, newest)
        at = bisect.bisect_right(sources, seq)
        return newest[at - 1] if at else 0


def _batches(source: Store, table: Table) -> Iterator[list[dict[str, Any]]]:
    after: tuple[Any, ...] | None = None
    while True:
        rows = source.tables.read(table, after, BATCH_ROWS)
        if not rows:
            return
        yield rows
        after = tuple(rows[-1][name] for name in table.order)


def _source_newer(table: Table, row: dict[str, Any], there: dict[str, Any]) -> bool:
    """Whether the source's ``row`` is a later state than the target's ``there`` (see
    :data:`FRESHNESS`); a token only ever takes a revocation (never loses one)."""
    if table.name == "tokens":
        return row["revoked_at"] is not None and there["revoked_at"] is None
    column = FRESHNESS.get(table.name)
    if column is None or row[column] is None:
        return False
    return there[column] is None or row[column] > there[column]


def _comparable(memory: Memory) -> tuple[MemoryRecord, Any]:
    """Every stored field of ``memory``, in a form two stores agree on: tags as a sorted
    tuple, and ``at`` with its offset (equal instants at other offsets differ)."""
    record = stored_record(memory)
    offset = None if record.at is None else record.at.utcoffset()
    return replace(record, tags=tuple(sorted(record.tags))), offset


def _renewed_there(tx: StoreTransaction, memory: Memory, now: datetime) -> bool:
    """Whether the target holds the source's expired ``memory`` alive, edited there since
    the source's version (its TTL renewed, say): that edit stays, as any edit made in the
    target does (the memory is skipped as edited there, not removed as expired)."""
    existing = tx.find(memory.namespace, id=memory.id)
    return (
        existing is not None
        and existing.created_at == memory.created_at
        and existing.updated_at > memory.updated_at
        and not expired(existing, now)
    )


def _refusal(memory: Memory) -> str | None:
    """Why today's rules refuse ``memory`` (stored by an older version), or None."""
    found = nul_problem(memory.meta, "meta")
    if found is None:
        return None
    path, problem = found
    return f"memory {memory.id!r} in {memory.namespace!r}: {path}: {problem}"


class _Copier:
    def __init__(
        self,
        source: Store,
        target: Store,
        clock: Clock,
        progress: Progress | None,
        origin: str,
        report: CopyReport,
    ):
        self.source = source
        self.target = target
        self.clock = clock
        self.progress = progress
        self.origin = origin
        self.numbers = _Numbers()
        self.report = report
        self.dropped = False
        # The target seqs of the memories this copy wrote before this run (its ledger).
        self.owned: set[int] = set()
        # The source seqs of the memories edited in the target since the source's version:
        # the target's row stays with what its own text gave (OF_THE_TEXT), and the
        # source's rows of the older text are not copied onto it.
        self.edited_there: set[int] = set()
        # Those of them the source's queue holds items of, as the target holds them, by target
        # seq: such an item is copied with their text (rewritten_pending), not the older one.
        self.edits: dict[int, Memory] = {}
        # The source seqs the source's queue holds items of (see learn_firings).
        self.queued_here: set[int] = set()
        # The firings the target knew of before this run copied rows (its trigger history,
        # each reminder's last firing), by target seq: see _delivered_there.
        self.fired_there: set[tuple[int, Any]] = set()
        self.reminded_there: dict[int, Any] = {}
        # The items the target's queue held then (seq, kind, fired_at): not delivered, even
        # when this run replaces their memory (the item goes with the target's row).
        self.queued_there: set[tuple[int, str, Any]] = set()
        # The target seq a memory brought up to date by this run had before (new: old).
        self.replaced: dict[int, int] = {}
        # The source seqs of the memories whose TTL had passed: not copied, nor their rows.
        self.expired: set[int] = set()

    def _tick(self, table: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(table, done, total)

    def _drop(self, tx: StoreTransaction) -> None:
        """Record in ``tx`` that content leaves the target (scrubbed after the copy)."""
        tx.dropped_content(DROPPED_REASON, self.clock())
        self.dropped = True

    # -- tokens and core memory: compared row by row, before anything is written ----------

    def reconcile(self, tables: dict[str, Table]) -> None:
        """Tokens and core memory: insert what is missing, update what the source changed,
        refuse (before writing anything) a row the target holds otherwise and did not get
        from this source."""
        plans = [self._plan(tables[name]) for name in RECONCILED]
        for table, (new, changed, same) in zip(
            (tables[name] for name in RECONCILED), plans, strict=True
        ):
            if table.name == "core_memory" and changed:
                with self.target.transaction() as tx:  # entries may be removed: scrub
                    self._drop(tx)
            copied = self.target.tables.write(table, new)
            updated = self.target.tables.overwrite(table, changed)
            if table.name == "core_memory":
                self.target.tables.mark_core(
                    self.origin,
                    [(row["namespace"], row["target"]) for row in new + changed + same],
                )
            self.report.copied[table.name] = copied
            self.report.updated[table.name] = updated
            self.report.skipped[table.name] = len(same)
            handled = copied + updated + len(same)
            self._tick(table.name, handled, handled)

    def _plan(self, table: Table) -> tuple[list[dict[str, Any]], ...]:
        """(rows to insert, rows to update, rows already the same) of ``table``."""
        names = [column.name for column in table.written]

        def identity(row: dict[str, Any]) -> tuple[Any, ...]:
            return tuple(row[name] for name in table.identity)

        present = {identity(row): row for rows in _batches(self.target, table) for row in rows}
        ours = (
            self.target.tables.migrated_core(self.origin) if table.name == "core_memory" else set()
        )
        new: list[dict[str, Any]] = []
        changed: list[dict[str, Any]] = []
        same: list[dict[str, Any]] = []
        for rows in _batches(self.source, table):
            for row in rows:
                there = present.get(identity(row))
                if there is None:
                    new.append(row)
                elif all(row[name] == there[name] for name in names) or (
                    # The same entries at another change counter: the source's state,
                    # no conflict, and the target's counter never goes back (review of
                    # pass b67: refused as "other entries", after an older source's
                    # upgrade the check before it lets this by).
                    table.name == "core_memory" and row["entries"] == there["entries"]
                ):
                    same.append(row)
                else:
                    self._check_overwrite(table, row, there, identity(row) in ours)
                    if _source_newer(table, row, there):
                        changed.append(row)
                    else:  # the target's is as new or newer: it stays
                        same.append(row)
        return new, changed, same

    def _check_overwrite(
        self, table: Table, row: dict[str, Any], there: dict[str, Any], ours: bool
    ) -> None:
        conflict = overwrite_conflict(table.name, row, there, ours)
        if conflict is not None:
            raise conflict

    # -- memories --------------------------------------------------------------------------

    def memories(self) -> None:
        namespaces = self.source.namespaces()
        scope = Scope(namespaces=tuple(namespaces), now=self.clock(), include_expired=True)
        total = self.source.counts(scope).count
        ours = {
            (namespace, id): seq for seq, namespace, id in self.target.tables.migrated(self.origin)
        }
        self.owned = set(ours.values())
        seen: set[tuple[str, str]] = set()
        counts = {"copied": 0, "updated": 0, "skipped": 0}
        done = 0
        batch: list[Memory] = []

        def flush() -> None:
            adopted = self.report.adopted
            try:
                with self.target.transaction() as tx:
                    for memory in batch:
                        if expired(memory, scope.now) and not _renewed_there(tx, memory, scope.now):
                            # Gone for every reader already: a copy must not bring it back.
                            self.expired.add(memory.seq)
                            continue
                        refused = _refusal(memory)
                        if refused is not None:
                            self.report.refused.append(refused)
                            continue
                        seen.add((memory.namespace, memory.id))
                        outcome, seq = self._memory(tx, memory, ours)
                        counts[outcome] += 1
                        self.numbers.seqs[memory.seq] = seq
            except BaseException:
                # Rolled back: the batch adopted nothing (counted as its transaction commits).
                self.report.adopted = adopted
                raise
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
        for outcome, count in counts.items():
            getattr(self.report, outcome)["memories"] = count
        self.report.expired["memories"] = len(self.expired)
        self._remove([seq for key, seq in ours.items() if key not in seen])

    def _memory(
        self, tx: StoreTransaction, memory: Memory, ours: dict[tuple[str, str], int]
    ) -> tuple[str, int]:
        """Write one source memory into ``tx``: how (copied, updated, skipped) and its seq."""
        existing = tx.find(memory.namespace, id=memory.id)
        self._free_key(tx, memory, self.owned)
        if existing is None:
            return "copied", self._insert(tx, memory)
        mine = ours.get((memory.namespace, memory.id)) == existing.seq
        if not mine and existing.created_at != memory.created_at:
            raise ConflictError(
                "id",
                f"memory {memory.id!r} in {memory.namespace!r} is another memory in the"
                f" target (created {existing.created_at.isoformat()} there,"
                f" {memory.created_at.isoformat()} in the source), which this copy did not"
                " write: the copy stopped here; give one of them another id, or migrate into"
                " an empty database",
            )
        if not mine:
            self.report.adopted += 1
        same = _comparable(existing) == _comparable(memory)
        if same or existing.updated_at >= memory.updated_at:
            # The same, or edited in the target since (its edit stays: never taken back).
            if not mine:
                tx.mark_migrated(existing.seq, self.origin)
            if not same and existing.updated_at > memory.updated_at:
                # Edited there (a recall's access count or the indexing state changes
                # no updated_at: such a memory still takes the rows it lacks).
                self.edited_there.add(memory.seq)
                if memory.seq in self.queued_here:  # not every edit's text: a big target's
                    self.edits[existing.seq] = existing
            return "skipped", existing.seq
        # Changed in the source since: the old row goes with every row that depends on it
        # (as forget does), and the source's is copied with its rows (the later tables).
        tx.delete(existing.seq)
        self._drop(tx)
        seq = self._insert(tx, memory)
        self.replaced[seq] = existing.seq
        return "updated", seq

    def _free_key(self, tx: StoreTransaction, memory: Memory, owned: set[int]) -> None:
        """Delete the target's copy that holds ``memory``'s key under another id, when this
        copy wrote it: in the source that memory is gone or holds another key now (a key
        names one memory), and it is copied again if it is still there."""
        if memory.key is None:
            return
        holder = tx.find(memory.namespace, key=memory.key)
        if holder is not None and holder.id != memory.id and holder.seq in owned:
            tx.delete(holder.seq)
            self._drop(tx)

    def _insert(self, tx: StoreTransaction, memory: Memory) -> int:
        try:
            inserted = tx.insert(stored_record(memory))
        except (ValidationError, ConflictError) as error:
            # The target refused it (no row was written): name the memory, stop the batch.
            raise type(error)(
                error.field, f"memory {memory.id!r} in {memory.namespace!r}: {error.message}"
            ) from None
        tx.mark_migrated(inserted.seq, self.origin)
        return inserted.seq

    def _remove(self, seqs: list[int]) -> None:
        """Delete the memories this copy wrote that the source no longer holds, as forget
        does (their rows go with them; the scrub runs after the copy)."""
        for start in range(0, len(seqs), BATCH_ROWS):
            with self.target.transaction() as tx:
                for seq in seqs[start : start + BATCH_ROWS]:
                    tx.delete(seq)
                self._drop(tx)
        self.report.removed["memories"] = len(seqs)

    # -- the rows that refer to memories, entities and relations ---------------------------

    def learn_firings(self, tables: dict[str, Table]) -> None:
        """Read what the target knew had fired, and what it still queued, before the
        memories (a memory brought up to date loses its history and its queue with its
        row) and their rows are copied (see :meth:`_delivered_there`). Only the firings of
        the source's queued items are ever looked up: the rest of a big target's history
        (a row for every firing it ever had) is not held, nor the text of a memory edited
        there whose item the source's queue does not hold."""
        instants: set[Any] = set()
        for rows in _batches(self.source, tables["pending_recollections"]):
            for row in rows:
                instants.add(row["fired_at"])
                self.queued_here.add(int(row["seq"]))
        self.fired_there = {
            (int(row["seq"]), row["fired_at"])
            for rows in _batches(self.target, tables["recollection_triggers"])
            for row in rows
            if row["fired_at"] in instants
        }
        self.reminded_there = {
            int(row["seq"]): row["last_fired_at"]
            for rows in _batches(self.target, tables["intentions"])
            for row in rows
            if row["last_fired_at"] is not None
        }
        self.queued_there = {
            (int(row["seq"]), str(row["kind"]), row["fired_at"])
            for rows in _batches(self.target, tables["pending_recollections"])
            for row in rows
            if row["fired_at"] in instants
        }

    def _delivered_there(self, row: dict[str, Any]) -> bool:
        """Whether a queued item (renumbered) is one the target already had: its firing is
        in the target's history, which an earlier run wrote with the item. Missing from
        the target's queue when this run began, it was delivered there: queued again, it
        would come twice. (Missing only since this run replaced its memory, it was not.)"""
        seq = self.replaced.get(int(row["seq"]), int(row["seq"]))
        if (seq, str(row["kind"]), row["fired_at"]) in self.queued_there:
            return False  # waiting there still when the run began
        if row["kind"] == "reminder":
            # Reminders keep no history but the intention's last firing: one no later than
            # that was copied before, or the target has reminded of the intention since.
            last = self.reminded_there.get(seq)
            return last is not None and row["fired_at"] <= last
        return (seq, row["fired_at"]) in self.fired_there

    def _as_edited_there(self, row: dict[str, Any]) -> dict[str, Any]:
        """A queued item (renumbered) of a memory edited in the target since, with its line
        and details made from the target's text: the source's copy holds the older text,
        which the edit removed and pending would hand out."""
        edit = self.edits.get(int(row["seq"]))
        if edit is None:
            return row
        line, details = rewritten_pending(edit, str(row["kind"]), row["details"])
        return {**row, "prompt_line": line, "details": details}

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
        if "up_to_seq" in renumbered:
            renumbered["up_to_seq"] = self.numbers.up_to(int(renumbered["up_to_seq"]))
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
        done = copied = updated = left = gone = 0
        sources: list[dict[str, Any]] = []
        present: dict[tuple[Any, ...], dict[str, Any]] = {}
        if table.mutable:  # the target's rows, to tell which side changed later
            present = {
                tuple(row[name] for name in table.identity): row
                for rows in _batches(self.target, table)
                for row in rows
            }
        textual = table.name in OF_THE_TEXT
        held_before: set[int] = set()
        if table.name in GRAPH_KINDS:  # to tell the rows this run writes from the target's
            held_before = {
                int(row[str(table.generated)])
                for rows in _batches(self.target, table)
                for row in rows
            }
        for rows in _batches(self.source, table):
            # A memory edited in the target since keeps what its text gives (counted as
            # skipped).
            # The rows of an expired memory go with it (not copied, not left behind).
            live = [row for row in rows if "seq" not in row or row["seq"] not in self.expired]
            gone += len(rows) - len(live)
            kept = [row for row in live if not textual or row["seq"] not in self.edited_there]
            renumbered = [self._renumber(table, row) for row in kept]
            written = [row for row in renumbered if row is not None]
            left += len(kept) - len(written)
            if table.name == "pending_recollections":
                written = [
                    self._as_edited_there(row) for row in written if not self._delivered_there(row)
                ]
            inserted = self.target.tables.write(table, written)
            copied += inserted
            if table.mutable and inserted < len(written):
                # A reminder cancelled, a job done, a streak counted in the source since
                # (and not changed in the target later: that stays).
                later = [
                    row
                    for row in written
                    if (there := present.get(tuple(row[name] for name in table.identity)))
                    is not None
                    and _source_newer(table, row, there)
                ]
                updated += self.target.tables.overwrite(table, later)
            done += len(rows)
            if table.generated is not None and table.name != "pending_recollections":
                sources += rows
            self._tick(table.name, done, total)
        self._tick(table.name, done, total)
        self.report.copied[table.name] = copied
        self.report.updated[table.name] = updated
        self.report.skipped[table.name] = done - copied - updated - left - gone
        self.report.left[table.name] = left
        self.report.expired[table.name] = gone
        if table.name == "graph_entities":
            self._map(table, sources, self.numbers.entities)
            self._follow_graph(table, self.numbers.entities, held_before)
        elif table.name == "graph_relations":
            self._map(table, sources, self.numbers.relations)
            self._follow_graph(table, self.numbers.relations, held_before)

    def _follow_graph(self, table: Table, numbers: dict[int, int], held_before: set[int]) -> None:
        """Record in the target's ledger the entities or relations this run wrote (those
        the target did not hold before it), and delete the ones an earlier run wrote that
        the source no longer holds (deleted there since): they would come back otherwise.
        One the target held before any copy is never deleted."""
        kind = GRAPH_KINDS[table.name]
        ours = self.target.tables.migrated_graph(self.origin, kind)
        copied = set(numbers.values())
        self.target.tables.mark_graph(self.origin, kind, sorted(copied - held_before - ours))
        stale = sorted(ours - copied)
        removed = self.target.tables.delete_graph(kind, stale, DROPPED_REASON, self.clock())
        if removed:
            self.dropped = True
        self.report.removed[table.name] = removed

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


def overwrite_conflict(
    table: str, row: Mapping[str, Any], there: Mapping[str, Any], ours: bool
) -> ConflictError | None:
    """The refusal of a copy whose source ``row`` of ``table`` differs from the target's
    ``there`` (``ours``: a copy from this source wrote it), or None when it may replace it.
    Also checked before a SQLite source an older recalld wrote is upgraded (see
    :mod:`recalld.adapters.cli_migrate`)."""
    if table == "tokens" and row["token_hash"] != there["token_hash"]:
        return ConflictError(
            "tokens",
            f"API token {row['id']!r} is another token in the target (its hash differs):"
            " nothing was copied; revoke one of them, or migrate into an empty database",
        )
    if table == "core_memory" and not ours and there["entries"]:
        return ConflictError(
            "core_memory",
            f"core memory {row['target']!r} of namespace {row['namespace']!r} holds"
            f" {len(there['entries'])} other entries in the target, which this copy did"
            " not write: nothing was copied; merge them by hand (recalld core), or"
            " migrate into an empty database",
        )
    return None


def copy_store(
    source: Store,
    target: Store,
    *,
    clock: Clock = utc_now,
    progress: Progress | None = None,
    origin: str | None = None,
    scrub_wait_seconds: float = 2.0,
    waiting: Callable[[], None] | None = None,
    report: CopyReport | None = None,
) -> CopyReport:
    """Copy every memory and everything attached to it from ``source`` into ``target``.

    See the module docstring; safe to run again after an interruption, and a run
    after the source changed brings the target up to date. ``origin`` names the
    source in the target's ledger (default: ``source.location()``). What the run
    removes or replaces is scrubbed before it returns, waiting for the target's
    readers at most ``scrub_wait_seconds`` (else ``report.scrub`` is ``"pending"``
    and the next process to open the target finishes it). While another copy into
    ``target`` runs, this one waits for it to end (``waiting`` is called once when it
    starts to wait). ``report``, when given, is filled as the copy goes: after a run that
    raised, it holds what the run had committed, ``adopted`` memories above all (they
    are this copy's now, so the next run does not count them again).
    """
    if _same_database(source, target):
        # Spelled apart (a relative path and an absolute one, a symlink): a copy into
        # itself would claim every row of the database in its ledger as copied.
        raise ValidationError(
            "to", f"the source and the target are the same database ({target.location()})"
        )
    if source.schema_version != target.schema_version:
        raise ValidationError(
            "to",
            f"the source is at schema version {source.schema_version} and the target at"
            f" {target.schema_version}: upgrade recalld where both are opened",
        )
    with target.tables.copy_lock(waiting or _wait_quietly):
        copier = _Copier(
            source,
            target,
            clock,
            progress,
            origin or source.location(),
            CopyReport() if report is None else report,
        )
        tables = {table.name: table for table in COPIED_TABLES}
        copier.reconcile(tables)
        copier.learn_firings(tables)
        copier.memories()
        for table in COPIED_TABLES:
            if table.name not in RECONCILED:
                copier.table(table)
        # The entities and relations only a left-out text named (OF_THE_TEXT), as forget
        # leaves none: deleted, and scrubbed with the rest.
        if target.tables.drop_orphans(DROPPED_REASON, clock()):
            copier.dropped = True
        target.tables.analyze()
        if copier.dropped:
            copier.report.scrub = "done" if target.scrub(scrub_wait_seconds) else "pending"
    return replace(copier.report)


def _same_database(source: Store, target: Store) -> bool:
    """Whether ``source`` and ``target`` are one database: the same location (a file's
    resolved path, a URL). Two in-memory SQLite databases (``:memory:``) are two
    databases, unless they are the same store."""
    if source is target:
        return True
    here = source.location()
    return here != MEMORY_LOCATION and here == target.location()


def _wait_quietly() -> None:
    """Nothing to say while another copy into the target runs (the library's default)."""
