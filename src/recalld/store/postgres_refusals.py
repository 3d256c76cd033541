"""Why the server refused recalld's last new connection, when that reason is a full disk.

A PostgreSQL server whose disk is full may refuse new connections (a backend that
cannot write a file it needs at start ends with ``FATAL: could not write to file …: No
space left on device``). The pool retries such connections in the background and a
request waiting for one only learns ``couldn't get a connection``: it was answered
``database_unavailable`` ("retry shortly") where the disk is what to fix, and the worker
waited it out as a server away. :class:`Refusals` keeps the last refusal's reason, set by
every failed connection and cleared by every successful one, for
:class:`~recalld.store.postgres_connection.PostgresDatabase` to say ``disk_full``
instead (adversarial pass d65).

A refused connection's error carries no SQLSTATE (psycopg's ``sqlstate`` and ``diag``
are empty: libpq keeps only the message), so the reason is read from the operating
system's words for ``ENOSPC`` ending a line of it, as the server's ``%m`` ends its
message (``could not write init file: No space left on device``); the same words inside
a quoted name (a database or role so named) are no full disk (review of pass d65). A
server whose ``lc_messages`` is not English has them translated too (the C library's
``strerror``): its full disk is then said as ``database_unavailable``, as before, and
so is one whose message names no reason (a bare ``could not write init file``, as older
servers say): a full disk missed is a 503 to retry, another refusal taken for one would
send the operator to free space that is there.
"""

from __future__ import annotations

import threading
from typing import Any, Self

import psycopg

__all__ = ["Refusals", "disk_full_reason"]

# strerror(ENOSPC) on Linux, the BSDs and macOS, which the server quotes as it is.
_DISK_FULL_WORDS = "No space left on device"


def disk_full_reason(error: BaseException) -> str | None:
    """The server's line saying its disk is full, from a refused connection's ``error``
    (None: it was refused for another reason)."""
    for line in str(error).splitlines():
        if line.rstrip().endswith(f": {_DISK_FULL_WORDS}"):
            # "connection failed: connection to server at …, port … failed: FATAL:  …"
            return line.rpartition("FATAL:")[2].strip() or line.strip()
    return None


class Refusals:
    """The last new connection's outcome: a full disk's reason, or None."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._disk_full: str | None = None

    @property
    def disk_full(self) -> str | None:
        """Why the last new connection was refused, when the server's disk was full."""
        with self._lock:
            return self._disk_full

    def record(self, error: BaseException | None) -> None:
        """A new connection failed with ``error`` (None: one succeeded)."""
        with self._lock:
            self._disk_full = None if error is None else disk_full_reason(error)

    def connection_class(self) -> type[psycopg.Connection[tuple[Any, ...]]]:
        """A connection class for the pool whose ``connect`` records its outcome here."""
        refusals = self

        class RecordedConnection(psycopg.Connection[tuple[Any, ...]]):
            @classmethod
            def connect(cls, *args: Any, **kwargs: Any) -> Self:
                try:
                    connection = super().connect(*args, **kwargs)
                except psycopg.OperationalError as error:
                    refusals.record(error)
                    raise
                refusals.record(None)
                return connection

        return RecordedConnection
