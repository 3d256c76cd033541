"""The one exception tree every recalld caller sees.

::

    RecalldError
    ├── ValidationError   bad input; names the field and the limit; nothing was changed
    ├── NotFoundError     no memory with that id / key / seq in the namespace
    ├── ConflictError     the write contradicts what is stored (id or key already taken)
    │   └── PreconditionFailedError   the memory changed since the caller read it
    ├── StorageError      the database failed (unwritable path, corrupt file, lock timeout)
    │   ├── DiskFullError the disk holding the database is full
    │   ├── DatabaseUnavailableError   the database server cannot be reached (yet)
    │   ├── DatabaseReadOnlyError   the PostgreSQL server takes no writes (a hot standby)
    │   ├── DatabaseReplacedError   the SQLite file was moved or replaced under the process
    │   └── DatabaseBusyError   the server is there but did not do the work in time
    │       ├── StatementTimeoutError   the server's timeout cut recalld's statement
    │       ├── WriteConflictError      PostgreSQL broke a deadlock or serialization failure
    │       └── DatabaseLockedError     another connection held SQLite's write lock too long
    └── EmbeddingError    the embedding model could not be loaded or could not embed
        └── EmbedderUnavailableError   the embedding endpoint cannot be reached (yet)

Each adapter translates these once: the CLI into an exit message, HTTP into a
status code, MCP into a tool error.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AuthenticationError",
    "ConflictError",
    "DatabaseBusyError",
    "DatabaseLockedError",
    "DatabaseReadOnlyError",
    "DatabaseReplacedError",
    "DatabaseUnavailableError",
    "DiskFullError",
    "EmbedderUnavailableError",
    "EmbeddingError",
    "LastingConflictError",
    "NotFoundError",
    "PermissionDeniedError",
    "PreconditionFailedError",
    "RecalldError",
    "StatementTimeoutError",
    "StorageError",
    "ValidationError",
    "WriteConflictError",
]


class RecalldError(Exception):
    """Root of every error recalld raises on purpose.

    Every one pickles and copies as it is (type, message and attributes such as
    ``field``), so it crosses a process boundary (``multiprocessing``,
    ``concurrent.futures``) whatever arguments its class takes.
    """

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception's own pickling calls the class with ``args`` (the one message), which
        # fails for the classes taking (field, message) or richer arguments: a pool
        # worker's ValidationError then broke the pool instead of reaching the caller.
        return (_rebuilt, (type(self), self.args, dict(self.__dict__)))


def _rebuilt(cls: type[RecalldError], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    """A pickled :class:`RecalldError` again, without calling its ``__init__``."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class ValidationError(RecalldError):
    """Input that recalld refuses; ``field`` names the offending argument."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


class NotFoundError(RecalldError):
    """The requested memory does not exist (or is expired, or in another namespace)."""


class ConflictError(RecalldError):
    """The write contradicts stored state; ``field`` names what collided."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


class PreconditionFailedError(ConflictError):
    """An update made from an earlier read found the memory changed since (another
    client's edit): nothing was written. ``field`` names the expected version's argument
    (``expected_version``; over HTTP the ``If-Match`` header)."""


class StorageError(RecalldError):
    """The database could not do what was asked (I/O, disk full, corruption, lock timeout)."""


class DiskFullError(StorageError):
    """The disk holding the database is full: nothing was written (forget still works)."""


class DatabaseUnavailableError(StorageError):
    """The database server cannot be reached (down, restarting, refusing connections).

    Transient: the same request succeeds once the server is back (HTTP 503).
    """


class DatabaseReadOnlyError(StorageError):
    """The PostgreSQL server recalld reached takes no writes: a hot standby (a failover
    not finished, or a URL naming a replica), or ``default_transaction_read_only`` set
    for the database or role. Nothing was written; the message says what to change.

    No fault of the work: the worker holds its results, as through an outage, and
    stores them once the server takes writes again.
    """


