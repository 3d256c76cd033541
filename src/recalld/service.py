"""MemoryService: the one facade every adapter (CLI, REST, MCP) calls.

It owns the rules: defaults, validation, key upserts, TTLs, namespaces as
walls, which calls may change state. The store below it only keeps records.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from types import TracebackType
from typing import Any

from ulid import ULID

from recalld import _validate as check
from recalld._text import prompt_line, query_terms
from recalld._time import Clock, expiry, parse_instant, to_storage, utc_now
from recalld.config import Settings
from recalld.core_memory import CoreMemory
from recalld.embeddings import Embedder, create_embedder
from recalld.errors import ConflictError, NotFoundError, StorageError, ValidationError
from recalld.model import (
    Explanation,
    ExportRecord,
    Filters,
    Hit,
    ImportLineError,
    ImportReport,
    Memory,
    MemoryPatch,
    NewMemory,
    Page,
    Receipt,
    Stats,
)
from recalld.recollection import Recollector
from recalld.retrieval.hybrid import Mode
from recalld.service_semantic import SemanticMixin
from recalld.store.base import MemoryRecord, Order, Scope, Store, StoreTransaction

__all__ = ["MemoryService"]

logger = logging.getLogger(__name__)

IMPORT_CHUNK_LINES = 500


class MemoryService(SemanticMixin):
    """Long-term memory for agents: remember, recall, list, forget, export and import.

    Build one per process with :meth:`open` (or inject a store), use it as a
    context manager, and pass it to adapters. Every method takes an optional
    ``namespace``; without one, ``settings.namespace`` is used.
    """

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        clock: Clock = utc_now,
        embedder: Embedder | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self._clock = clock
        self._last_purge = float("-inf")
        self.core = CoreMemory(store.core, settings, clock)
        self.recollections = Recollector(
            store.context,
            store,
            settings,
            clock,
            self.put,
            text_similarities=self._context_text_similarities,
        )
        self._maybe_purge()
        self._start_semantic(embedder)

    @classmethod
    def open(cls, settings: Settings | None = None, *, clock: Clock = utc_now) -> MemoryService:
        """Open (creating and migrating if needed) the SQLite database ``settings.db``."""
        from recalld.store.sqlite import SQLiteStore

        settings = settings or Settings()
        store = SQLiteStore(
            settings.db,
            synchronous=settings.synchronous,
            busy_timeout_ms=settings.busy_timeout_ms,
            lock_retry_seconds=settings.lock_retry_seconds,
            fts=settings.fts,
        )
        return cls(store, settings, clock=clock, embedder=create_embedder(settings))

    def close(self) -> None:
        """Stop the worker thread (if any), save the vector index, close the store."""
        self._stop_semantic()
        self.store.close()

    def __enter__(self) -> MemoryService:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- helpers -------------------------------------------------------------

    def _namespace(self, namespace: str | None) -> str:
        return check.namespace(self.settings.namespace if namespace is None else namespace)

    def _namespaces(self, namespaces: Sequence[str] | None) -> list[str]:
        if not namespaces:
            return [self._namespace(None)]
        return [self._namespace(name) for name in namespaces]

    def _maybe_purge(self) -> None:
        """Purge expired memories when the purge interval has passed (on open, then lazily)."""
        if time.monotonic() - self._last_purge < self.settings.purge_interval_seconds:
            return
        self._last_purge = time.monotonic()
        self.purge_expired()

    def _scope(self, namespaces: Sequence[str], filters: Filters | None, now: datetime) -> Scope:
        filters = filters or Filters()

        def instant(name: str) -> datetime | None:
            value = getattr(filters, name)
            return None if value is None else parse_instant(name, value)

        return Scope(
            namespaces=tuple(namespaces),
            now=now,
            kind=filters.kind,
            category=filters.category,
            tags_any=tuple(filters.tags_any),
            tags_all=tuple(filters.tags_all),
            since=instant("since"),
            until=instant("until"),
            created_since=instant("created_since"),
            created_until=instant("created_until"),
            include_expired=filters.include_expired,
        )

    def _record(
        self,
        draft: NewMemory,
        namespace: str,
        now: datetime,
        *,
        id: str,
        created_at: datetime,
        access_count: int = 0,
        last_accessed_at: datetime | None = None,
    ) -> MemoryRecord:
        return MemoryRecord(
            id=id,
            namespace=namespace,
            key=draft.key,
            title=draft.title,
            content=check.content(draft.content, self.settings),
            kind=draft.kind,
            category=draft.category,
            tags=check.tags(draft.tags, self.settings),
            salience=draft.salience,
            source=draft.source,
            speaker=check.speaker(draft.speaker),
            at=parse_instant("at", draft.at) if draft.at is not None else now.astimezone(),
            created_at=created_at,
            updated_at=now,
            expires_at=None if draft.ttl_seconds is None else expiry(now, draft.ttl_seconds),
            place=None if draft.place is None else check.place(draft.place),
            meta=check.meta(draft.meta, self.settings),
            access_count=access_count,
            last_accessed_at=last_accessed_at,
            index_state=self._new_index_state(),
        )

    def _write(
        self, tx: StoreTransaction, draft: NewMemory, namespace: str
    ) -> tuple[Receipt, Memory]:
        now = self._clock()
        if draft.id is not None:
            check.memory_id(draft.id)
        if draft.key is not None:
            existing = tx.find(namespace, key=draft.key)
            if existing is not None and _expired(existing, now):
                tx.delete(existing.seq)
                existing = None
            if existing is not None:
                if draft.id is not None and draft.id != existing.id:
                    raise ConflictError(
                        "id", f"key {draft.key!r} belongs to memory {existing.id}, not {draft.id}"
                    )
                record = self._record(
                    draft,
                    namespace,
                    now,
                    id=existing.id,
                    created_at=existing.created_at,
                    access_count=existing.access_count,
                    last_accessed_at=existing.last_accessed_at,
                )
                record, reindex = self._keep_index_state(record, existing)
                memory = tx.replace(existing.seq, record)
                job_id = self._enqueue(tx, memory, now) if reindex else None
                return _receipt(memory, "overwritten", job_id), memory
        if draft.id is not None:
            taken = tx.find_id_anywhere(draft.id)
            if taken is not None:
                if (
                    taken.namespace == namespace
                    and taken.content == draft.content
                    and taken.key == draft.key
                ):
                    return _receipt(taken, "unchanged"), taken
                raise ConflictError("id", f"id {draft.id!r} is already taken")
        record = self._record(draft, namespace, now, id=draft.id or str(ULID()), created_at=now)
        memory = tx.insert(record)
        return _receipt(memory, "created", self._enqueue(tx, memory, now)), memory

    # -- writes --------------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        namespace: str | None = None,
        id: str | None = None,
        key: str | None = None,
        title: str | None = None,
        kind: str = "note",
        category: str | None = None,
        tags: Sequence[str] = (),
        salience: float | None = None,
        source: str | None = None,
        speaker: str | None = None,
        at: datetime | str | None = None,
        ttl_seconds: float | None = None,
        place: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Receipt:
        """Store a memory durably and return its receipt.

        With ``key``, writing the same key again in the namespace overwrites the
        memory (content and every field, ``updated_at``) and keeps its id, seq
        and ``created_at``. ``place`` is ``{"lat", "lon"}`` or ``{"geohash"}``
        (optionally ``"name"``); ``at`` is ISO 8601 and keeps its offset;
        ``speaker`` is who said or wrote it (searched as its own field).
        """
        draft = check.parse_model(
            NewMemory,
            {
                "content": content,
                "id": id,
                "key": key,
                "title": title,
                "kind": kind,
                "category": category,
                "tags": list(tags),
                "salience": salience,
                "source": source,
                "speaker": speaker,
                "at": at,
                "ttl_seconds": ttl_seconds,
                "place": place,
                "meta": meta if meta is not None else {},
            },
        )
        return self.remember_many([draft], namespace=namespace)[0]

    def remember_many(
        self, drafts: Iterable[NewMemory | dict[str, Any]], *, namespace: str | None = None
    ) -> list[Receipt]:
        """Store several memories in one transaction: all are written, or none."""
        scope_namespace = self._namespace(namespace)
        parsed = [
            draft
            if isinstance(draft, NewMemory)
            else check.parse_model(NewMemory, draft, prefix=f"[{index}].")
            for index, draft in enumerate(drafts)
        ]
        self._maybe_purge()
        with self.store.transaction() as tx:
            return [self._write(tx, draft, scope_namespace)[0] for draft in parsed]

    def put(
        self,
        draft: NewMemory | dict[str, Any],
        *,
        namespace: str | None = None,
        signals: dict[str, bytes] | None = None,
        biometrics: dict[str, float] | None = None,
    ) -> tuple[Receipt, Memory]:
        """Store one memory like :meth:`remember`; return the receipt and the stored memory.

        For callers that must answer with the record as written (it may already
        be expired by the time a separate read would run, with a tiny TTL).
        ``signals`` are derived sensory features (never raw media) and
        ``biometrics`` named readings, stored in the same transaction (see
        :mod:`recalld.recollection`).
        """
        scope_namespace = self._namespace(namespace)
        parsed = draft if isinstance(draft, NewMemory) else check.parse_model(NewMemory, draft)
        self._maybe_purge()
        with self.store.transaction() as tx:
            receipt, memory = self._write(tx, parsed, scope_namespace)
            if signals or biometrics:
                tx.save_signals(memory.seq, signals or {}, biometrics or {})
            return receipt, memory

    def update(self, memory_id: str, *, namespace: str | None = None, **changes: Any) -> Memory:
        """Change only the given fields of a memory; ``None`` clears an optional field.

        ``ttl_seconds`` restarts the expiry from now (``None`` removes it).
        """
        scope_namespace = self._namespace(namespace)
        patch = check.parse_model(MemoryPatch, changes)
        given = patch.model_fields_set
        if not given:
            raise ValidationError("changes", "give at least one field to update")
        if "content" in given and patch.content is None:
            raise ValidationError("content", "must not be empty")
        now = self._clock()
        with self.store.transaction() as tx:
            current = tx.find(scope_namespace, id=memory_id)
            if current is None or _expired(current, now):
                raise NotFoundError(f"no memory with id {memory_id!r} in {scope_namespace!r}")
            draft = NewMemory(
                content=current.content,
                key=current.key,
                title=current.title,
                kind=current.kind,
                category=current.category,
                tags=current.tags,
                salience=current.salience,
                source=current.source,
                speaker=current.speaker,
                at=current.at,
                meta=current.meta,
            )
            draft = draft.model_copy(
                update={name: getattr(patch, name) for name in given if name != "ttl_seconds"}
            )
            record = self._record(
                draft,
                scope_namespace,
                now,
                id=current.id,
                created_at=current.created_at,
                access_count=current.access_count,
                last_accessed_at=current.last_accessed_at,
            )
            if "ttl_seconds" in given:
                ttl = patch.ttl_seconds
                expires_at = None if ttl is None else expiry(now, ttl)
            else:
                expires_at = current.expires_at
            record = _with(record, expires_at=expires_at)
            if "at" in given and patch.at is None:
                record = _with(record, at=None)
            if "place" not in given:
                record = _with(record, place=current.place)
            record, reindex = self._keep_index_state(record, current)
            memory = tx.replace(current.seq, record)
            if reindex:
                self._enqueue(tx, memory, now)
            return memory

    def forget(self, memory_id: str, *, namespace: str | None = None) -> bool:
        """Delete a memory and every trace of it; returns whether it existed.

        The row, its tags, full-text entries, vectors, jobs, signal features,
        trigger history and queued recollections are removed (secure delete
        zeroes the freed pages), its vector is erased from the in-memory and
        saved vector index, and the write-ahead log is checkpointed, so the
        content cannot be read back from the database files.
        """
        scope_namespace = self._namespace(namespace)
        with self.store.transaction() as tx:
            current = tx.find(scope_namespace, id=memory_id)
            if current is None:
                return False
            tx.delete(current.seq)
        self._retriever.after_forget()
        try:
            self.store.checkpoint()
        except StorageError as error:
            logger.warning(
                "forgot %s but could not truncate the write-ahead log yet (%s);"
                " its old pages are overwritten at the next checkpoint",
                memory_id,
                error,
            )
        return True

    def _context_text_similarities(
        self, text: str, namespace: str, seqs: Sequence[int], nearest: int
    ) -> dict[int, float]:
        return self._retriever.text_similarities(text, namespace, seqs, nearest)

    def purge_expired(self) -> int:
        """Delete every memory whose TTL has passed; returns how many were removed."""
        removed = self.store.purge_expired(self._clock())
        if removed:
            logger.info("purged %d expired memories", removed)
        return removed

    # -- reads ---------------------------------------------------------------

    def get(
        self,
        id: str | None = None,
        *,
        key: str | None = None,
        seq: int | None = None,
        namespace: str | None = None,
    ) -> Memory:
        """One memory by exactly one of id, key or seq; raises :class:`NotFoundError`."""
        given = [
            name for name, value in (("id", id), ("key", key), ("seq", seq)) if value is not None
        ]
        if len(given) != 1:
            raise ValidationError("id", "give exactly one of id, key or seq")
        scope_namespace = self._namespace(namespace)
        self._maybe_purge()
        scope = self._scope([scope_namespace], None, self._clock())
        memory = self.store.get(scope, id=id, key=key, seq=seq)
        if memory is None:
            raise NotFoundError(
                f"no memory with {given[0]} {(id or key or seq)!r} in {scope_namespace!r}"
            )
        return memory

    def search(
        self,
        query: str,
        *,
        filters: Filters | None = None,
        limit: int = 10,
        namespace: str | None = None,
        mode: Mode = "hybrid",
        min_score: float | None = None,
    ) -> list[Hit]:
        """The memories that best match ``query``, best first; changes nothing.

        ``hybrid`` (default) pools the keyword index's matches (FTS5, else LIKE)
        with the nearest vectors when an embedder is configured; memories not
        yet embedded are still found by keyword. ``keyword`` and ``vector`` use
        one channel. A reranker scores every candidate: ``score`` is a
        calibrated probability in [0, 1] that the memory answers the query
        (see the README), and only hits scoring at least ``min_score``
        (default: ``settings.min_score``) come back, so a query about nothing
        stored returns nothing. Near-duplicates come back once, with
        ``channels["duplicates"]`` saying how many others they stand for. Any
        string is safe: it is reduced to word terms before it reaches the
        keyword index.
        """
        scope_namespace = self._namespace(namespace)
        check.limit(limit, self.settings)
        threshold = check.min_score(min_score)
        if mode not in ("hybrid", "keyword", "vector"):
            raise ValidationError("mode", "must be hybrid, keyword or vector")
        self._maybe_purge()
        scope = self._scope([scope_namespace], filters, self._clock())
        terms = query_terms(query, self.settings.max_query_terms)
        if threshold is None:
            threshold = self.settings.min_score
        return [
            Hit(
                memory=found.memory,
                score=found.score,
                channels=found.channels,
                backends=found.backends,
                prompt_line=prompt_line(found.memory),
            )
            for found in self._retriever.retrieve(scope, query, terms, limit, mode, threshold)
        ]

    def explain(
        self,
        query: str,
        memory_id: str,
        *,
        filters: Filters | None = None,
        limit: int = 10,
        namespace: str | None = None,
        mode: Mode = "hybrid",
        min_score: float | None = None,
    ) -> Explanation:
        """Why :meth:`search` with these arguments does or does not return ``memory_id``.

        Reports the stage that dropped it (a filter or expiry, the candidate
        pool, the threshold, near-duplicate collapse, the limit), its rank and
        score among the candidates, every channel and feature value and each
        feature's share of the score. A memory of another namespace is "not
        visible": :class:`NotFoundError`, exactly as for an id that does not
        exist. Changes nothing.
        """
        from recalld.retrieval.explain import explain

        scope_namespace = self._namespace(namespace)
        check.limit(limit, self.settings)
        threshold = check.min_score(min_score)
        if mode not in ("hybrid", "keyword", "vector"):
            raise ValidationError("mode", "must be hybrid, keyword or vector")
        now = self._clock()
        scope = self._scope([scope_namespace], filters, now)
        memory = None
        if isinstance(memory_id, str) and memory_id:
            everything = Scope(namespaces=(scope_namespace,), now=now, include_expired=True)
            memory = self.store.get(everything, id=memory_id)
        if memory is None:
            raise NotFoundError(f"memory {memory_id!r} is not visible in {scope_namespace!r}")
        terms = query_terms(query, self.settings.max_query_terms)
        return explain(
            self._retriever,
            memory,
            scope,
            query,
            terms,
            mode,
            self.settings.min_score if threshold is None else threshold,
            limit,
        )

    def recall(
        self,
        query: str,
        *,
        filters: Filters | None = None,
        limit: int = 10,
        namespace: str | None = None,
        mode: Mode = "hybrid",
        min_score: float | None = None,
    ) -> list[Hit]:
        """Like :meth:`search`, and counts an access of every memory returned."""
        hits = self.search(
            query,
            filters=filters,
            limit=limit,
            namespace=namespace,
            mode=mode,
            min_score=min_score,
        )
        if not hits:
            return hits
        now = self._clock()
        with self.store.transaction() as tx:
            tx.touch([hit.memory.seq for hit in hits], now)
        return [
            hit.model_copy(
                update={
                    "memory": hit.memory.model_copy(
                        update={
                            "access_count": hit.memory.access_count + 1,
                            "last_accessed_at": now,
                        }
                    )
                }
            )
            for hit in hits
        ]

    def list_memories(
        self,
        *,
        filters: Filters | None = None,
        limit: int = 50,
        cursor: str | None = None,
        namespace: str | None = None,
    ) -> Page:
        """Memories newest first (by creation), a page at a time."""
        return self._page("created", filters, limit, cursor, namespace)

    def recent(
        self,
        *,
        filters: Filters | None = None,
        limit: int = 10,
        cursor: str | None = None,
        namespace: str | None = None,
    ) -> Page:
        """Memories most recently created or updated first."""
        return self._page("updated", filters, limit, cursor, namespace)

    def _page(
        self,
        order: Order,
        filters: Filters | None,
        limit: int,
        cursor: str | None,
        namespace: str | None,
    ) -> Page:
        scope_namespace = self._namespace(namespace)
        check.limit(limit, self.settings)
        after = None if cursor is None else _decode_cursor(cursor, order)
        self._maybe_purge()
        scope = self._scope([scope_namespace], filters, self._clock())
        memories = self.store.list_page(scope, order=order, limit=limit + 1, after=after)
        next_cursor = None
        if len(memories) > limit:
            memories = memories[:limit]
            last = memories[-1]
            value = last.created_at if order == "created" else last.updated_at
            next_cursor = _encode_cursor(order, to_storage(value), last.seq)
        return Page(memories=memories, next_cursor=next_cursor)

    def stats(self, namespaces: Sequence[str] | None = None) -> Stats:
        """Counts by category, kind and namespace over ``namespaces`` (default: the current one)."""
        scoped = self._namespaces(namespaces)
        self._maybe_purge()
        now = self._clock()
        counts = self.store.counts(self._scope(scoped, None, now))
        return Stats(
            count=counts.count,
            by_category=counts.by_category,
            by_kind=counts.by_kind,
            by_namespace=counts.by_namespace,
            fts=self.store.fts_available,
            search_backend="fts" if self.store.fts_available else "like",
            db_size_bytes=self.store.size_bytes(),
            schema_version=self.store.schema_version,
            expired_pending_purge=counts.expired,
        )

    def namespaces(self) -> list[str]:
        """Every namespace that holds memories (for admin commands; crosses the walls)."""
        return self.store.namespaces()

    # -- export / import -----------------------------------------------------

    def export(self, namespaces: Sequence[str] | None = None) -> Iterator[str]:
        """Yield one JSON line per live memory of ``namespaces`` (default: the current one)."""
        scoped = self._namespaces(namespaces)
        scope = self._scope(scoped, None, self._clock())
        for memory in self.store.iterate(scope):
            record = ExportRecord.model_validate(memory.model_dump(exclude={"seq", "index_state"}))
            yield record.model_dump_json()

    def import_lines(
        self,
        lines: Iterable[str],
        *,
        namespace: str | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Import JSONL written by :meth:`export`; idempotent by id.

        A record goes to its own ``namespace`` field, or to ``namespace`` (default:
        the current one) when it has none. An id already present is overwritten
        only by a record with a newer ``updated_at``. A bad line is reported with
        its number and nothing of it is written; the other lines still import.
        """
        default_namespace = self._namespace(namespace)
        report = ImportReport()
        chunk: list[tuple[int, ExportRecord | ImportLineError]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            chunk.append((number, self._parse_import_line(number, line)))
            if len(chunk) >= IMPORT_CHUNK_LINES:
                self._import_chunk(chunk, default_namespace, report)
                if progress is not None:
                    progress(len(chunk))
                chunk = []
        if chunk:
            self._import_chunk(chunk, default_namespace, report)
            if progress is not None:
                progress(len(chunk))
        return report

    def _parse_import_line(self, number: int, line: str) -> ExportRecord | ImportLineError:
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            return ImportLineError(line=number, error=f"not JSON: {error.msg}")
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
        with self.store.transaction() as tx:
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
        namespace = check.namespace(record.namespace or default_namespace)
        check.memory_id(record.id)
        stored = MemoryRecord(
            id=record.id,
            namespace=namespace,
            key=record.key,
            title=record.title,
            content=check.content(record.content, self.settings),
            kind=record.kind,
            category=record.category,
            tags=check.tags(record.tags, self.settings),
            salience=record.salience,
            source=record.source,
            speaker=check.speaker(record.speaker),
            at=None if record.at is None else parse_instant("at", record.at),
            created_at=parse_instant("created_at", record.created_at),
            updated_at=parse_instant("updated_at", record.updated_at),
            expires_at=None
            if record.expires_at is None
            else parse_instant("expires_at", record.expires_at),
            place=None if record.place is None else check.place(record.place),
            meta=check.meta(record.meta, self.settings),
            access_count=record.access_count,
            last_accessed_at=(
                None
                if record.last_accessed_at is None
                else parse_instant("last_accessed_at", record.last_accessed_at)
            ),
            index_state=self._new_index_state(),
        )
        existing = tx.find_id_anywhere(record.id)
        if existing is not None:
            if existing.namespace != namespace:
                raise ConflictError("id", f"id {record.id!r} is already taken")
            if stored.updated_at <= existing.updated_at:
                return "unchanged"
            holder = None if record.key is None else tx.find(namespace, key=record.key)
            if holder is not None and holder.id != record.id:
                raise ConflictError("key", f"key {record.key!r} belongs to memory {holder.id}")
            self._enqueue(tx, tx.replace(existing.seq, stored), stored.updated_at)
            return "updated"
        if record.key is not None:
            holder = tx.find(namespace, key=record.key)
            if holder is not None:
                raise ConflictError("key", f"key {record.key!r} belongs to memory {holder.id}")
        self._enqueue(tx, tx.insert(stored), stored.updated_at)
        return "created"


def _expired(memory: Memory, now: datetime) -> bool:
    return memory.expires_at is not None and memory.expires_at <= now


def _receipt(memory: Memory, status: str, job_id: str | None = None) -> Receipt:
    return Receipt.model_validate(
        {
            "id": memory.id,
            "seq": memory.seq,
            "namespace": memory.namespace,
            "status": status,
            "created": status == "created",
            "index_state": memory.index_state,
            "job_id": job_id,
        }
    )


def _with(record: MemoryRecord, **changes: Any) -> MemoryRecord:
    return replace(record, **changes)


def _encode_cursor(order: Order, value: str, seq: int) -> str:
    raw = json.dumps([order, value, seq], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str, order: Order) -> tuple[str, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        kind, value, seq = json.loads(raw)
    except (binascii.Error, ValueError, TypeError):
        raise ValidationError("cursor", "is not a cursor this listing returned") from None
    if (
        kind != order
        or not isinstance(value, str)
        or not isinstance(seq, int)
        or not 0 <= seq < 2**63  # SQLite integers are 64-bit
    ):
        raise ValidationError("cursor", "is not a cursor this listing returned")
    return value, seq
