"""The default store: one SQLite file (via apsw, which bundles a current SQLite).

Why apsw rather than the stdlib ``sqlite3``: the stdlib links the system
library (3.40 on Debian 12), which lacks FTS5's ``secure-delete`` (3.42+) that
``forget`` relies on to leave no trace in the full-text index, and often cannot
load extensions. apsw ships SQLite with FTS5 and exposes transactions
explicitly, so every write is a ``BEGIN IMMEDIATE`` ... ``COMMIT`` we control.

Durability and concurrency: WAL, ``synchronous=FULL`` by default (fsync per commit),
``busy_timeout``, and a bounded retry with backoff around lock waits, so several
processes share one file and no caller sees ``database is locked``; a connection a thread.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import apsw

from recalld._text import content_hash, normalized_content
from recalld._time import to_storage
from recalld.errors import ConflictError, StorageError
from recalld.model import Memory
from recalld.store.base import (
    BackupResult,
    Beside,
    ChangeFeed,
    Counts,
    KeywordBackend,
    Match,
    MemoryRecord,
    Order,
    Scope,
    SourceTurn,
)
from recalld.store.context import rewritten_pending
from recalld.store.file_modes import warn_if_readable_by_others
from recalld.store.grams import GRAMS_COLUMN, record_grams
from recalld.store.intentions import IntentionRecord, ReminderDraft
from recalld.store.migrations import FTS_TABLE, MIGRATIONS, ensure_fts, fts_table_exists
from recalld.store.schema_guard import newer_schema_error, refuse_newer_schema
from recalld.store.semantic import VectorSearch
from recalld.store.sql import (
    HELD_NAMESPACES,
    counts_of,
    counts_sql,
    escape_like,
    source_window,
)
from recalld.store.sqlite_connection import SQLiteDatabase, storage_error
from recalld.store.sqlite_context import SQLiteContext, save_signals
from recalld.store.sqlite_core import SQLiteCore
from recalld.store.sqlite_file import check_path, copy_database, schema_versions
from recalld.store.sqlite_graph import SQLiteGraph, enqueue_graph
from recalld.store.sqlite_graph_tombstones import drop_stale_tombstones
from recalld.store.sqlite_graph_writes import SQLiteGraphTransaction
from recalld.store.sqlite_intentions import SQLiteIntentions, queue_reminder, save_intention
from recalld.store.sqlite_retrieval import SQLiteRetrieval, text_match
from recalld.store.sqlite_rows import (
    SELECT_COLUMNS,
    WRITE_COLUMNS,
    decode_meta,
    record_values,
    row_to_memory,
    scope_sql,
    substring_pattern,
)
from recalld.store.sqlite_scrub import SQLiteScrub, record_drop
from recalld.store.sqlite_semantic import (
    SQLiteSemantic,
    drop_vectors,
    enqueue_embedding,
    queue_again,
)
from recalld.store.sqlite_tables import SQLiteLedger, SQLiteTables
from recalld.store.sqlite_tokens import SQLiteTokens

# The share of the table (one in this many rows) from which counting a scope reads the
# table through rather than by the namespace index (see SQLiteStore.counts).
SCAN_SHARE = 4

__all__ = ["SQLiteStore"]

# The companions (and other branches) imported these under their old private names.
_row_to_memory = row_to_memory
_scope_sql = scope_sql

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Room kept beside the database so that a forget can still run on a full disk.
DEFAULT_RESERVE_BYTES = 1024 * 1024

# BM25 weights for the FTS columns title, content, tags, speaker, place name, key.
BM25_WEIGHTS = "2.0, 1.0, 1.0, 1.0, 1.0, 1.0"


class _Transaction(SQLiteLedger):
    """Primitive operations on one connection inside ``BEGIN IMMEDIATE``."""

    def __init__(self, connection: apsw.Connection) -> None:
        self._connection = connection

    def _one(self, sql: str, params: dict[str, Any]) -> Memory | None:
        row = self._connection.execute(sql, params).fetchone()
        return None if row is None else row_to_memory(row)

    def find(
        self, namespace: str, *, id: str | None = None, key: str | None = None
    ) -> Memory | None:
        if id is not None:
            return self._one(
                f"SELECT {SELECT_COLUMNS} FROM memories m WHERE m.namespace = :ns AND m.id = :id",
                {"ns": namespace, "id": id},
            )
        return self._one(
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE m.namespace = :ns AND m.key = :key",
            {"ns": namespace, "key": key},
        )

    def _write_tags(self, seq: int, tags: Sequence[str]) -> None:
        self._connection.execute("DELETE FROM memory_tags WHERE seq = ?", (seq,))
        if tags:
            self._connection.executemany(
                "INSERT INTO memory_tags(seq, tag) VALUES (?, ?)", [(seq, tag) for tag in tags]
            )

    def _read(self, seq: int) -> Memory:
        memory = self._one(
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE m.seq = :seq", {"seq": seq}
        )
        if memory is None:  # pragma: no cover - the row was written in this transaction
            raise StorageError(f"row {seq} vanished inside its own transaction")
        return memory

    def insert(self, record: MemoryRecord) -> Memory:
        placeholders = ", ".join("?" for _ in WRITE_COLUMNS)
        try:
            self._connection.execute(
                f"INSERT INTO memories({', '.join(WRITE_COLUMNS)}, content_hash, {GRAMS_COLUMN})"
                f" VALUES ({placeholders}, ?, ?)",
                (*record_values(record), content_hash(record.content), record_grams(record)),
            )
        except apsw.ConstraintError as error:
            if "key" in str(error):
                raise ConflictError(
                    "key", f"key {record.key!r} already names a memory in {record.namespace!r}"
                ) from error
            raise ConflictError(
                "id", f"a memory with id {record.id!r} already exists in {record.namespace!r}"
            ) from error
        seq = int(self._connection.last_insert_rowid())
        self._write_tags(seq, record.tags)
        return self._read(seq)

    def serialise(self, *name: str) -> None:
        pass  # BEGIN IMMEDIATE: this transaction is the file's one writer already

    def replace(self, seq: int, record: MemoryRecord) -> Memory:
        assignments = ", ".join(f"{name} = ?" for name in WRITE_COLUMNS)
        self._connection.execute(
            f"UPDATE memories SET {assignments}, content_hash = ?, {GRAMS_COLUMN} = ?"
            f" WHERE seq = ?",
            (*record_values(record), content_hash(record.content), record_grams(record), seq),
        )
        self._write_tags(seq, record.tags)
        memory = self._read(seq)
        queued = self._connection.execute(
            "SELECT id, kind, details FROM pending_recollections WHERE seq = ?", (seq,)
        ).fetchall()
        for item, kind, details in queued:
            line, rewritten = rewritten_pending(
                memory, str(kind), None if details is None else json.loads(str(details))
            )
            self._connection.execute(
                "UPDATE pending_recollections SET prompt_line = ?, details = ? WHERE id = ?",
                (line, None if rewritten is None else json.dumps(rewritten), item),
            )
        return memory

    def delete(self, seq: int) -> None:
        deleted = self._connection.execute(
            "DELETE FROM memories WHERE seq = ? RETURNING namespace", (seq,)
        ).fetchall()
        if deleted:
            drop_stale_tombstones(self._connection, str(deleted[0][0]), seq)

    def find_duplicate(
        self,
        namespace: str,
        content: str,
        now: datetime,
        at: datetime | None = None,
        speaker: str | None = None,
        accept: Callable[[Memory], bool] | None = None,
    ) -> Memory | None:
        # Without INDEXED BY the planner takes (namespace, key IS NULL): every keyless
        # memory of the namespace, so each write of a batch cost a scan (quadratic ingest).
        rows = self._connection.execute(
            f"SELECT {SELECT_COLUMNS} FROM memories m INDEXED BY memories_content_hash"
            " WHERE m.namespace = :ns AND m.content_hash = :hash AND m.key IS NULL"
            " AND (m.expires_at IS NULL OR m.expires_at > :now)"
            " AND (:at IS NULL OR m.at_utc = :at) AND (:speaker IS NULL OR m.speaker = :speaker)"
            " ORDER BY m.seq",
            {
                "ns": namespace,
                "hash": content_hash(content),
                "now": to_storage(now),
                "at": None if at is None else to_storage(at),
                "speaker": speaker,
            },
        ).fetchall()
        wanted = normalized_content(content)
        for row in rows:
            memory = row_to_memory(row)
            if normalized_content(memory.content) == wanted and (accept is None or accept(memory)):
                return memory
        return None

    def dropped_content(self, reason: str, now: datetime) -> None:
        record_drop(self._connection, reason, now)

    def extend_expiry(self, seq: int, expires_at: datetime | None, now: datetime) -> bool:
        changed: list[tuple[Any, ...]] = self._connection.execute(
            "UPDATE memories SET expires_at = :expires, updated_at = :now WHERE seq = :seq"
            " AND expires_at IS NOT NULL AND (:expires IS NULL OR expires_at < :expires)"
            " RETURNING seq",
            {
                "seq": seq,
                "expires": None if expires_at is None else to_storage(expires_at),
                "now": to_storage(now),
            },
        ).fetchall()
        return bool(changed)

    def touch(self, seqs: Sequence[int], now: datetime) -> None:
        stamp = to_storage(now)
        self._connection.executemany(
            "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ?"
            " WHERE seq = ?",
            [(stamp, seq) for seq in seqs],
        )

    def enqueue_embedding(self, seq: int, model: str, now: datetime) -> str:
        waiting = queue_again(self._connection, "embed", seq, model, now)
        return waiting or enqueue_embedding(self._connection, seq, model, now)

    def save_signals(
        self, seq: int, features: dict[str, bytes], biometrics: dict[str, float]
    ) -> None:
        save_signals(self._connection, seq, features, biometrics)

    def save_intention(self, seq: int, record: IntentionRecord) -> None:
        save_intention(self._connection, seq, record)

    def queue_reminder(self, reminder: ReminderDraft, fired_at: datetime) -> None:
        queue_reminder(self._connection, reminder, fired_at)

    def enqueue_graph(self, seq: int, model: str, now: datetime) -> str:
        waiting = queue_again(self._connection, "graph", seq, model, now)
        return waiting or enqueue_graph(self._connection, seq, model, now)

    def drop_vectors(self, seq: int, now: datetime, own_model: str | None) -> None:
        drop_vectors(self._connection, seq, now, own_model)

    @property
    def graph(self) -> SQLiteGraphTransaction:
        """The knowledge graph's writes inside this transaction."""
        return SQLiteGraphTransaction(self._connection)


