"""The scale-out store: PostgreSQL with pgvector, for several recalld servers on one database.

Same protocol, same numbered migrations and the same guarantees as the SQLite
store, reached through a psycopg 3 connection pool (:mod:`.postgres_connection`):

* **Writes** run in ``READ COMMITTED`` transactions. A write transaction takes
  a transaction-scoped advisory lock on each key and client id it looks up
  (:meth:`PostgresTransaction.find`; ids are unique per namespace) and row
  locks on what it rewrites, so two servers writing the same key serialise
  exactly as two processes do on SQLite: the second sees the first's row and
  overwrites it. Acknowledged means committed: ``synchronous_commit`` is the
  server's (``on`` by default, so a commit is in the WAL on disk), except for
  the access counts recall records (:meth:`PostgresStore.count_accesses`).
* **Keyword search** is PostgreSQL full text over a generated ``tsvector``
  (title and key weight A, content B, tags C, speaker and place name D; English stemming;
  ASCII punctuation read as spaces, where SQLite's tokenizer splits words: migration 26).
  A query is its word terms, each through ``plainto_tsquery`` and OR-ed, so no user
  string is ever parsed as tsquery syntax. ``ts_rank`` (length-normalised) becomes the same
  [0, 1] keyword channel as on SQLite: half saturation, half relative to the
  best hit. Without word terms (or when every term is a stop word) it is a
  case-insensitive substring match (``like``).
* **Vectors** are searched in the database (:attr:`vector_search`), see
  :mod:`.postgres_semantic`; **notifications** come by ``LISTEN/NOTIFY``
  (:attr:`change_feed`), see :mod:`.postgres_notify`.
* **Forget** deletes every row in one transaction (cascades as on SQLite) and,
  like every content-dropping write, records a pending scrub; :meth:`scrub`
  ``VACUUM``\\ s the content tables once no open snapshot holds the dead rows
  (``postgres_vacuum_after_forget``), see :mod:`.postgres_scrub`. What
  PostgreSQL keeps on disk even then is in the README.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from recalld.config import Settings
from recalld.errors import StorageError
from recalld.model import Memory
from recalld.store.base import (
    BackupResult,
    Beside,
    ChangeFeed,
    Counts,
    KeywordBackend,
    Match,
    Order,
    Scope,
    SourceTurn,
)
from recalld.store.postgres_connection import Connection, PostgresDatabase
from recalld.store.postgres_context import PostgresContext
from recalld.store.postgres_core import PostgresCore
from recalld.store.postgres_graph import PostgresGraph
from recalld.store.postgres_graph_extraction import lock_extraction_rows
from recalld.store.postgres_graph_writes import drop_stale_tombstones, lock_tombstones
from recalld.store.postgres_intentions import PostgresIntentions
from recalld.store.postgres_migrations import MIGRATIONS
from recalld.store.postgres_migrations_words import word_query
from recalld.store.postgres_notify import PostgresChangeFeed
from recalld.store.postgres_retrieval import PostgresRetrieval
from recalld.store.postgres_rows import (
    SELECT_COLUMNS,
    Parameters,
    row_to_memory,
    scope_sql,
)
from recalld.store.postgres_scrub import VACUUM_TABLES, PostgresScrub, VacuumMode, record_drop
from recalld.store.postgres_search_path import check_tables_schema
from recalld.store.postgres_semantic import PostgresSemantic
from recalld.store.postgres_tables import PostgresTables
from recalld.store.postgres_tokens import PostgresTokens
from recalld.store.postgres_transaction import PostgresTransaction
from recalld.store.schema_guard import newer_schema_error, refuse_newer_schema
from recalld.store.sql import (
    HELD_NAMESPACES,
    counts_of,
    counts_sql,
    escape_like,
    source_window,
    substring_pattern,
)

__all__ = ["PostgresStore"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
# ts_rank weights for {D, C, B, A}: title and key (A) twice content (B), tags (C), and
# speaker and place name (D), as on SQLite.
RANK_WEIGHTS = "{0.5, 0.5, 0.5, 1.0}"
# ts_rank normalisation 1 divides by 1 + log(document length), like BM25's length
# normalisation; the result is scaled so one title match scores about as BM25 does.
RANK_SCALE = 20.0
MIGRATION_LOCK = 0x72_65_63_61_6C_6C_64  # "recalld": one migrator at a time


def _took_migration_lock(connection: Connection) -> bool:
    """Whether the migration lock was free (and is now this transaction's)."""
    row = connection.execute("SELECT pg_try_advisory_xact_lock(%s)", (MIGRATION_LOCK,)).fetchone()
    return bool(row and row[0])


def _waiting_message(connection: Connection, display: str) -> str:
    """What a process about to wait for another one's migration says: it waited without a
    word for as long as that one migrated (minutes, on a large table), its port closed
    (adversarial pass c69). Names the backend holding the lock, for pg_stat_activity."""
    holder = connection.execute(
        "SELECT a.pid, a.client_addr, a.application_name,"
        " extract(epoch FROM now() - a.xact_start)::int"
        " FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.database = ("
        "SELECT oid FROM pg_database WHERE datname = current_database())"
        " AND ((l.classid::bigint << 32) | l.objid::bigint) = %s LIMIT 1",
        (MIGRATION_LOCK,),
    ).fetchone()
    who = (
        "its holder is not visible to this role"
        if holder is None
        else f"PostgreSQL backend {holder[0]}"
        + (f" from {holder[1]}" if holder[1] else "")
        + (f" ({holder[2]})" if holder[2] else "")
        + (f", its transaction open {holder[3]} s" if holder[3] is not None else "")
    )
    return (
        f"{display}: another process is migrating this database ({who}); waiting for it"
        " to finish before opening it (a large table may take minutes)"
    )


class PostgresStore(PostgresTokens):
    """Memories in one PostgreSQL database, shared by any number of recalld processes."""

    def __init__(
        self,
        database: PostgresDatabase,
        *,
        vacuum: VacuumMode = "vacuum",
        on_migration: Callable[[int, int], None] | None = None,
    ) -> None:
        """Run on ``database``: migrate it (``on_migration(done, total)`` is told before
        each pending migration runs and once they are all done), then build the companions."""
        self._database = database
        self._created = False
        self._schema_version = self._migrate(on_migration)
        self._scrub = PostgresScrub(database, vacuum)
        self._retrieval = PostgresRetrieval(database)
        self._retrieval.warn_about_search()
        self._semantic = PostgresSemantic(database)
        self._core = PostgresCore(database)
        self._graph = PostgresGraph(database)
        self._context = PostgresContext(database)
        self._intentions = PostgresIntentions(database)
        self._feed = PostgresChangeFeed(database)
        self._tables = PostgresTables(database, self._semantic.ensure_index)

    @classmethod
    def open(
        cls, settings: Settings, *, on_migration: Callable[[int, int], None] | None = None
    ) -> PostgresStore:
        """Connect to ``settings.db`` (a ``postgresql://`` URL), check the server, migrate.

        A wrong URL, a refused connection, a server older than PostgreSQL 14 or
        a missing (or too old) ``vector`` extension is one clear error here.
        """
        database = PostgresDatabase(
            str(settings.db),
            min_size=settings.postgres_pool_min,
            max_size=settings.postgres_pool_max,
            connect_timeout=settings.postgres_connect_timeout_seconds,
            retry_seconds=settings.lock_retry_seconds,
            ef_search=settings.postgres_ef_search,
        )
        try:
            return cls(
                database, vacuum=settings.postgres_vacuum_after_forget, on_migration=on_migration
            )
        except BaseException:
            database.close()
            raise

    # -- schema ------------------------------------------------------------------

    def _applied_migrations(self) -> set[int]:
        """The migration numbers recorded in ``schema_migrations`` (none in a new database)."""
        if not check_tables_schema(self._database):
            return set()
        return {int(row[0]) for row in self._read("SELECT version FROM schema_migrations")}

    def _migrate(self, on_migration: Callable[[int, int], None] | None) -> int:
        known = len(MIGRATIONS)
        applied = self._applied_migrations()
        newer = max(applied, default=0)
        if newer > known:
            raise newer_schema_error(self._database.display, newer, known)
        # Whether this open created recalld's schema (the database itself is created by
        # whoever runs the server): the process that applied migration 1 under the lock
        # (set below). Several processes opening a new database at once all find nothing
        # applied above, and only one of them creates it.
        self._created = False
        if applied >= set(range(1, known + 1)):
            # Nothing to do: no transaction per migration (each under the migration lock)
            # on every open of an up-to-date database, as SQLite's open.
            return known
        pending = len(set(range(1, known + 1)) - applied)
        progress = {"done": 0}
        version = 0
        waited: list[bool] = []
        for number, migration in enumerate(MIGRATIONS, start=1):

            def step(
                connection: Connection, number: int = number, migration: Any = migration
            ) -> bool:
                # A migration may rebuild a column of every memory (minutes on a large
                # table): a statement_timeout the database sets would stop the upgrade, and
                # so would a transaction_timeout (PostgreSQL 17+; absent before, hence
                # pg_settings). For this transaction only, as SET LOCAL. Nor is the wait
                # for another process's migration bounded by recalld's lock_timeout.
                connection.execute(
                    "SELECT set_config(name, '0', true) FROM pg_settings"
                    " WHERE name IN ('statement_timeout', 'transaction_timeout')"
                    " OR (name = 'lock_timeout' AND source <> 'client')"
                )
                if not waited and not _took_migration_lock(connection):
                    waited.append(True)  # said once for this open, not once per migration
                    logger.warning(_waiting_message(connection, self._database.display))
                connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                if not applied:  # else it is there: DDL needs CREATE, a DML-only role's open not
                    connection.execute(
                        "CREATE TABLE IF NOT EXISTS schema_migrations"
                        " (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)"
                    )
                refuse_newer_schema(self._database.display, connection.execute, known)
                done = connection.execute(
                    "SELECT 1 FROM schema_migrations WHERE version = %s", (number,)
                ).fetchone()
                if done is None:
                    if on_migration is not None:
                        on_migration(progress["done"], pending)
                    migration(connection.execute)
                    progress["done"] += 1
                    connection.execute(
                        "INSERT INTO schema_migrations(version, applied_at) VALUES (%s, now())",
                        (number,),
                    )
                    logger.info("applied migration %d to %s", number, self._database.display)
                return done is None

            applied_here = self._database.write(step)
            if number == 1:
                self._created = applied_here
            version = number
        if on_migration is not None and progress["done"]:
            on_migration(progress["done"], pending)
        return version

    # -- protocol ------------------------------------------------------------------

    @property
    def keyword_backend(self) -> KeywordBackend:
        """``postgres-fts``: PostgreSQL full-text search (``tsvector``/``tsquery``)."""
        return "postgres-fts"

    def location(self) -> str:
        """The database URL with its password replaced by ``***``."""
        return self._database.display

    @property
    def created(self) -> bool:
        """Whether this open created recalld's schema in the database (none was there)."""
        return self._created

    def backup(self, destination: Path) -> BackupResult:
        """Refused: a PostgreSQL database is backed up with PostgreSQL's own tools."""
        raise StorageError(
            f"recalld backup copies SQLite files only; back up {self._database.display} with"
            f" pg_dump (e.g. pg_dump --format=custom --file {destination} DBNAME), or copy it"
            " to a SQLite file with recalld migrate --to FILE"
        )

    @property
    def index_location(self) -> Path | None:
        """None: vectors are searched in the database, no process keeps index files."""
        return None

    @property
    def schema_version(self) -> int:
        return self._schema_version

    @property
    def semantic(self) -> PostgresSemantic:
        """Jobs (``FOR UPDATE SKIP LOCKED``), vectors and heartbeats."""
        return self._semantic

    @property
    def vector_search(self) -> PostgresSemantic:
        """pgvector's HNSW index answers nearest-vector queries in the database."""
        return self._semantic

    @property
    def change_feed(self) -> ChangeFeed:
        """``LISTEN/NOTIFY`` on core-memory and pending-queue changes, from any server."""
        return self._feed

    @property
    def tables(self) -> PostgresTables:
        """Whole-table access, for ``recalld migrate``."""
        return self._tables

    @property
    def retrieval(self) -> PostgresRetrieval:
        """Candidate rows, neighbours and term counts for recall's reranker."""
        return self._retrieval

    @property
    def context(self) -> PostgresContext:
        """Signal features, trigger history and pending recollections."""
        return self._context

    @property
    def core(self) -> PostgresCore:
        """Core-memory persistence (row locks per target)."""
        return self._core

    @property
    def intentions(self) -> PostgresIntentions:
        """Intentions, their triggers and streaks."""
        return self._intentions

    @property
    def graph(self) -> PostgresGraph:
        """The knowledge graph and its extraction queue."""
        return self._graph

    @contextmanager
    def transaction(self) -> Iterator[PostgresTransaction]:
        with self._database.transaction() as connection:
            transaction = PostgresTransaction(connection)
            yield transaction
            transaction.finish()

    def count_accesses(self, seqs: Sequence[int], now: datetime) -> None:
        def operation(connection: Connection) -> None:
            # This transaction alone commits without waiting for the WAL to reach the disk.
            connection.execute("SET LOCAL synchronous_commit = off")
            PostgresTransaction(connection).touch(seqs, now)

        self._database.write(operation)

    def _read(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        return self._database.read(sql, params)

    def write(self, operation: Callable[[Connection], T]) -> T:
        """Run ``operation`` in one transaction (retried on serialization failures)."""
        return self._database.write(operation)

    def get(
        self,
        scope: Scope,
        *,
        id: str | None = None,
        key: str | None = None,
        seq: int | None = None,
    ) -> Memory | None:
        params = Parameters()
        where = scope_sql(scope, params)
        if id is not None:
            where += f" AND m.id = {params.bind('id', id)}"
        elif key is not None:
            where += f" AND m.key = {params.bind('key', key)}"
        else:
            where += f" AND m.seq = {params.bind('seq', seq)}"
        rows = self._read(f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where}", params)
        return row_to_memory(rows[0]) if rows else None

    def search(self, scope: Scope, text: str, terms: Sequence[str], limit: int) -> list[Match]:
        if terms:
            matches = self._search_fts(scope, terms, limit)
            if matches is not None:
                return matches
        patterns = list(terms) if terms else [substring_pattern(text)]
        return self._search_like(scope, [pattern for pattern in patterns if pattern], limit)

    def _search_fts(self, scope: Scope, terms: Sequence[str], limit: int) -> list[Match] | None:
        """Full-text matches, or None when the terms hold no lexeme (only stop words)."""
        params = Parameters()
        parts = [word_query(params.bind, f"t{index}", term) for index, term in enumerate(terms)]
        query = " || ".join(parts)
        where = scope_sql(scope, params)
        limit_at = params.bind("limit", limit)
        sql = (
            f"WITH q AS (SELECT ({query}) AS query)"
            f" SELECT {SELECT_COLUMNS}, ts_rank('{RANK_WEIGHTS}', m.search, q.query, 1) AS rank,"
            " numnode(q.query) AS nodes"
            f" FROM q LEFT JOIN memories m ON m.search @@ q.query AND {where}"
            f" ORDER BY rank DESC NULLS LAST, m.seq DESC LIMIT {limit_at}"
        )
        rows = self._read(sql, params)
        if not rows or rows[0][-1] == 0:
            return None  # no lexeme in the query: the caller falls back to substrings
        found = [row for row in rows if row[0] is not None]
        if not found:
            return []
        best = max(float(found[0][-2]) * RANK_SCALE, 1e-9)
        matches = []
        for row in found:
            strength = max(0.0, float(row[-2]) * RANK_SCALE)
            keyword = 0.5 * strength / (strength + 1.0) + 0.5 * min(1.0, strength / best)
            matches.append(
                Match(memory=row_to_memory(row[:-2]), keyword=keyword, backend="postgres-fts")
            )
        return matches

    def _search_like(self, scope: Scope, patterns: Sequence[str], limit: int) -> list[Match]:
        if not patterns:
            return []
        params = Parameters()
        where = scope_sql(scope, params)
        parts = []
        for index, pattern in enumerate(patterns):
            like = f"ILIKE {params.bind(f'p{index}', f'%{escape_like(pattern)}%')} ESCAPE '\\'"
            # Tags are matched one by one, not through their JSON text.
            parts.append(
                f"((m.content {like}) OR (coalesce(m.title, '') {like}) OR EXISTS (SELECT 1"
                f" FROM memory_tags t WHERE t.seq = m.seq AND t.tag {like})"
                f" OR (coalesce(m.speaker, '') {like}) OR (coalesce(m.place_name, '') {like})"
                f" OR (coalesce(m.key, '') {like}))::int"
            )
        matched = " + ".join(parts)
        limit_at = params.bind("limit", limit)
        sql = (
            f"SELECT {SELECT_COLUMNS}, ({matched}) AS matched FROM memories m"
            f" WHERE {where} AND ({matched}) > 0"
            f" ORDER BY matched DESC, m.updated_at DESC, m.seq DESC LIMIT {limit_at}"
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
        params = Parameters()
        where = scope_sql(scope, params)
        if after is not None:
            value, seq = params.bind("after_value", after[0]), params.bind("after_seq", after[1])
            where += f" AND (m.{column}, m.seq) < ({value}, {seq})"
        sql = (
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where}"
            f" ORDER BY m.{column} DESC, m.seq DESC LIMIT {params.bind('limit', limit)}"
        )
        return [row_to_memory(row) for row in self._read(sql, params)]

    def counts(self, scope: Scope) -> Counts:
        params = Parameters()
        now = params.bind("now", scope.now)
        where = scope_sql(replace(scope, include_expired=True), params)
        return counts_of(self._read(counts_sql(scope, where, now), params))

    def iterate(self, scope: Scope) -> Iterator[Memory]:
        last_seq = 0
        while True:
            params = Parameters()
            where = scope_sql(scope, params)
            rows = self._read(
                f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where}"
                f" AND m.seq > {params.bind('after', last_seq)} ORDER BY m.seq LIMIT 500",
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
        params = Parameters()
        where = f"{scope_sql(scope, params)} AND m.source = {params.bind('source', source)}"
        window, order = source_window(
            earlier, beside and (params.bind("at", beside[0]), params.bind("seq", beside[1]))
        )
        sql = (
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE {where}{window}"
            f" {order} LIMIT {params.bind('limit', limit)}"
        )
        return [row_to_memory(row) for row in self._read(sql, params)]

    def source_turns(self, scope: Scope, source: str, *, texts: bool = True) -> list[SourceTurn]:
        params = Parameters()
        where = f"{scope_sql(scope, params)} AND m.source = {params.bind('source', source)}"
        _, order = source_window(False, None)
        content = "m.content" if texts else "NULL"
        sql = f"SELECT m.id, m.speaker, {content}, m.meta FROM memories m WHERE {where} {order}"
        rows = self._read(sql, params)
        return [
            SourceTurn(memory_id, speaker, text, dict(meta))
            for memory_id, speaker, text, meta in rows
        ]

    def namespaces(self) -> list[str]:
        rows = self._read(f'SELECT * FROM ({HELD_NAMESPACES}) held ORDER BY namespace COLLATE "C"')
        return [str(row[0]) for row in rows]

    def purge_expired(self, now: datetime) -> int:
        def step(connection: Connection) -> int:
            # The memories in seq order, then their graph rows: the order the workers take.
            expired = [
                int(row[0])
                for row in connection.execute(
                    "SELECT seq FROM memories WHERE expires_at IS NOT NULL AND expires_at <= %s"
                    " ORDER BY seq FOR UPDATE",
                    (now,),
                )
            ]
            lock_extraction_rows(connection, expired)
            purged = connection.execute(
                "DELETE FROM memories WHERE seq = ANY(%s) RETURNING namespace", (expired,)
            ).fetchall()
            removed = len(purged)
            for namespace in sorted({str(row[0]) for row in purged}):
                lock_tombstones(connection, namespace)
                drop_stale_tombstones(connection, namespace)  # only theirs can be stale now
            if removed:
                record_drop(connection, "purge", now)
            return removed

        return self._database.write(step)

    def size_bytes(self) -> int:
        """Bytes of recalld's tables and their indexes (the database may hold others)."""
        rows = self._read(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE c.relkind = 'r' AND n.nspname = current_schema()"
            " AND c.relname = ANY(%s)",
            (
                [
                    "schema_migrations",
                    "tokens",
                    "vector_log",
                    "workers",
                    "pending_scrubs",
                    "migrated_memories",
                    "migrated_core",
                    "migrated_entity_rows",
                    "migrated_relation_rows",
                    *VACUUM_TABLES,
                ],
            ),
        )
        return int(rows[0][0])

    def compact_after_forget(self) -> None:
        """``VACUUM`` the content tables now (``postgres_vacuum_after_forget``), pending
        scrubs untouched: see :mod:`.postgres_scrub` for what that does and does not do.

        ``vacuum`` (default) removes the dead row versions no snapshot can still
        see, and their index entries; ``full`` rewrites the tables into new files
        (an exclusive lock while it runs); ``off`` leaves it to autovacuum.
        """
        self._scrub.vacuum()

    def scrub(self, wait_seconds: float) -> bool:
        """Finish the pending scrubs that no open snapshot holds back (:mod:`.postgres_scrub`);
        whether every scrub pending when it began is done."""
        return self._scrub.scrub(wait_seconds)

    def pending_scrubs(self) -> int:
        """Content-dropping writes (of any server) whose dead rows are not vacuumed yet."""
        return self._scrub.pending()

    def release_reserve(self) -> bool:
        """False: a PostgreSQL server manages its own disk, recalld keeps no reserve file."""
        return False

    def close(self) -> None:
        """Stop the change listener and close every pooled connection (in a process forked
        after opening, neither: they are the parent's; see :mod:`recalld.store.process`)."""
        if self._database.forked:
            return
        self._feed.close()
        self._database.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self._database.display!r})"
