"""Connections to one PostgreSQL database: a psycopg 3 pool, transactions, clear errors.

Every PostgreSQL companion runs its SQL through one :class:`PostgresDatabase`:
:meth:`~PostgresDatabase.read` for one query, :meth:`~PostgresDatabase.write`
for a function run inside one transaction. Connections come from a
``psycopg_pool.ConnectionPool`` (checked before each use, so connections broken
by a server restart are replaced), run in autocommit between transactions, and
get pgvector's types registered.

Errors are translated once, here:

* the server cannot be reached (refused, restarting) or stopped answering
  (:mod:`.postgres_watchdog`) → :class:`DatabaseUnavailableError` (HTTP 503)
  naming the redacted location;
* the server is there but the work did not get done in time: a lock held past
  ``lock_retry_seconds`` (``lock_timeout``), every pooled connection in use →
  :class:`~recalld.errors.DatabaseBusyError` naming the setting; a statement cut by
  ``statement_timeout`` or ``transaction_timeout`` → its subclass
  :class:`~recalld.errors.StatementTimeoutError` (the worker counts it an attempt);
* a serialization failure or deadlock → the whole write (or read) is run again
  (bounded by ``lock_retry_seconds``): it was rolled back, so nothing is applied
  twice. Both are operational errors to psycopg, but they mean the server is there,
  so they are told apart first and never become "unavailable"; where the caller's
  code cannot be run again (:meth:`PostgresDatabase.transaction`), or it still
  conflicts once ``lock_retry_seconds`` have passed, a
  :class:`~recalld.errors.DatabaseBusyError` saying nothing was written;
* the server's disk is full (``53100``, an operational error too) →
  :class:`~recalld.errors.DiskFullError`, as on SQLite, not "unavailable";
* anything else → :class:`~recalld.errors.StorageError`.

Passwords never reach a message: locations are shown through
:func:`recalld._location.redact_url`, and driver messages are scrubbed of the
password before they are wrapped.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
import psycopg.errors
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.json import set_json_dumps
from psycopg_pool import ConnectionPool, PoolTimeout

from recalld._location import redact_url, url_secrets
from recalld.errors import (
    DatabaseBusyError,
    DatabaseReadOnlyError,
    DatabaseUnavailableError,
    DiskFullError,
    LastingConflictError,
    StatementTimeoutError,
    StorageError,
    ValidationError,
    WriteConflictError,
)
from recalld.store.postgres_json import dumps as json_dumps
from recalld.store.postgres_refusals import Refusals
from recalld.store.postgres_watchdog import Watchdog
from recalld.store.process import OpeningProcess

__all__ = [
    "MINIMUM_SERVER_VERSION",
    "MINIMUM_VECTOR_VERSION",
    "UNBOUNDED_LOCK_WAIT",
    "Connection",
    "PostgresDatabase",
    "check_server",
    "lock_saying_so",
    "parse_url",
    "rows_waiting_briefly",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
Connection = psycopg.Connection[tuple[Any, ...]]
# PostgreSQL 14: the oldest release still maintained when this was written; every
# feature used here (generated columns, websearch parsing, ON CONFLICT) is older.
MINIMUM_SERVER_VERSION = 140000
# pgvector 0.8.0: halfvec with HNSW (0.7.0) and iterative index scans, so filtered
# nearest-neighbour queries still return k rows.
MINIMUM_VECTOR_VERSION = (0, 8, 0)
# How often the server looks, while a statement runs, whether its client is still there
# (client_connection_check_interval; PostgreSQL 14, on Linux): a poll of the socket.
CLIENT_CHECK_MILLISECONDS = 2_000
RETRYABLE = (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected)
# transaction_timeout (PostgreSQL 17) and idle_in_transaction_session_timeout ending the
# session: class 25, not operational, yet answered as a statement_timeout is (503
# database_busy, retry). By SQLSTATE: psycopg 3.2 may predate the first's class.
TIMED_OUT = frozenset({"25P04", "25P03"})
# Whose a setting is, by pg_settings.source, as a lock wait's message names it.
_SETTING_SOURCES = {
    "database": "the database's",
    "user": "the role's",
    "database user": "the role's (in this database)",
    "client": "the connection's (URL options, PGOPTIONS)",
}

# For one transaction (SET LOCAL): recalld's own long waits, for another process's
# migration, index build or backfill, which may take minutes and are no other client's
# lock to give up on. A lock_timeout the URL asks for (source "client") still applies.
UNBOUNDED_LOCK_WAIT = (
    "SELECT set_config('lock_timeout', '0', true) FROM pg_settings"
    " WHERE name = 'lock_timeout' AND source <> 'client'"
)


def lock_timeout_milliseconds(seconds: float) -> int:
    """``lock_retry_seconds`` as a ``lock_timeout``: at least 1 ms (0 would mean for ever)
    and at most PostgreSQL's 32-bit milliseconds."""
    return min(max(1, round(seconds * 1000)), 2**31 - 1)