class DatabaseReplacedError(StorageError):
    """The SQLite database file, or its ``-wal`` or ``-shm``, was moved, deleted or
    replaced while this process had it open (a backup restored while recalld ran).
    Nothing was read or written, and nothing will be until the process is started
    again: it still holds the old file. The worker and the reminder scheduler stop on
    it rather than fail every second for as long as the process runs.
    """

    #: What a server tells its clients (REST, MCP): only a restart helps, and the message
    #: names the file, which stays in the server's log (review of pass c68).
    told = (
        "the database file was moved, deleted or replaced while this server had it open (a"
        " backup restored under it?): nothing was read or written, as the server still holds"
        " the old file; restart the server to open the one there now"
    )


class DatabaseBusyError(StorageError):
    """The database server answers, but did not do the work in time: a lock another
    client held past ``RECALLD_LOCK_RETRY_SECONDS``, every pooled connection in use, or
    a statement cut by the server's timeout (:class:`StatementTimeoutError`).

    Nothing was written; the same request may succeed later (HTTP 503 ``database_busy``
    with ``Retry-After``). Another client's lock or a full pool is no fault of the work:
    the worker holds its results and tries again without counting an attempt, as for
    :class:`DatabaseUnavailableError`.
    """


class StatementTimeoutError(DatabaseBusyError):
    """The server's ``statement_timeout`` (or ``transaction_timeout``) cut a statement of
    recalld's: nothing was written. It may be the work's own size, so the worker counts
    it as a failed attempt (a batch too slow for the timeout fails after
    ``RECALLD_WORKER_MAX_ATTEMPTS`` rather than being retried for ever).
    """


class WriteConflictError(DatabaseBusyError):
    """PostgreSQL chose this transaction as a deadlock's victim, or could not serialise it
    with another client's: it was rolled back whole, so nothing was written, and the same
    work run again meets the other's committed result. The service runs its own writes
    again a few times before answering it (:func:`recalld.conflicts.rerun_on_conflict`);
    what still reaches a caller is HTTP 503 ``database_busy`` with ``Retry-After``.
    """


class LastingConflictError(WriteConflictError):
    """A write the store itself ran again after each deadlock or serialization failure,
    for ``RECALLD_LOCK_RETRY_SECONDS``, still conflicting: told as the conflict it is (503
    ``database_busy``, "conflicted with other clients' writes", not "a lock another client
    holds", adversarial pass c69), and not run again by the service, which would wait that
    long again for each of its attempts.
    """


class DatabaseLockedError(DatabaseBusyError):
    """Another connection (another recalld process, or a tool holding the file open) held
    SQLite's write lock past ``RECALLD_LOCK_RETRY_SECONDS``: nothing was written.

    Transient: the same write succeeds once that other write is done (HTTP 503
    ``database_busy`` with ``Retry-After``; the worker holds its results, as for
    :class:`DatabaseBusyError`).
    """


class EmbeddingError(RecalldError):
    """The embedder failed: a missing or corrupt model file, or a failing embedding endpoint."""


class EmbedderUnavailableError(EmbeddingError):
    """The embedding endpoint did not answer (unreachable, timed out, overloaded), or
    failed so lately that recalld is leaving it alone for a while (see
    :mod:`recalld.embeddings.endpoint_rest`).

    Transient: the same request succeeds once the endpoint answers again (HTTP 503).
    """


class AuthenticationError(RecalldError):
    """The caller did not prove who it is: no bearer token, or an unknown or revoked one."""


class PermissionDeniedError(RecalldError):
    """The caller is known, but its scopes do not allow this namespace or this access.

    ``field`` names the argument that asked for it (``namespace`` unless another one,
    such as mem0's ``user_id``, named the namespace).
    """

    def __init__(self, message: str, field: str = "namespace") -> None:
        self.field = field
        self.message = message
        super().__init__(message)