class SQLiteStore(SQLiteTokens):
    """Memories in one SQLite file; safe to share between threads and processes.

    :meth:`compact_after_forget` folds the write-ahead log into the database
    file and truncates it; with ``secure_delete`` (freed pages zeroed) and
    FTS5's ``secure-delete`` the forgotten content is then not in the files.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        synchronous: str = "FULL",
        busy_timeout_ms: int = 5_000,
        lock_retry_seconds: float = 30.0,
        fts: bool = True,
        reserve_bytes: int = DEFAULT_RESERVE_BYTES,
        create_directory: bool = True,
        on_migration: Callable[[int, int], None] | None = None,
    ) -> None:
        """Open (creating and migrating if needed) the database at ``path``.

        ``create_directory=False`` refuses a path whose directory does not exist
        (see :func:`recalld.store.sqlite_file.check_path`, which also refuses
        files that are not recalld databases). ``on_migration(done, total)`` is
        told before each pending migration runs and once they are all done.
        """
        self._given = Path(path)
        # Absolute once, here: the files recalld keeps beside the database (the disk-full
        # reserve, vector graphs, the migration lock) stayed relative to the working
        # directory, so a chdir put new ones elsewhere (SQLite's private databases excepted).
        private = str(self._given) in (":memory:", "", ".")
        self.path = self._given if private else Path(os.path.abspath(self._given))
        self._database = SQLiteDatabase(
            self.path,
            synchronous=synchronous,
            busy_timeout_ms=busy_timeout_ms,
            lock_retry_seconds=lock_retry_seconds,
        )
        self._created = check_path(  # as given: its messages name what the user wrote
            self._given, create_directory=create_directory, busy_timeout_ms=busy_timeout_ms
        )
        if not self._created:
            warn_if_readable_by_others(self.path)
        self._schema_version = self._migrate(on_migration)
        self._fts_available = self._prepare_fts() if fts else False
        self._database.refresh_statistics_on_open()
        self._semantic = SQLiteSemantic(self._database)
        self._core = SQLiteCore(self._database)
        self._graph = SQLiteGraph(self._database)
        self._context = SQLiteContext(self._database)
        self._intentions = SQLiteIntentions(self._database)
        self._tables = SQLiteTables(self._database)
        self._retrieval = SQLiteRetrieval(self._database, fts_available=self._fts_available)
        self._scrub = SQLiteScrub(self._database, reserve_bytes)
        self._scrub.ensure_reserve()
        if not self._fts_available:
            logger.warning("FTS5 is not in use for %s: keyword search uses LIKE", self.path)

    # -- connections -------------------------------------------------------

    def _connection(self) -> apsw.Connection:
        return self._database.connection()

    def _retrying(self, operation: Callable[[apsw.Connection], T]) -> T:
        """Run ``operation``, retrying lock waits with jittered backoff up to a bound."""
        return self._database.run(operation)

    def pragmas(self) -> dict[str, Any]:
        """The settings this store runs its connections with, as SQLite reports them."""
        names = ("journal_mode", "synchronous", "secure_delete", "busy_timeout", "foreign_keys")
        values: dict[str, Any] = {}
        with self._database.use() as connection:
            for name in names:
                row = connection.execute(f"PRAGMA {name}").fetchone()
                values[name] = None if row is None else row[0]
        return values

    @property
    def busy_timeout_ms(self) -> int:
        """How long one statement waits for a lock before the bounded retry takes over."""
        return self._database.busy_timeout_ms

    def _migrate(self, on_migration: Callable[[int, int], None] | None) -> int:
        known = len(MIGRATIONS)

        def step(connection: apsw.Connection) -> int:
            applied = schema_versions(connection)
            newer = max(applied, default=0)
            if newer > known:
                raise newer_schema_error(self.path, newer, known)
            if applied >= set(range(1, known + 1)):
                return known  # nothing to do: no write transaction for a read-only command

            # A migration may rebuild a table others reference (SQLite's documented
            # procedure): enforcement is off while it runs, and every migration checks
            # the references it leaves before it commits.
            connection.execute("PRAGMA foreign_keys = OFF")
            try:
                return migrate(connection)
            finally:
                connection.execute("PRAGMA foreign_keys = ON")

        def migrate(connection: apsw.Connection) -> int:
            version = 0
            pending = len(set(range(1, known + 1)) - schema_versions(connection))
            done = 0
            for number, migration in enumerate(MIGRATIONS, start=1):
                try:  # BEGIN inside: an interrupt just after it still rolls back
                    connection.execute("BEGIN IMMEDIATE")
                    connection.execute(
                        "CREATE TABLE IF NOT EXISTS schema_migrations"
                        " (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
                    )
                    refuse_newer_schema(self.path, connection.execute, known)
                    already = connection.execute(
                        "SELECT 1 FROM schema_migrations WHERE version = ?", (number,)
                    ).fetchone()
                    if already is None:
                        if on_migration is not None:
                            on_migration(done, pending)
                        migration(connection.execute)
                        done += 1
                        broken = connection.execute("PRAGMA foreign_key_check").fetchall()
                        if broken:
                            raise StorageError(
                                f"migration {number} left {len(broken)} dangling references"
                            )
                        connection.execute(
                            "INSERT INTO schema_migrations(version, applied_at)"
                            " VALUES (?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                            (number,),
                        )
                        connection.execute(f"PRAGMA user_version = {number}")
                        logger.info("applied migration %d to %s", number, self.path)
                    connection.execute("COMMIT")
                except BaseException:
                    if not connection.get_autocommit():
                        connection.execute("ROLLBACK")
                    raise
                version = number
            if on_migration is not None and done:
                on_migration(done, pending)
            return version

        return self._retrying(step)

    def _prepare_fts(self) -> bool:
        def step(connection: apsw.Connection) -> bool:
            if fts_table_exists(connection.execute):
                return True
            try:  # BEGIN inside: an interrupt just after it still rolls back
                connection.execute("BEGIN IMMEDIATE")
                if not fts_table_exists(connection.execute):
                    ensure_fts(connection.execute)
                connection.execute("COMMIT")
            except apsw.SQLError as error:
                connection.execute("ROLLBACK")
                if "fts5" in str(error).lower():
                    return False
                raise
            except BaseException:
                if not connection.get_autocommit():
                    connection.execute("ROLLBACK")
                raise
            return True

        return self._retrying(step)

    # -- protocol ------------------------------------------------------------

    @property
    def keyword_backend(self) -> KeywordBackend:
        """``fts5`` when the FTS5 index is in use, else ``like``."""
        return "fts5" if self._fts_available else "like"

    @property
    def fts_available(self) -> bool:
        """Whether keyword search runs on FTS5 (kept for callers of the SQLite store)."""
        return self._fts_available

    @property
    def index_location(self) -> Path | None:
        """The database path: derived files go beside it (None for ``:memory:``)."""
        return None if self._database.private else self.path

    @property
    def vector_search(self) -> VectorSearch | None:
        """None: each process keeps its own vector index, caught up from ``vector_log``."""
        return None

    @property
    def change_feed(self) -> ChangeFeed | None:
        """None: SQLite cannot push changes, so watchers poll the versions."""
        return None

    @property
    def tables(self) -> SQLiteTables:
        """Whole-table access, for ``recalld migrate``."""
        return self._tables

    @property
    def schema_version(self) -> int:
        return self._schema_version

    @property
    def created(self) -> bool:
        """Whether this open created the database (no file, or an empty one, was there)."""
        return self._created

    def location(self) -> str:
        """Where the database is, for people: the file's absolute path."""
        return str(self.path) if str(self.path) == ":memory:" else str(self.path.resolve())

    def backup(self, destination: Path) -> BackupResult:
        """Copy the whole database to the new file ``destination`` while others keep writing
        (SQLite's online backup API; see :mod:`recalld.store.sqlite_file`)."""

        def step(connection: apsw.Connection) -> BackupResult:
            return copy_database(connection, Path(destination), self.path)

        return self._retrying(step)

    @property
    def semantic(self) -> SQLiteSemantic:
        return self._semantic

    @property
    def retrieval(self) -> SQLiteRetrieval:
        """Candidate rows, neighbours, term counts and the index's tokenizer (recall)."""
        return self._retrieval

    @property
    def context(self) -> SQLiteContext:
        """Signal features, trigger history and pending recollections (issue 6)."""
        return self._context

    @property
    def core(self) -> SQLiteCore:
        """Core-memory persistence (see :mod:`recalld.core_memory`)."""
        return self._core

    @property
    def intentions(self) -> SQLiteIntentions:
        """Intentions, their triggers and streaks (issue 17)."""
        return self._intentions

    @property
    def graph(self) -> SQLiteGraph:
        """The knowledge graph and its extraction queue (issue 12)."""
        return self._graph

    @contextmanager
    def transaction(self) -> Iterator[_Transaction]:
        # close() waits for it (counted as running); an interrupt after BEGIN rolls back.
        with self._database.use() as connection:
            try:
                self._retrying(self._database.begin)
                yield _Transaction(connection)
                self._retrying(lambda connection: connection.execute("COMMIT"))
            except apsw.Error as error:
                system_errno = int(connection.system_errno)  # before the rollback's own call
                if not connection.get_autocommit():
                    connection.execute("ROLLBACK")
                raise storage_error(error, system_errno, self.path) from error
            except BaseException:
                if not connection.get_autocommit():
                    connection.execute("ROLLBACK")
                raise
            finally:
                self._database.writing_done()
        self._database.after_commit(connection)

    def count_accesses(self, seqs: Sequence[int], now: datetime) -> None:
        # Access counts need no fsync of their own (0.7-1 ms of every recall with hits here).
        self._database.write(
            lambda connection: _Transaction(connection).touch(seqs, now), durable=False
        )

    def _read(self, sql: str, params: dict[str, Any] | tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._database.read(sql, params)

    def get(
        self,
        scope: Scope,
        *,
        id: str | None = None,
        key: str | None = None,
        seq: int | None = None,
    ) -> Memory | None:
        params: dict[str, Any] = {}
        where = scope_sql(scope, params)
        if id is not None:
            params["id"] = id
            where += " AND m.id = :id"
        elif key is not None:
            params["key"] = key
            where += " AND m.key = :key"
        else:
            params["seq"] = seq
            where += " AND m.seq = :seq"
        rows = self._read(f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where}", params)
        return row_to_memory(rows[0]) if rows else None

    def search(self, scope: Scope, text: str, terms: Sequence[str], limit: int) -> list[Match]:
        if terms and self._fts_available:
            return self._search_fts(scope, terms, limit)
        patterns = list(terms) if terms else [substring_pattern(text)]
        return self._search_like(scope, [pattern for pattern in patterns if pattern], limit)

    def _search_fts(self, scope: Scope, terms: Sequence[str], limit: int) -> list[Match]:
        params: dict[str, Any] = {
            "match": text_match(terms),
            "limit": limit,
        }
        where = scope_sql(scope, params)
        sql = (
            f"SELECT {SELECT_COLUMNS}, bm25({FTS_TABLE}, {BM25_WEIGHTS}) AS rank"
            f" FROM {FTS_TABLE} JOIN memories m ON m.seq = {FTS_TABLE}.rowid"
            f" WHERE {FTS_TABLE} MATCH :match AND {where}"
            " ORDER BY rank LIMIT :limit"
        )
        rows = self._read(sql, params)
        if not rows:
            return []
        best = max(-float(rows[0][-1]), 1e-9)
        matches = []
        for row in rows:
            strength = max(0.0, -float(row[-1]))
            # Half absolute (BM25 saturation), half relative to this query's best hit:
            # BM25 alone is near 0 in tiny collections where every term is common.
            keyword = 0.5 * strength / (strength + 1.0) + 0.5 * min(1.0, strength / best)
            matches.append(Match(memory=row_to_memory(row[:-1]), keyword=keyword, backend="fts5"))
        return matches

    def _search_like(self, scope: Scope, patterns: Sequence[str], limit: int) -> list[Match]:
        if not patterns:
            return []
        params: dict[str, Any] = {"limit": limit}
        where = scope_sql(scope, params)
        parts = []
        for index, pattern in enumerate(patterns):
            params[f"p{index}"] = f"%{escape_like(pattern)}%"
            like = f"LIKE :p{index} ESCAPE '\\'"
            # Tags are matched one by one, not through their JSON text (whose quotes and
            # commas are no part of any tag).
            parts.append(
                f"((m.content {like}) OR (coalesce(m.title, '') {like}) OR EXISTS (SELECT 1"
                f" FROM memory_tags t WHERE t.seq = m.seq AND t.tag {like})"
                f" OR (coalesce(m.speaker, '') {like}) OR (coalesce(m.place_name, '') {like})"
                f" OR (coalesce(m.key, '') {like}))"
            )
        matched = " + ".join(parts)
        sql = (
            f"SELECT {SELECT_COLUMNS}, ({matched}) AS matched FROM memories m"
            f" WHERE {where} AND ({matched}) > 0"
            " ORDER BY matched DESC, m.updated_at DESC, m.seq DESC LIMIT :limit"
        )
        total = float(len(patterns))
        return [
            Match(memory=row_to_memory(row[:-1]), keyword=float(row[-1]) / total, backend="like")
            for row in self._read(sql, params)
        ]

    def list_page(
        self, scope: Scope, *, order: Order, limit: int, after: tuple[datetime, int] | None
    ) -> list[Memory]:
        column = "created_at" if order == "created" else "updated_at"
        params: dict[str, Any] = {"limit": limit}
        where = scope_sql(scope, params)
        if after is not None:
            params["after_value"], params["after_seq"] = to_storage(after[0]), after[1]
            where += f" AND (m.{column}, m.seq) < (:after_value, :after_seq)"
        sql = (
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where}"
            f" ORDER BY m.{column} DESC, m.seq DESC LIMIT :limit"
        )
        return [row_to_memory(row) for row in self._read(sql, params)]

    def counts(self, scope: Scope) -> Counts:
        params: dict[str, Any] = {"now": to_storage(scope.now)}
        where = scope_sql(replace(scope, include_expired=True), params)
        # SQLite reaches the namespaces' rows by an index on namespace, one random row read
        # each (the category and kind are in the row): over most of the table that was
        # about four times slower than reading the table through. Both counts below come
        # from indexes alone (a few milliseconds at 50,000 memories).
        named: dict[str, Any] = {}
        only_namespaces = Scope(namespaces=scope.namespaces, now=scope.now, include_expired=True)
        held = self._read(
            f"SELECT count(*) FROM memories m WHERE {scope_sql(only_namespaces, named)}", named
        )
        total = self._read("SELECT count(*) FROM memories", ())
        most = int(held[0][0]) * SCAN_SHARE >= int(total[0][0])
        table = "memories m NOT INDEXED" if most else "memories m"
        return counts_of(self._read(counts_sql(scope, where, ":now", table), params))

    def iterate(self, scope: Scope) -> Iterator[Memory]:
        last_seq = 0
        while True:
            params: dict[str, Any] = {"after": last_seq}
            where = scope_sql(scope, params)
            rows = self._read(
                f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where} AND m.seq > :after"
                " ORDER BY m.seq LIMIT 500",
                params,
            )
            if not rows:
                return
            for row in rows:
                yield row_to_memory(row)
            last_seq = int(rows[-1][0])

    def by_source(
        self, scope: Scope, source: str, *, limit: int, beside: Beside = None, earlier: bool = False
    ) -> list[Memory]:
        params: dict[str, Any] = {"source": source, "limit": limit}
        if beside is not None:
            params["beside_at"], params["beside_seq"] = to_storage(beside[0]), beside[1]
        window, order = source_window(earlier, beside and (":beside_at", ":beside_seq"))
        rows = self._read(
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {scope_sql(scope, params)}"
            f" AND m.source = :source{window} {order} LIMIT :limit",
            params,
        )
        return [row_to_memory(row) for row in rows]

    def source_turns(self, scope: Scope, source: str, *, texts: bool = True) -> list[SourceTurn]:
        params: dict[str, Any] = {"source": source}
        _, order = source_window(False, None)
        rows = self._read(
            f"SELECT m.id, m.speaker, {'m.content' if texts else 'NULL'}, m.meta FROM memories m"
            f" WHERE {scope_sql(scope, params)} AND m.source = :source {order}",
            params,
        )
        return [
            SourceTurn(memory_id, speaker, text, decode_meta(meta, memory_id))
            for memory_id, speaker, text, meta in rows
        ]

    def namespaces(self) -> list[str]:
        rows = self._read(f"{HELD_NAMESPACES} ORDER BY namespace", ())
        return [str(row[0]) for row in rows]

    def write(self, operation: Callable[[apsw.Connection], T]) -> T:
        """Run ``operation`` in one ``BEGIN IMMEDIATE`` transaction, lock waits retried."""
        return self._database.write(operation)

    def purge_expired(self, now: datetime) -> int:
        stamp = to_storage(now)
        # Looked for outside a write first: the purge runs on every open, and its write
        # lock made every command, a read too, wait behind another process's long write.
        if not self._database.read(
            "SELECT 1 FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT 1",
            (stamp,),
        ):
            return 0

        def step(connection: apsw.Connection) -> int:
            purged = connection.execute(
                "DELETE FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?"
                " RETURNING namespace",
                (stamp,),
            ).fetchall()
            removed = len(purged)
            for namespace in sorted({str(row[0]) for row in purged}):
                drop_stale_tombstones(connection, namespace)  # only theirs can be stale now
            if removed:
                record_drop(connection, "purge", now)
            return removed

        return self.write(step)

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal"):
            candidate = Path(f"{self.path}{suffix}")
            if candidate.exists():
                total += candidate.stat().st_size
        return total

    def compact_after_forget(self) -> None:
        """Fold the write-ahead log into the database file and truncate it.

        Forgotten rows' pages were zeroed in the database file (``secure_delete``)
        but their old versions may still sit in the WAL until it is checkpointed.
        """
        self.checkpoint()

    def scrub(self, wait_seconds: float) -> bool:
        """Finish every pending scrub: see :meth:`SQLiteScrub.scrub`."""
        return self._scrub.scrub(wait_seconds)

    def pending_scrubs(self) -> int:
        """Content-dropping writes (of any process) still waiting for their scrub."""
        return self._scrub.pending()

    def release_reserve(self) -> bool:
        """Free the disk-full reserve beside the database (whether there was one)."""
        return self._scrub.release_reserve()

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file and truncate it."""

        def step(connection: apsw.Connection) -> None:
            self._database.check_logs()  # a log deleted under it: not folded over others'
            row = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if row is not None and row[0]:
                raise apsw.BusyError("a reader kept the write-ahead log from being truncated")

        self._retrying(step)
        self._database.note_written()

    def close(self) -> None:
        """Release every connection."""
        self._database.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({os.fspath(self._given)!r})"