def _nul_refused(error: psycopg.Error) -> bool:
    """Whether ``error`` is PostgreSQL (or psycopg, adapting a parameter) refusing a NUL
    character in text or jsonb."""
    if isinstance(error, psycopg.errors.UntranslatableCharacter):
        return True
    return isinstance(error, psycopg.DataError) and "NUL" in str(error)


def parse_url(url: str) -> dict[str, Any]:
    """The connection parameters of ``url``; a :class:`ValidationError` naming ``db`` if bad."""
    try:
        return conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        raise ValidationError(
            "db", f"{redact_url(url)} is not a valid PostgreSQL URL: {_scrub(str(error), url)}"
        ) from None


def _password(url: str) -> str | None:
    try:
        value = conninfo_to_dict(url).get("password")
    except psycopg.ProgrammingError:
        return None
    return None if not value else str(value)


def _scrub(message: str, url: str) -> str:
    """``message`` without the URL's password (drivers sometimes echo connection strings)."""
    password = _password(url)
    cleaned = message.replace(url, redact_url(url))
    # Also as written in the URL: one psycopg cannot parse has no parsed password, and its
    # error quotes the part it choked on ("unexpected spaces found in \"<password>\"").
    for secret in ([password] if password else []) + url_secrets(url):
        cleaned = cleaned.replace(secret, "***")
    return " ".join(cleaned.split())


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("."):
        digits = "".join(character for character in piece if character.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def check_server(server_version_num: int, vector_version: str | None, display: str) -> None:
    """Refuse a server too old for recalld or without a recent enough pgvector.

    One :class:`StorageError` that says what is wrong and what to do.
    """
    if server_version_num < MINIMUM_SERVER_VERSION:
        found = f"{server_version_num // 10000}.{server_version_num % 10000}"
        raise StorageError(
            f"{display} runs PostgreSQL {found}; recalld needs PostgreSQL"
            f" {MINIMUM_SERVER_VERSION // 10000} or newer"
        )
    needed = ".".join(str(part) for part in MINIMUM_VECTOR_VERSION)
    if vector_version is None:
        raise StorageError(
            f"the 'vector' extension (pgvector >= {needed}) is not installed in {display}:"
            " install pgvector on the server and run CREATE EXTENSION vector as a user allowed"
            " to (recalld tries, and could not)"
        )
    if _version_tuple(vector_version) < MINIMUM_VECTOR_VERSION:
        raise StorageError(
            f"{display} has the 'vector' extension {vector_version}; recalld needs pgvector"
            f" {needed} or newer (ALTER EXTENSION vector UPDATE after upgrading pgvector)"
        )


class PostgresDatabase:
    """A connection pool to one database and the transaction loop every write runs in."""

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        connect_timeout: float = 10.0,
        retry_seconds: float = 30.0,
        ef_search: int = 100,
    ) -> None:
        self.url = url
        self._ef_search = int(ef_search)
        self.display = redact_url(url)
        self._client_check_refused = False  # said once (_check_for_the_client)
        self._opener = OpeningProcess(self.display)
        self.retry_seconds = retry_seconds
        # Each pooled connection's (lock bound, timeout, whose timeout), in seconds, when
        # its statement_timeout (or transaction_timeout) was shorter than retry_seconds
        # (see _below_statement_timeout). Per connection: one pool may hold connections
        # opened before and after a DBA changed the setting, and one bound for them all
        # named a timeout that was gone (review of pass d65).
        self._lock_bounds: weakref.WeakKeyDictionary[Connection, tuple[float, float, str]] = (
            weakref.WeakKeyDictionary()
        )
        parameters = parse_url(url)
        self._connect_timeout = connect_timeout
        # What the URL does not set: a connection whose server or network is gone is
        # closed after about the connect timeout (keepalives while idle, and
        # tcp_user_timeout while a statement is unacknowledged) instead of waiting for
        # the operating system's two hours, so the request answers 503.
        seconds = max(1, round(connect_timeout))
        defaults = {
            "connect_timeout": seconds,
            "keepalives": 1,
            "keepalives_idle": seconds,
            "keepalives_interval": max(1, seconds // 5),
            "keepalives_count": 3,
            "tcp_user_timeout": seconds * 1000,
        }
        parameters = {**defaults, **parameters}
        self._parameters = parameters
        # Why the server refused the last new connection, if for a full disk (see
        # postgres_refusals): said as such when the pool then has none to lend.
        self._refusals = Refusals()
        self._prepare()
        # A server that stops answering but keeps its sockets open (stopped, hung): see
        # postgres_watchdog.
        self._watchdog = Watchdog(parameters, connect_timeout, self.display)
        self._max_size = max(max_size, min_size, 1)
        # Connections lent out now: a pool timeout with every one of them lent is this
        # process's pool being too small for its load, not the server being away.
        self._lent = 0
        self._lent_lock = threading.Lock()
        self._pool = ConnectionPool(
            kwargs={**parameters, "autocommit": True},
            connection_class=self._refusals.connection_class(),
            min_size=min_size,
            max_size=self._max_size,
            configure=self._configure,
            check=self._check,
            timeout=connect_timeout,
            reconnect_timeout=max(60.0, 6 * connect_timeout),
            name="recalld",
            open=False,
        )
        try:
            self._pool.open(wait=min_size > 0, timeout=connect_timeout)
        except PoolTimeout as error:
            self._pool.close()
            self._watchdog.close()
            self._refused_for_disk_full()
            raise DatabaseUnavailableError(
                f"cannot connect to {self.display} within {connect_timeout:g} s"
            ) from error

    # -- opening -------------------------------------------------------------------

    def connect(self, *, autocommit: bool = True) -> Connection:
        """A new connection of its own (not from the pool): listeners, bootstrap, VACUUM."""
        self._opener.check()
        try:
            connection: Connection = psycopg.connect(**self._parameters, autocommit=autocommit)
        except psycopg.OperationalError as error:
            self._refusals.record(error)
            self._refused_for_disk_full()
            raise DatabaseUnavailableError(
                f"cannot connect to {self.display}: {_scrub(str(error), self.url)}"
            ) from None
        self._refusals.record(None)
        set_json_dumps(json_dumps, connection)
        return connection

    def _refused_for_disk_full(self) -> None:
        """Raise :class:`DiskFullError` when the server refused the last new connection
        for its full disk: "unavailable, retry shortly" sent the operator looking for a
        server that was there, and the disk is what to free (adversarial pass d65)."""
        reason = self._refusals.disk_full
        if reason is None:
            return
        logger.error("%s refuses new connections: %s", self.display, _scrub(reason, self.url))
        raise DiskFullError(
            "the disk of the database server is full: it refuses new connections, and"
            " nothing was written. Free space on that server (recalld's log names the"
            " database)"
        )

    def _prepare(self) -> None:
        """Check the server once before the pool opens: reachable, recent, with pgvector."""
        with self.connect() as connection:
            version = int(connection.execute("SHOW server_version_num").fetchone()[0])  # type: ignore[index]
            installed = self._vector_version(connection)
            if installed is None and version >= MINIMUM_SERVER_VERSION:
                try:
                    connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
                except psycopg.errors.DiskFull as error:
                    # Said as "not installed: install pgvector", sending the operator to
                    # install what is there; the disk is what to fix.
                    raise DiskFullError(
                        f"the disk of the database server of {self.display} is full:"
                        " recalld could not create the 'vector' extension in it, and"
                        f" wrote nothing. Free space on that server ({self._primary(error)})"
                    ) from None
                except psycopg.Error as error:
                    logger.warning(
                        "could not create the vector extension in %s: %s",
                        self.display,
                        _scrub(str(error), self.url),
                    )
                installed = self._vector_version(connection)
            check_server(version, installed, self.display)
            self._check_vector_visible(connection)

    def _configure(self, connection: Connection) -> None:
        """Set up a new pooled connection: pgvector's types, UTC, iterative HNSW scans."""
        # A float in jsonb reads back as a float (postgres_json).
        set_json_dumps(json_dumps, connection)
        with self._watchdog.watching(connection):
            register_vector(connection)
            connection.execute("SET TIME ZONE 'UTC'")
            connection.execute(f"SET hnsw.ef_search = {self._ef_search}")
            # A filtered nearest-neighbour query keeps scanning the index until it has k rows.
            connection.execute("SET hnsw.iterative_scan = relaxed_order")
            # The pool closes its own idle connections (beyond its minimum, after
            # psycopg_pool's max_idle). An idle_session_timeout the database sets ended them
            # all at once after a burst; each was found broken when lent, its replacement
            # queued behind the other dead ones and died before its turn: every request
            # then waited out the connect timeout (503) for good.
            connection.execute("SET idle_session_timeout = 0")
            # A process killed in a long statement (a migration rebuilding a column, a
            # backfill of every memory's job) left the server running it to its end,
            # holding its locks, with no one to answer: the process started again in its
            # place waited minutes for it without a word. The server now looks for the
            # client every few seconds while a statement runs and rolls it back once it
            # is gone (adversarial pass c69). One the URL or the database sets is kept.
            self._check_for_the_client(connection)
            # A lock another client holds (LOCK TABLE in psql, a long transaction on a
            # row) is waited for at most lock_retry_seconds (RECALLD_LOCK_RETRY_SECONDS,
            # as on SQLite), then the request fails saying so: without a bound it waited
            # for ever, and the pool's other connections followed it. A lock_timeout the
            # database, role or server sets (a DBA's guard for DDL, often milliseconds)
            # is replaced by that bound: it cut one key's writers waiting for each other
            # into errors while the database was there. recalld's own long waits (for
            # another process's migration, index build or backfill) turn it off for their
            # transaction. One the connection asked for (the URL's options, PGOPTIONS:
            # source "client") is kept; the server says so, however it was spelled
            # (--lock-timeout=5s too).
            connection.execute(
                "SELECT set_config('lock_timeout', %s, false) FROM pg_settings"
                " WHERE name = 'lock_timeout' AND source <> 'client'",
                (str(lock_timeout_milliseconds(self.retry_seconds)),),
            )
            self._below_statement_timeout(connection)

    def _check_for_the_client(self, connection: Connection) -> None:
        """Set ``client_connection_check_interval`` (see :meth:`_configure`) unless the
        URL (``options``, ``PGOPTIONS``: source "client"), the database or the role sets
        it, 0 included: one set to 0 there on purpose was replaced (review of pass c69).
        A server that refuses it (one built without the kernel events it needs, e.g. on
        Windows) is logged once, and recalld runs without it: every connection failed to
        open before, the whole database unusable for a safeguard (review of pass c69)."""
        try:
            connection.execute(
                "SELECT set_config(name, %s, false) FROM pg_settings"
                " WHERE name = 'client_connection_check_interval' AND setting = '0'"
                " AND source NOT IN ('client', 'database', 'user', 'database user')",
                (str(CLIENT_CHECK_MILLISECONDS),),
            )
        except psycopg.errors.InvalidParameterValue as error:
            if not self._client_check_refused:
                self._client_check_refused = True
                logger.warning(
                    "%s refuses client_connection_check_interval = %d ms (%s): a recalld"
                    " process killed in a long statement leaves it running, with its locks,"
                    " until the server next writes to its socket",
                    self.display,
                    CLIENT_CHECK_MILLISECONDS,
                    self._primary(error),
                )

    def _below_statement_timeout(self, connection: Connection) -> None:
        """Keep the lock bound under a shorter ``statement_timeout`` (or PostgreSQL 17's
        ``transaction_timeout``) the database, role or URL sets: a lock wait then ends as
        one (:class:`DatabaseBusyError`, another client's lock, which the worker waits out
        holding its results), not as the statement timing out
        (:class:`StatementTimeoutError`, the work's own fault, which counts an attempt
        against a batch that only waited). A ``lock_timeout`` the connection asked for
        itself is kept."""
        rows = connection.execute(
            "SELECT name, setting::bigint, source FROM pg_settings WHERE name IN"
            " ('statement_timeout', 'transaction_timeout', 'lock_timeout')"
        ).fetchall()
        settings = {str(name): (int(value), str(source)) for name, value, source in rows}
        lock, source = settings.get("lock_timeout", (0, "client"))
        cuts = [
            (settings[name][0], name, settings[name][1])
            for name in ("statement_timeout", "transaction_timeout")
            if name in settings and settings[name][0] > 0
        ]
        if not cuts or source == "client":
            return
        shortest, name, whose = min(cuts)
        if 0 < lock < shortest:
            return
        # A tenth of it left for the statement's own work before and after the wait.
        lowered = max(1, shortest * 9 // 10)
        connection.execute("SELECT set_config('lock_timeout', %s, false)", (str(lowered),))
        owner = _SETTING_SOURCES.get(whose, "the server's")
        self._lock_bounds[connection] = (lowered / 1000, shortest / 1000, f"{owner} {name}")

    def lock_bound(self, connection: Connection) -> tuple[float, float, str] | None:
        """``connection``'s lock bound, the shorter timeout it keeps under and whose
        that timeout is (``the database's statement_timeout``), in seconds; None when
        ``RECALLD_LOCK_RETRY_SECONDS`` (or the URL's ``lock_timeout``) bounds its waits."""
        return self._lock_bounds.get(connection)

    def _check(self, connection: Connection) -> None:
        """The pool's check of a connection before it is lent out (one round trip)."""
        with self._watchdog.watching(connection):
            ConnectionPool.check_connection(connection)

    def _check_vector_visible(self, connection: Connection) -> None:
        """Refuse an extension installed in a schema outside the search path.

        Every connection registers pgvector's types by name, and the tables use them by
        name: a connection that cannot see them fails as the pool opens it, and the pool
        only ever said it could not connect within the connect timeout (a 503 for good).
        """
        row = connection.execute(
            "SELECT n.nspname, current_setting('search_path') FROM pg_extension e"
            " JOIN pg_namespace n ON n.oid = e.extnamespace"
            " WHERE e.extname = 'vector' AND to_regtype('halfvec') IS NULL"
        ).fetchone()
        if row is None:
            return
        schema, search_path = str(row[0]), str(row[1])
        raise StorageError(
            f"the 'vector' extension of {self.display} is installed in schema {schema!r},"
            f" which is not on the search_path recalld's connections get ({search_path!r}):"
            f" add {schema} to it (ALTER ROLE <role> SET search_path = ..., {schema}; or"
            f" options=-csearch_path%3D...,{schema} in the URL), or move the extension"
            f" (ALTER EXTENSION vector SET SCHEMA <a schema on the search_path>)"
        )

    @staticmethod
    def _vector_version(connection: Connection) -> str | None:
        row = connection.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        return None if row is None else str(row[0])

    # -- running -------------------------------------------------------------------

    def _unavailable(self, error: BaseException) -> DatabaseUnavailableError:
        return DatabaseUnavailableError(
            f"the database at {self.display} is unavailable: {_scrub(str(error), self.url)}"
        )

    def _primary(self, error: psycopg.Error) -> str:
        """The server's one-line reason (without the statement it quotes), scrubbed."""
        return _scrub(error.diag.message_primary or str(error), self.url)

    def _read_only(self, error: psycopg.Error) -> str:
        # SQLite's read-only file is refused so too: recalld writes on open (migrations,
        # the purge of expired memories) and on reads that count an access.
        return (
            f"the database at {self.display} is read-only ({self._primary(error)}):"
            " nothing was written. recalld writes to its database, on open too; point it"
            " at the primary server (not a hot standby), or turn default_transaction_read_only"
            " off for the database and role"
        )

    def _busy(self, error: psycopg.Error, connection: Connection | None) -> DatabaseBusyError:
        """A statement the server cut on ``connection`` (a lock wait past
        ``lock_timeout``, a ``statement_timeout``, a ``transaction_timeout``): nothing was
        written."""
        reason = self._primary(error)
        if isinstance(error, psycopg.errors.LockNotAvailable):
            bound = f"RECALLD_LOCK_RETRY_SECONDS = {self.retry_seconds:g}"
            lowered_bound = None if connection is None else self.lock_bound(connection)
            if lowered_bound is not None:
                lowered, timeout, name = lowered_bound
                bound = f"{lowered:g} s, under {name} of {timeout:g} s; {bound} otherwise"
            return DatabaseBusyError(
                f"{self.display} kept a lock recalld needed held by another client for"
                f" longer than the lock timeout ({bound}, unless the URL's options set"
                f" lock_timeout): nothing was written ({reason}). Look for what holds it"
                " (pg_locks, pg_stat_activity: a LOCK TABLE, a long transaction), or raise"
                " the setting"
            )
        return StatementTimeoutError(
            f"{self.display} cut the statement before it finished ({reason}): nothing was"
            " written. recalld's connections keep the statement_timeout and"
            " transaction_timeout the database, role or URL set: raise them, or look for"
            " what makes the statement slow"
        )

    def _conflicted(self, error: psycopg.Error) -> WriteConflictError:
        """A deadlock or serialization failure in work whose caller's code cannot be run
        again here: the server rolled it back, so nothing was written, and the same request
        sent again runs against the other's committed work. "database_busy" (503 with
        ``Retry-After``), as another client's lock held too long is: it was a plain
        ``StorageError``, a 500 that said nothing of retrying (adversarial pass b67). Its
        own kind, so that the service runs the whole operation again in a fresh
        transaction (:func:`recalld.conflicts.rerun_on_conflict`, adversarial pass a68)."""
        return WriteConflictError(
            f"{self.display}: the write conflicted with another client's at the same moment"
            f" ({self._primary(error)}) and was rolled back: nothing was written; send it"
            " again"
        )

    def _not_permitted(self, error: psycopg.Error) -> str:
        role = self._parameters.get("user") or "the role recalld connects as"
        return (
            f"the role {role} may not do what recalld needs in {self.display}"
            f" ({self._primary(error)}): nothing was written. recalld creates its tables in"
            " the database's current schema on the first open and reads and writes them"
            " after; connect as the owner of that schema (and its tables), or GRANT USAGE,"
            f" CREATE ON SCHEMA <schema> TO {role} (and the tables' privileges)"
        )

    @contextmanager
    def _lending(self) -> Iterator[None]:
        with self._lent_lock:
            self._lent += 1
        try:
            yield
        finally:
            with self._lent_lock:
                self._lent -= 1

    @contextmanager
    def _pooled(self, *, retryable: bool) -> Iterator[Connection]:
        """A pooled connection (autocommit between transactions), errors translated.

        A serialization failure or deadlock is raised as it is when ``retryable`` (the
        caller runs its work again), else as a :class:`StorageError` saying so. It is
        tested before the other operational errors it is a kind of: it means the
        server is there and rolled the work back, not that it is unavailable.
        """
        self._opener.check()  # a forked child would talk on its parent's sockets
        lent: Connection | None = None  # whose lock bound a lock wait's message names
        try:
            with (
                self._pool.connection() as connection,
                self._lending(),
                self._watchdog.watching(connection),
            ):
                lent = connection
                yield connection
        except PoolTimeout as error:
            self._refused_for_disk_full()
            if self._lent >= self._max_size:
                raise DatabaseBusyError(
                    f"all {self._max_size} connections of this process to {self.display}"
                    f" stayed in use for {self._connect_timeout:g} s"
                    f" (RECALLD_POSTGRES_POOL_MAX = {self._max_size}): raise it, or look for"
                    " what holds them (slow statements, lock waits)"
                ) from None
            raise self._unavailable(error) from None
        except RETRYABLE as error:
            if retryable:
                raise
            raise self._conflicted(error) from None
        except psycopg.errors.DiskFull as error:
            # An OperationalError, but not the server being away (a 503 to retry): as a
            # full disk under SQLite, the write was refused until someone frees space.
            # The message reaches REST and MCP clients as it is (as SQLite's does): where
            # the database is, and the server's file, are the log's.
            logger.error("%s: %s", self.display, self._primary(error))
            raise DiskFullError(
                "the disk of the database server is full; nothing was written. Free space"
                " on that server (recalld's log names the database)"
            ) from None
        except (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable) as error:
            # Operational errors too, but the server is there and answered: the work
            # took too long, not the server gone (which a retry at once would find).
            raise self._busy(error, lent) from None
        except psycopg.OperationalError as error:
            raise self._unavailable(error) from None
        except psycopg.Error as error:
            if error.sqlstate in TIMED_OUT:
                raise self._busy(error, lent) from None
            if isinstance(error, psycopg.errors.ReadOnlySqlTransaction):
                raise DatabaseReadOnlyError(self._read_only(error)) from None
            if isinstance(error, psycopg.errors.InsufficientPrivilege):
                raise StorageError(self._not_permitted(error)) from None
            if _nul_refused(error):
                # SQLite stores it; PostgreSQL's text and jsonb cannot: the input's fault.
                raise ValidationError(
                    "text",
                    "holds a NUL character (U+0000), which PostgreSQL cannot store or look up;"
                    " remove it",
                ) from None
            raise StorageError(f"{type(error).__name__}: {_scrub(str(error), self.url)}") from None

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A pooled connection (autocommit between transactions), errors translated."""
        with self._pooled(retryable=False) as connection:
            yield connection

    def _again(self, attempt: Callable[[], T], *, writes: bool = False) -> T:
        """Run ``attempt`` until no serialization failure or deadlock (which rolled it
        back) stops it, for up to ``retry_seconds``; one still there then is a
        :class:`LastingConflictError` for work that ``writes`` (another client's write
        it conflicted with), a :class:`DatabaseBusyError` for a read (a hot standby's
        recovery cancelling it)."""
        deadline = time.monotonic() + self.retry_seconds
        delay = 0.01
        while True:
            try:
                return attempt()
            except RETRYABLE as error:
                if time.monotonic() >= deadline:
                    # Rolled back each time: "database_busy" (503, to send again), as a
                    # conflict that cannot be run again and SQLite's lock held past the
                    # same setting are, not a 500 (review of pass b67).
                    lasting = LastingConflictError if writes else DatabaseBusyError
                    raise lasting(
                        f"{self.display}: the work kept conflicting with other"
                        f" transactions for {self.retry_seconds:g} s"
                        f" (RECALLD_LOCK_RETRY_SECONDS = {self.retry_seconds:g},"
                        f" {self._primary(error)}) and was rolled back: nothing was"
                        " written; send it again"
                    ) from None
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.5)

    def read(self, query: str | sql.Composed, params: Any = None) -> list[tuple[Any, ...]]:
        """Every row of one query (run again after a serialization failure: a hot standby
        cancels a query that conflicts with recovery so)."""

        def attempt() -> list[tuple[Any, ...]]:
            with self._pooled(retryable=True) as connection:
                return connection.execute(query, params).fetchall()

        return self._again(attempt)

    def write(self, operation: Callable[[Connection], T]) -> T:
        """Run ``operation`` in one transaction; a serialization failure or deadlock
        (which rolled it back) runs it again, up to ``retry_seconds``."""

        def attempt() -> T:
            with self._pooled(retryable=True) as connection, connection.transaction():
                return operation(connection)

        return self._again(attempt, writes=True)

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One transaction on a pooled connection, for callers that run code inside it
        (it cannot be run again: a serialization failure or deadlock is a StorageError)."""
        try:
            with self._pooled(retryable=True) as connection, connection.transaction():
                yield connection
        except RETRYABLE as error:
            raise self._conflicted(error) from None

    @property
    def forked(self) -> bool:
        """Whether this process is a fork of the one that opened the pool (whose
        connections, sockets the parent still uses, it must neither use nor close)."""
        return self._opener.forked

    def close(self) -> None:
        """Close every pooled connection (in a forked child: nothing, they are the parent's)."""
        if self.forked:
            return
        self._pool.close()
        self._watchdog.close()


def lock_saying_so(connection: Connection, key: str, waiting: str) -> None:
    """Take the transaction-scoped advisory lock on ``key`` (``hashtextextended``); when
    another transaction holds it, log ``waiting`` first, then wait. recalld's long waits
    (another worker's backfill of every memory, another's HNSW build) were silent: a
    worker started beside one doing that looked hung for minutes (adversarial pass c69)."""
    row = connection.execute(
        "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", (key,)
    ).fetchone()
    if row is not None and row[0]:
        return
    logger.warning("%s", waiting)
    connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))


def rows_waiting_briefly(
    connection: Connection, locking: str, params: Any, wait_ms: int
) -> list[tuple[Any, ...]]:
    """The rows of ``locking`` (a ``SELECT ... FOR UPDATE`` without a wait policy) in the
    open transaction of ``connection``: a row another transaction holds is waited for at
    most ``wait_ms`` (``lock_timeout``, in a savepoint), then skipped (``SKIP LOCKED``).
    The connection's own ``lock_timeout`` is put back for the rest of the transaction."""
    [(previous,)] = connection.execute("SELECT current_setting('lock_timeout')")
    try:
        with connection.transaction():
            connection.execute(f"SET LOCAL lock_timeout = {int(wait_ms)}")
            rows = connection.execute(locking, params).fetchall()
    except psycopg.errors.LockNotAvailable:
        rows = connection.execute(f"{locking} SKIP LOCKED", params).fetchall()
    connection.execute("SELECT set_config('lock_timeout', %s, true)", (previous,))
    return rows
