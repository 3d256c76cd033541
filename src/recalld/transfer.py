"""Export to and import from JSON lines: memories, core memory and the declared graph.

An export is one JSON object per line: every live memory of the namespaces
(every field but ``seq``, in seq order), then per namespace its core-memory
targets (``{"type": "recalld.core", "namespace", "target", "entries"}``), the
entities declared through the knowledge tools (``{"type": "recalld.entity",
"namespace", "name", "entity_type", "observations": [memory ids]}``) and the
declared relations (``{"type": "recalld.relation", "namespace", "from", "to",
"relation_type"}``). An experience's senses follow its memories' lines
(``{"type": "recalld.senses", "namespace", "id", "signals": {"image"|"audio":
base64 of the derived features}, "biometrics": {name: reading}}``): the features,
not the media, which recalld never keeps. A reminder's memory line comes after the
namespace's core memory, followed by its triggers and state (``{"type":
"recalld.intention", "namespace", "id", "state", "repeat", "min_interval_seconds",
"zone", "scheduled", "created_at", "expires_at", "next_due", "triggers"}``; its
firing history starts again), then the reminders fired and not delivered yet
(``{"type": "recalld.pending", "namespace", "id", "fired_at", "score", "channels",
"details"}``: queued again by the import that writes their reminder or moves it to
``done``, once each, not by a later one). What the worker extracted is not exported (nor
the tombstones of deleted entities): it is re-extracted from the memories after an import.

Import reads the same lines (a leading byte-order mark is ignored). A memory
line is idempotent by ``id`` (an id already present is overwritten only by a
record with a newer ``updated_at``, or, without one, by one differing in any field
but its times and counts; a second line with the id of an earlier one in the same
namespace is refused, as it would overwrite the first on every import); a line
without ``id`` is a new memory with the line's times, access count and expiry,
unless it repeats a stored one (with a ``key`` and an ``updated_at`` not newer than
its memory's, it leaves that memory as it is). A new memory's line that has already expired is
``skipped`` (the purge would delete it at once).
Core entries already there are kept, and an entry that does not fit its target's
limit is refused with its line. A bad line is reported with its number and nothing
of it is written, while the other lines still import (in chunks of
:data:`IMPORT_CHUNK_LINES`, one transaction each).
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from recalld import _validate as check
from recalld._text import shown
from recalld._time import Clock
from recalld.config import Settings
from recalld.errors import ConflictError, ValidationError
from recalld.graph.names import check_entity_name, check_entity_type, check_predicate, entity_key
from recalld.knowledge_bounds import check_entity_room, check_observation_edit
from recalld.model import (
    ExportRecord,
    ImportLineError,
    ImportReport,
    Memory,
    NewMemory,
)
from recalld.store.base import (
    UNREADABLE_META_KEY,
    Scope,
    Store,
    StoreTransaction,
    stored_record,
)
from recalld.transfer_core import restore_core_entries
from recalld.transfer_intentions import (
    checked_intention,
    intention_line,
    pending_line,
    queue_pending,
)
from recalld.transfer_lines import (
    CORE_LINE,
    ENTITY_LINE,
    INTENTION_LINE,
    PENDING_LINE,
    RELATION_LINE,
    SENSES_LINE,
    ExportedSeqs,
    kept_unstated,
    legacy_place,
    line_text,
    rerun_chunk,
    stopped_import,
    structure_kind,
    unchanged,
)
from recalld.transfer_records import imported_record, line_times
from recalld.transfer_senses import import_senses
from recalld.writing import INTENTION_KIND, expired, find_key

if TYPE_CHECKING:
    from datetime import datetime

    from recalld.core_memory import CoreMemory
    from recalld.indexing import Indexing
    from recalld.scrubbing import Scrubber
    from recalld.store.intentions import IntentionRecord
    from recalld.writing import Writer

__all__ = [
    "CORE_LINE",
    "ENTITY_LINE",
    "IMPORT_CHUNK_LINES",
    "INTENTION_LINE",
    "RELATION_LINE",
    "SENSES_LINE",
    "MayWrite",
    "Transfer",
    "restore_core_entries",
]

IMPORT_CHUNK_LINES = 500
GRAPH_PAGE = 500

# Whether the importing caller may write a namespace (a token's scopes over HTTP).
MayWrite = Callable[[str], bool]


@dataclass(frozen=True)
class _Line:
    """A parsed line: its number, its kind, its namespace and its content."""

    number: int
    kind: str
    namespace: str
    value: Any


class Transfer:
    """JSONL export and import over one store (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        indexing: Indexing,
        scrubber: Scrubber,
        writer: Writer,
        core: Callable[[], CoreMemory],
    ) -> None:
        self._store = store
        self._settings = settings
        self._clock = clock
        self._indexing = indexing
        self._scrubber = scrubber
        self._writer = writer
        self._core = core

    # -- export --------------------------------------------------------------

    def export(
        self, scope: Scope, on_problem: Callable[[str], None] | None = None
    ) -> Iterator[str]:
        """Every line of the export of ``scope``'s namespaces (see the module docstring).

        A row the store could not render as it is (its meta comes back as text
        under ``recalld_unreadable_meta``) still gets its line; ``on_problem`` is
        told which memory and why, so a backup is never silently partial.
        """
        page: list[Memory] = []
        # The memories the export holds: another writer may go on while it runs, and a
        # memory it does not hold named by an entity or intention line would make the
        # importer refuse that line, losing an entity declared before the export began.
        # Their seqs, not the newest: on PostgreSQL a lower seq may commit later.
        held = ExportedSeqs()
        # A reminder's memory line goes with its intention line, where an import writes it
        # (in seq order, the copy's export listed it after the others: another file).
        reminders: dict[int, str] = {}
        for memory in self._store.iterate(scope):
            held.add(memory.seq)
            page.append(memory)
            if len(page) >= GRAPH_PAGE:
                yield from self._export_senses(page)
                page = []
            unreadable = memory.meta.get(UNREADABLE_META_KEY)
            if unreadable is not None and on_problem is not None:
                reason = unreadable.get("reason") if isinstance(unreadable, dict) else None
                on_problem(
                    f"memory {memory.id} (namespace {memory.namespace}): {reason}; its meta is"
                    f" exported as text under {UNREADABLE_META_KEY!r}"
                )
            # The same fields, in the same order, as ExportRecord (which import parses).
            line = memory.model_dump_json(exclude={"seq", "index_state"})
            if memory.kind == INTENTION_KIND:
                reminders[memory.seq] = line
                continue
            yield line
        yield from self._export_senses(page)
        for namespace in scope.namespaces:
            yield from self._export_core(namespace)
            yield from self._export_intentions(namespace, scope, held, reminders)
            yield from self._export_graph(namespace, scope, held)
        # A reminder's memory whose triggers were not read (forgotten meanwhile) is still
        # every live memory's line, as before.
        yield from reminders.values()

    def _export_senses(self, memories: Sequence[Memory]) -> Iterator[str]:
        """The senses lines of ``memories`` that have any (after their memory lines)."""
        by_seq = {memory.seq: memory for memory in memories}
        seqs = sorted(by_seq)
        signals = self._store.context.signals(seqs)
        biometrics = self._store.context.biometrics(seqs)
        for seq in seqs:
            if seq not in signals and seq not in biometrics:
                continue
            memory = by_seq[seq]
            encoded = {
                channel: base64.b64encode(data).decode("ascii")
                for channel, data in sorted(signals.get(seq, {}).items())
            }
            yield _line(
                SENSES_LINE,
                namespace=memory.namespace,
                id=memory.id,
                signals=encoded,
                biometrics=biometrics.get(seq, {}),
            )

    def _export_intentions(
        self, namespace: str, scope: Scope, held: ExportedSeqs, reminders: dict[int, str]
    ) -> Iterator[str]:
        """The triggers and state of the namespace's intentions whose memory is exported
        (in ``held``: none written after the memory lines were read), each after its
        memory's line (taken from ``reminders``), then the reminders they queued that
        were not delivered yet."""
        exported: set[int] = set()
        for row in reversed(self._store.intentions.select(namespace, None, now=scope.now)):
            if expired(row.memory, scope.now) or row.memory.seq not in held:
                continue  # its memory line was not exported either
            memory_line = reminders.pop(row.memory.seq, None)
            if memory_line is not None:
                yield memory_line
            yield json.dumps(intention_line(namespace, row), ensure_ascii=False)
            exported.add(row.memory.seq)
        # Fired and not delivered yet: the copy hands them out (their state says fired).
        for item in self._store.context.queued_reminders(namespace, scope.now):
            if item.memory.seq in exported:
                yield json.dumps(pending_line(namespace, item), ensure_ascii=False)

    def _export_core(self, namespace: str) -> Iterator[str]:
        for target in ("user", "memory"):
            entries = self._store.core.entries(namespace, target)
            if entries:
                yield _line(CORE_LINE, namespace=namespace, target=target, entries=entries)

    def _export_graph(self, namespace: str, scope: Scope, held: ExportedSeqs) -> Iterator[str]:
        """The declared entities (naming only observations the export holds, in ``held``)
        and the declared relations of ``namespace`` between entities it holds (one declared
        while the pages were read may be left out, and a relation naming it would be a
        line the importer refuses)."""
        graph = self._store.graph
        after: tuple[str, int] | None = None
        exported: set[str] = set()
        while True:
            page = graph.list_entities(
                namespace, scope.now, query=None, type=None, limit=GRAPH_PAGE, after=after
            )
            if not page:
                break
            after = (page[-1].key, page[-1].id)
            declared = [record for record in page if record.declared]
            exported.update(record.key for record in declared)
            observed = graph.observation_memories(
                namespace, [record.id for record in declared], scope.now
            )
            seqs = sorted({seq for rows in observed.values() for seq, _ in rows if seq in held})
            memories = self._store.semantic.visible_memories(
                Scope(namespaces=(namespace,), now=scope.now), seqs
            )
            for record in declared:
                yield _line(
                    ENTITY_LINE,
                    namespace=namespace,
                    name=record.name,
                    entity_type=record.type,
                    observations=[
                        memories[seq].id
                        for seq, _ in observed.get(record.id, [])
                        if seq in memories
                    ],
                )
        after_id = 0
        while True:
            relations = graph.relations(
                namespace,
                scope.now,
                entity_ids=None,
                predicate=None,
                limit=GRAPH_PAGE,
                after_id=after_id,
            )
            if not relations:
                break
            after_id = relations[-1].id
            for relation in relations:
                ends = (relation.subject_key, relation.object_key)
                if relation.declared and all(key in exported for key in ends):
                    yield _line(
                        RELATION_LINE,
                        namespace=namespace,
                        **{"from": relation.subject, "to": relation.object},
                        relation_type=relation.predicate,
                    )

    # -- import --------------------------------------------------------------

    def import_lines(
        self,
        lines: Iterable[str] | Iterable[bytes],
        default_namespace: str,
        progress: Callable[[int], None] | None = None,
        *,
        may_write: MayWrite | None = None,
        report: ImportReport | None = None,
    ) -> ImportReport:
        """Import the lines of an export (see the module docstring); ``progress`` is told how
        many lines each chunk held, ``may_write`` which namespaces the caller may write."""
        report = report or ImportReport()
        later: list[_Line] = []
        # A reminder's memory lines, written with their recalld.intention line (never a
        # trigger-less intention memory; see _import_structures).
        held: dict[tuple[str, str], _Line] = {}
        chunk: list[_Line | ImportLineError] = []
        # The line each (namespace, id) was first read on: a later line with it would
        # overwrite the first on every run (never idempotent), so it is refused.
        first_line: dict[tuple[str, str], int] = {}
        # The memories this import skipped as expired: their senses lines go with them.
        expired: set[tuple[str, str]] = set()
        for number, given in enumerate(lines, start=1):
            try:
                line = check.line_text(given)
            except ValidationError as error:  # not text, or bytes that are not UTF-8
                chunk.append(ImportLineError(line=number, error=str(error)))
                continue
            if number == 1:
                line = line.removeprefix("\ufeff")  # a byte-order mark: no part of the record
            if not line.strip():
                continue
            parsed = self._parse_line(number, line, default_namespace, may_write)
            if isinstance(parsed, _Line) and parsed.kind != "memory":
                later.append(parsed)  # after every memory: observations name memory ids
                continue
            if isinstance(parsed, _Line) and parsed.value.id is not None:
                where = (parsed.namespace, parsed.value.id)
                earlier = first_line.setdefault(where, number)
                if earlier != number:
                    parsed = ImportLineError(
                        line=number,
                        error=f"id: {parsed.value.id!r} repeats line {earlier} (namespace"
                        f" {parsed.namespace!r}): only the first line with an id is imported",
                    )
                elif parsed.value.kind == INTENTION_KIND:
                    held[where] = parsed
                    continue
            chunk.append(parsed)
            if len(chunk) >= IMPORT_CHUNK_LINES:
                with stopped_import(chunk, report):
                    self._import_chunk(chunk, report, expired)
                if progress is not None:
                    progress(len(chunk))
                chunk = []
        if chunk:
            with stopped_import(chunk, report):
                self._import_chunk(chunk, report, expired)
            if progress is not None:
                progress(len(chunk))
        self._import_structures(later, report, held, expired)
        if report.updated or self._store.pending_scrubs():
            # The records it replaced leave the files too, and so do expired ones whose id
            # or key a created line took (deleted without anything counted as updated).
            self._scrubber.after_drop()
        report.order_errors()
        return report

    def _parse_line(
        self, number: int, line: str, default_namespace: str, may_write: MayWrite | None
    ) -> _Line | ImportLineError:
        try:
            data = check.load_json(line, "line")
        except ValidationError as error:
            return ImportLineError(line=number, error=str(error))
        if not isinstance(data, dict):
            return ImportLineError(line=number, error="a line must be a JSON object")
        surrogate = check.unpaired_surrogate(data)
        if surrogate is not None:
            return ImportLineError(line=number, error=f"{surrogate}: unpaired surrogate")
        target = data.get("namespace")
        if target is not None and not isinstance(target, str):
            # Not read as the default namespace: that would write where the line never said.
            return ImportLineError(
                line=number, error=f"namespace: must be text, got {type(target).__name__}"
            )
        # An empty namespace is refused below, not read as the default: that would write
        # (and replace a memory by its id) where the line never said.
        namespace = default_namespace if target is None else target
        try:
            check.namespace(namespace)
        except ValidationError as error:
            return ImportLineError(line=number, error=str(error))
        if may_write is not None and not may_write(namespace):
            return ImportLineError(line=number, error=f"namespace: may not write to {namespace!r}")
        kind = data.get("type")
        if kind is None:
            try:
                return _Line(number, "memory", namespace, check.parse_model(ExportRecord, data))
            except ValidationError as error:
                return ImportLineError(line=number, error=str(error))
        try:
            return _Line(number, structure_kind(data), namespace, data)
        except ValidationError as error:
            return ImportLineError(line=number, error=str(error))

    def _import_chunk(
        self,
        chunk: Sequence[_Line | ImportLineError],
        report: ImportReport,
        expired: set[tuple[str, str]] | None = None,
    ) -> None:
        """Import the memory lines of ``chunk`` in one transaction (run again whole on a
        PostgreSQL conflict, counted once); the (namespace, id) of each one skipped as
        expired goes into ``expired``."""
        rerun_chunk(functools.partial(self._write_chunk, chunk), report, expired)

    def _write_chunk(
        self,
        chunk: Sequence[_Line | ImportLineError],
        report: ImportReport,
        expired: set[tuple[str, str]] | None,
    ) -> None:
        with self._store.transaction() as tx:
            for parsed in chunk:
                if isinstance(parsed, ImportLineError):
                    report.refuse(parsed)
                    continue
                try:
                    outcome = self._import_record(tx, parsed.value, parsed.namespace)
                except (ValidationError, ConflictError) as error:
                    report.refuse(ImportLineError(line=parsed.number, error=str(error)))
                    continue
                report.count(outcome, "memories")
                if outcome == "skipped" and expired is not None and parsed.value.id is not None:
                    expired.add((parsed.namespace, parsed.value.id))

    def _import_record(self, tx: StoreTransaction, record: ExportRecord, namespace: str) -> str:
        if record.id is None:
            return self._import_new(tx, record, namespace)
        now = self._clock()
        check.memory_id(record.id)
        stored = imported_record(
            record, record.id, namespace, self._settings, now, self._indexing.new_index_state()
        )
        # Ids are unique per namespace: one taken elsewhere is no obstacle (nor a clue).
        existing = _live(tx, tx.find(namespace, id=record.id), now)
        stored = kept_unstated(record, stored, existing)
        if existing is not None:
            if (existing.kind == INTENTION_KIND) != (stored.kind == INTENTION_KIND):
                # As update: a reminder's memory stays one, and no memory becomes one.
                raise ValidationError(
                    "kind", f"memory {record.id} cannot change kind to or from 'intention'"
                )
            if unchanged(existing, stored, has_time=record.updated_at is not None):
                return "unchanged"
        if existing is None and stored.expires_at is not None and stored.expires_at <= now:
            return "skipped"  # as a line without an id: a row no read shows, for the purge
        holder = None if record.key is None else _live(tx, find_key(tx, namespace, record.key), now)
        if holder is not None and holder.id != record.id:
            raise ConflictError("key", f"key {record.key!r} belongs to memory {holder.id}")
        if existing is not None:
            check_observation_edit(tx.graph, existing.seq, existing.content, stored.content)
            replaced = tx.replace(existing.seq, stored)
            # Queued now, whatever time the record says it was written (a clock ahead).
            self._indexing.enqueue(tx, replaced, now, previous=existing)
            tx.dropped_content("import", now)
            return "updated"
        self._indexing.enqueue(tx, tx.insert(stored), now)
        return "created"

    def _import_new(self, tx: StoreTransaction, record: ExportRecord, namespace: str) -> str:
        """A line without an id: written like ``remember`` (a repeat is skipped), then
        given the line's own times and counts (``remember`` cannot take them); a line
        that expired already is skipped, as the purge would remove it."""
        if check.kind(record.kind, as_given=True) == INTENTION_KIND:
            # A reminder's memory comes with its id and its intention line (an export);
            # " intention" is trimmed to it by the write below.
            raise ValidationError("kind", "kind 'intention' needs the reminder's id")
        kept = line_times(record)
        expires_at = kept.get("expires_at")
        if expires_at is not None and expires_at <= self._clock():
            return "skipped"
        # As remember reads it (a kind as long as an older version stored is for lines
        # with an id, an export's): refused naming the field, never a crash.
        draft = check.parse_model(
            NewMemory,
            {
                "content": record.content,
                "key": record.key,
                "title": record.title,
                "kind": record.kind,
                "category": record.category,
                "tags": record.tags,
                "salience": record.salience,
                "source": record.source,
                "speaker": record.speaker,
                "at": record.at,
                "place": None if record.place is None else legacy_place(record.place),
                "meta": record.meta,
            },
        )
        if record.key is not None and self._holds_already(tx, draft, namespace, kept):
            return "unchanged"  # a re-import of the same file changes nothing
        receipt, memory = self._writer.write(
            tx, draft, namespace, dedupe=True, expires_at=expires_at
        )
        if receipt.status in ("created", "overwritten") and kept:
            if "updated_at" in kept and "created_at" not in kept:
                # As a line with an id: never created after it was last updated.
                kept["created_at"] = min(memory.created_at, kept["updated_at"])
            tx.replace(memory.seq, replace(stored_record(memory), **kept))
        return {"created": "created", "overwritten": "updated", "duplicate": "skipped"}.get(
            receipt.status, "unchanged"
        )

    def _holds_already(
        self, tx: StoreTransaction, draft: NewMemory, namespace: str, kept: dict[str, Any]
    ) -> bool:
        """Whether the memory under ``draft``'s key already says everything the line says
        (a line without ``at`` keeps the stored one): writing it would only move its
        ``updated_at`` and queue it again, as every re-import of a keyed line did; or the
        line's ``updated_at`` (in ``kept``) is not newer, as for a line with an id."""
        existing = None if draft.key is None else find_key(tx, namespace, draft.key)
        now = self._clock()
        if existing is None or expired(existing, now):
            return False
        # Every field checked first (naming the field and its limit), as for a line with an
        # id: a refused line is not reported unchanged.
        written = self._writer.record_over(draft, namespace, now, existing)
        if "updated_at" in kept and kept["updated_at"] <= existing.updated_at:
            return True
        stored = stored_record(existing)
        written = replace(
            written,
            at=stored.at if draft.at is None else written.at,
            updated_at=stored.updated_at,
            expires_at=kept.get("expires_at"),
            index_state=stored.index_state,
        )
        return written == stored

    def _import_structures(
        self,
        lines: Sequence[_Line],
        report: ImportReport,
        held: dict[tuple[str, str], _Line],
        expired: set[tuple[str, str]],
    ) -> None:
        """Senses, reminders (each with its held memory line), core entries, then declared
        entities, then relations (which name entities); then the held memory lines of
        reminders already stored, and a refusal for the others (no trigger came with them).
        The senses of a memory skipped as ``expired`` are skipped with it, and so is an
        entity's observation of it: they were refused as an error ("no memory"), the whole
        entity with them, when a memory expired between export and import (pass d69)."""
        kinds = (SENSES_LINE, INTENTION_LINE, PENDING_LINE, CORE_LINE, ENTITY_LINE, RELATION_LINE)
        order = {kind: position for position, kind in enumerate(kinds)}
        created: set[tuple[str, str]] = set()  # the reminders this import wrote
        pending_lines: dict[tuple[str, str, datetime], int] = {}  # their first line
        for line in sorted(lines, key=lambda item: (order[item.kind], item.number)):
            memory_line = None
            if line.kind == INTENTION_LINE and isinstance(line.value.get("id"), str):
                memory_line = held.pop((line.namespace, line.value["id"]), None)
            try:
                with stopped_import([line], report, in_file_order=False):
                    if line.kind == SENSES_LINE:
                        memory_id = line.value.get("id")
                        if isinstance(memory_id, str) and (line.namespace, memory_id) in expired:
                            report.count("skipped", "senses")
                        else:
                            import_senses(self._store, line.namespace, line.value, report)
                    elif line.kind == INTENTION_LINE:
                        # Checked before its memory line is written: a malformed trigger line
                        # leaves no trigger-less reminder memory behind.
                        checked = self._checked_intention(line)
                        skipped = report.skipped
                        if memory_line is not None:
                            self._import_chunk([memory_line], report)
                            memory_line = None
                        if report.skipped > skipped:  # its memory expired since: so did it
                            report.count("skipped", "intentions")
                        elif self._save_intention(line, checked, report):
                            created.add((line.namespace, checked[0]))
                    elif line.kind == PENDING_LINE:
                        # Only with its reminder written by this import: once handed out here,
                        # an import of the same file again must not queue it again.
                        queued = queue_pending(
                            self._store,
                            line.namespace,
                            line.value,
                            created=created,
                            first_line=pending_lines,
                            number=line.number,
                            settings=self._settings,
                        )
                        report.count("created" if queued else "unchanged", "queued reminders")
                    elif line.kind == CORE_LINE:
                        self._import_core(line, report)
                    elif line.kind == ENTITY_LINE:
                        self._import_entity(line, report, expired)
                    else:
                        self._import_relation(line, report)
            except ValidationError as error:
                report.refuse(ImportLineError(line=line.number, error=str(error)))
            if memory_line is not None:
                report.refuse(
                    ImportLineError(
                        line=memory_line.number,
                        error=f"kind: not imported: its {INTENTION_LINE} line (line"
                        f" {line.number}) was refused",
                    )
                )
        for (namespace, memory_id), line in sorted(held.items(), key=lambda item: item[1].number):
            if self._store.intentions.get(namespace, memory_id, now=self._clock()) is not None:
                with stopped_import([line], report, in_file_order=False):
                    self._import_chunk([line], report)  # a stored reminder's memory, updated
            else:
                report.refuse(
                    ImportLineError(
                        line=line.number,
                        error="kind: a memory of kind 'intention' comes with its"
                        f" {INTENTION_LINE} line (a reminder's triggers); none was imported",
                    )
                )

    def _checked_intention(self, line: _Line) -> tuple[str, IntentionRecord]:
        """The memory id and the reminder an intention line holds (nothing is written)."""
        return checked_intention(line.value, line.namespace, self._settings)

    def _save_intention(
        self, line: _Line, checked: tuple[str, IntentionRecord], report: ImportReport
    ) -> bool:
        """Store the reminder :meth:`_checked_intention` read, unless it is stored already;
        a stored one still active takes the line's end (``cancelled``, ``done``,
        ``expired``): the reminder ended where the newer export was made, and an intention
        never becomes active again. Whether it fired nowhere but there (created, or moved
        to ``done`` here): its queued items are then this import's to queue."""
        memory_id, record = checked
        now = self._clock()
        with self._store.transaction() as tx:
            memory = tx.find(line.namespace, id=memory_id)
            if memory is None or expired(memory, now):  # an expired one is gone, as its intention
                raise ValidationError("id", f"no memory {memory_id!r} in {line.namespace!r}")
            if memory.kind != INTENTION_KIND:
                # A note given triggers would fire as a reminder while staying a note.
                raise ValidationError(
                    "id",
                    f"memory {memory_id!r} is of kind {memory.kind!r}: triggers belong to a"
                    " reminder's memory (kind 'intention')",
                )
            # Two imports of one file at once: the second waits here, then finds it stored.
            tx.serialise("intention", line.namespace, memory_id)
            stored = self._store.intentions.get(line.namespace, memory_id, now=now)
            if stored is None:
                tx.save_intention(memory.seq, record)
        if stored is None:
            report.count("created", "intentions")
            return True
        if stored.state == "active" and record.state != "active":
            if record.state == "cancelled":  # as cancel: its queued reminders go too
                self._store.intentions.cancel(line.namespace, memory_id, now)
            else:
                ended = record.state
                self._store.intentions.session(
                    lambda session: session.set_state(stored.memory.seq, ended, now)
                )
            report.count("updated", "intentions")
            return record.state == "done"
        report.count("unchanged", "intentions")
        return False

    def _import_core(self, line: _Line, report: ImportReport) -> None:
        target = line.value.get("target")
        entries = line.value.get("entries")
        if target not in ("user", "memory"):
            raise ValidationError("target", f"must be 'user' or 'memory', got {shown(target)}")
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise ValidationError("entries", "must be a list of strings")
        restore_core_entries(
            self._core(),
            target,
            entries,
            line.namespace,
            report,
            position=lambda _index: {"line": line.number},
            field="entries",
        )

    def _import_entity(
        self, line: _Line, report: ImportReport, expired: set[tuple[str, str]]
    ) -> None:
        """Declare a line's entity with its observations; one naming a memory this import
        skipped as ``expired`` is left out (it refused the whole entity: adversarial pass
        d69), one naming no memory refuses the line."""
        name = check_entity_name(line_text(line.value, "name"), "name")
        entity_type = check_entity_type(line_text(line.value, "entity_type"), "entity_type")
        observations = line.value.get("observations", [])
        if not isinstance(observations, list) or not all(
            isinstance(item, str) for item in observations
        ):
            raise ValidationError("observations", "must be a list of memory ids")
        now = self._clock()
        with self._store.transaction() as tx:
            record, created = tx.graph.declare_entity(line.namespace, name, entity_type, now)
            linked, new = {seq for seq, _ in tx.graph.observations(record.id, None)}, {}
            for memory_id in observations:
                if (line.namespace, memory_id) in expired:
                    continue
                memory = tx.find(line.namespace, id=memory_id)
                if memory is None:
                    raise ValidationError(
                        "observations", f"no memory {memory_id!r} in {line.namespace!r}"
                    )
                if memory.seq not in linked:
                    new[memory.seq] = memory.content
            held = tx.graph.observation_characters(record.id)  # the knowledge tools' bound
            check_entity_room("observations", name, held, list(new.values()))
            for seq in new:
                tx.graph.link_observation(record.id, seq)
        report.count("created" if created else "unchanged", "entities")

    def _import_relation(self, line: _Line, report: ImportReport) -> None:
        predicate = check_predicate(line_text(line.value, "relation_type"), "relation_type")
        names = {field: line_text(line.value, field) for field in ("from", "to")}
        now = self._clock()
        with self._store.transaction() as tx:
            # As the knowledge tools do: an end deleted between its read and the relation's
            # write would fail the line with the database's error, not "no entity named".
            tx.graph.lock_entities(line.namespace, (entity_key(name) for name in names.values()))
            ends = []
            for field, name in names.items():
                found = tx.graph.find_entity(line.namespace, entity_key(name), now)
                if found is None:
                    raise ValidationError(field, f"no entity named {name!r}")
                ends.append(found)
            created = tx.graph.declare_relation(
                line.namespace, ends[0].id, predicate, ends[1].id, now
            )
        report.count("created" if created else "unchanged", "relations")


def _live(tx: StoreTransaction, found: Memory | None, now: datetime) -> Memory | None:
    """``found`` unless it expired: one not purged yet is deleted, so its id or key is free
    again, as for a write (not a conflict with a memory no read shows)."""
    if found is None or not expired(found, now):
        return found
    tx.delete(found.seq)
    tx.dropped_content("import", now)
    return None


def _line(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields}, ensure_ascii=False)
