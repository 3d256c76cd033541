"""Export to and import from JSON lines: every field needed for a lossless round trip.

Import is idempotent by id: an id already present is overwritten only by a
record with a newer ``updated_at``; a bad line is reported with its number and
nothing of it is written, while the other lines still import (in chunks of
:data:`IMPORT_CHUNK_LINES`, one transaction each).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from recalld import _validate as check
from recalld._time import parse_instant
from recalld.config import Settings
from recalld.errors import ConflictError, ValidationError
from recalld.indexing import Indexing
from recalld.model import ExportRecord, ImportLineError, ImportReport
from recalld.scrubbing import Scrubber
from recalld.store.base import UNREADABLE_META_KEY, MemoryRecord, Scope, Store, StoreTransaction

__all__ = ["IMPORT_CHUNK_LINES", "Transfer"]

IMPORT_CHUNK_LINES = 500


class Transfer:
    """JSONL export and import over one store."""

    def __init__(
        self, store: Store, settings: Settings, indexing: Indexing, scrubber: Scrubber
    ) -> None:
        self._store = store
        self._settings = settings
        self._indexing = indexing
        self._scrubber = scrubber

    def export(
        self, scope: Scope, on_problem: Callable[[str], None] | None = None
    ) -> Iterator[str]:
        """One JSON line per memory visible to ``scope``, in seq order.

        A row the store could not render as it is (its meta comes back as text
        under ``recalld_unreadable_meta``) still gets its line; ``on_problem`` is
        told which memory and why, so a backup is never silently partial.
        """
        for memory in self._store.iterate(scope):
            unreadable = memory.meta.get(UNREADABLE_META_KEY)
            if unreadable is not None and on_problem is not None:
                reason = unreadable.get("reason") if isinstance(unreadable, dict) else None
                on_problem(
                    f"memory {memory.id} (namespace {memory.namespace}): {reason}; its meta is"
                    f" exported as text under {UNREADABLE_META_KEY!r}"
                )
            # The same fields, in the same order, as ExportRecord (which import parses).
            yield memory.model_dump_json(exclude={"seq", "index_state"})

    def import_lines(
        self,
        lines: Iterable[str],
        default_namespace: str,
        progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Import JSONL written by :meth:`export` (see the module docstring)."""
        report = ImportReport()
        chunk: list[tuple[int, ExportRecord | ImportLineError]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            chunk.append((number, self._parse_line(number, line)))
            if len(chunk) >= IMPORT_CHUNK_LINES:
                self._import_chunk(chunk, default_namespace, report)
                if progress is not None:
                    progress(len(chunk))
                chunk = []
        if chunk:
            self._import_chunk(chunk, default_namespace, report)
            if progress is not None:
                progress(len(chunk))
        if report.updated:
            self._scrubber.after_drop()  # the records it replaced leave the files too
        return report

    def _parse_line(self, number: int, line: str) -> ExportRecord | ImportLineError:
        try:
            data = check.load_json(line, "line")
        except ValidationError as error:
            return ImportLineError(line=number, error=str(error))
        if not isinstance(data, dict):
            return ImportLineError(line=number, error="a line must be a JSON object")
        try:
            return check.parse_model(ExportRecord, data)
        except ValidationError as error:
            return ImportLineError(line=number, error=str(error))

    def _import_chunk(
        self,
        chunk: Sequence[tuple[int, ExportRecord | ImportLineError]],
        default_namespace: str,
        report: ImportReport,
    ) -> None:
        with self._store.transaction() as tx:
            for number, parsed in chunk:
                if isinstance(parsed, ImportLineError):
                    report.errors.append(parsed)
                    continue
                try:
                    outcome = self._import_record(tx, parsed, default_namespace)
                except (ValidationError, ConflictError) as error:
                    report.errors.append(ImportLineError(line=number, error=str(error)))
                    continue
                setattr(report, outcome, getattr(report, outcome) + 1)

    def _import_record(
        self, tx: StoreTransaction, record: ExportRecord, default_namespace: str
    ) -> str:
        settings = self._settings
        namespace = check.namespace(record.namespace or default_namespace)
        check.memory_id(record.id)
        stored = MemoryRecord(
            id=record.id,
            namespace=namespace,
            key=check.optional_name(record.key, "key"),
            title=check.optional_text(record.title, "title"),
            content=check.content(record.content, settings),
            kind=check.name_text(record.kind, "kind"),
            category=check.optional_name(record.category, "category"),
            tags=check.tags(record.tags, settings),
            salience=record.salience,
            source=check.optional_name(record.source, "source"),
            speaker=check.speaker(record.speaker),
            at=None if record.at is None else parse_instant("at", record.at),
            created_at=parse_instant("created_at", record.created_at),
            updated_at=parse_instant("updated_at", record.updated_at),
            expires_at=None
            if record.expires_at is None
            else parse_instant("expires_at", record.expires_at),
            place=None if record.place is None else check.place(record.place),
            meta=check.meta(record.meta, settings),
            access_count=record.access_count,
            last_accessed_at=(
                None
                if record.last_accessed_at is None
                else parse_instant("last_accessed_at", record.last_accessed_at)
            ),
            index_state=self._indexing.new_index_state(),
        )
        # Ids are unique per namespace: one taken elsewhere is no obstacle (nor a clue).
        existing = tx.find(namespace, id=record.id)
        if existing is not None:
            if stored.updated_at <= existing.updated_at:
                return "unchanged"
            holder = None if record.key is None else tx.find(namespace, key=record.key)
            if holder is not None and holder.id != record.id:
                raise ConflictError("key", f"key {record.key!r} belongs to memory {holder.id}")
            self._indexing.enqueue(tx, tx.replace(existing.seq, stored), stored.updated_at)
            tx.dropped_content("import", stored.updated_at)
            return "updated"
        if record.key is not None:
            holder = tx.find(namespace, key=record.key)
            if holder is not None:
                raise ConflictError("key", f"key {record.key!r} belongs to memory {holder.id}")
        self._indexing.enqueue(tx, tx.insert(stored), stored.updated_at)
        return "created"
