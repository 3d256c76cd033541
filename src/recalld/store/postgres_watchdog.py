"""Ending the wait on a PostgreSQL server that stopped answering.

A server that stops responding without closing its connections (its processes stopped
or hung, or its host gone without a reset) leaves every statement in flight waiting for
ever. On the same machine the kernel still acknowledges what is sent, so neither TCP
keepalives nor ``tcp_user_timeout`` end the wait (they do when the network or the host
is gone, and :class:`~recalld.store.postgres_connection.PostgresDatabase` sets them), and
``statement_timeout`` is kept by the server that is not running. Only the client can end
it.

A :class:`Watchdog` watches the pool's connections while they are lent out. When one has
had a statement in flight for longer than its patience, it opens a new connection to the
server, bounded by the connect timeout. A server that accepts it is working (the
statement is merely long: a ``VACUUM``, a migration, a wait for a lock) and nothing
happens; a server that does not answer within the timeout is answering no one, and the
socket of every connection with a statement in flight is shut down: the waiting thread
wakes with an error (the request answers 503) and the pool discards the connection. A
request on a stopped server so answers within about the patience (half the connect
timeout) plus the connect timeout.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import psycopg.errors
from psycopg import pq

__all__ = ["Watchdog"]

logger = logging.getLogger(__name__)

Connection = psycopg.Connection[tuple[Any, ...]]


@dataclass
class _Watch:
    connection: Connection
    since: float
    cut: bool = False


def _busy(connection: Connection) -> bool:
    """Whether a statement of ``connection`` waits for the server's answer."""
    return connection.pgconn.transaction_status == pq.TransactionStatus.ACTIVE


def _shut(connection: Connection) -> None:
    """Shut the connection's socket down (a copy of its descriptor: libpq keeps its own,
    which it closes when the pool discards the broken connection)."""
    try:
        with socket.socket(fileno=os.dup(connection.pgconn.socket)) as copy:
            copy.shutdown(socket.SHUT_RDWR)
    except (OSError, psycopg.Error) as error:
        logger.debug("could not shut a stalled connection down: %s", error)


class Watchdog:
    """Cuts the lent-out connections of a server that stopped answering."""

    def __init__(self, parameters: dict[str, Any], connect_timeout: float, display: str) -> None:
        self._parameters = {**parameters, "connect_timeout": max(1, round(connect_timeout))}
        self._connect_timeout = connect_timeout
        self._patience = connect_timeout / 2
        self._display = display
        self._lock = threading.Lock()
        self._watched: dict[int, _Watch] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._next_probe = 0.0

    @contextmanager
    def watching(self, connection: Connection) -> Iterator[None]:
        """Watch ``connection`` while the block runs; an error of a connection this cut
        says that the server stopped answering."""
        watch = _Watch(connection, time.monotonic())
        with self._lock:
            self._watched[id(watch)] = watch
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._run, name="recalld-postgres-watchdog", daemon=True
                )
                self._thread.start()
        try:
            yield
        except psycopg.OperationalError:
            if not watch.cut:
                raise
            waited = time.monotonic() - watch.since
            raise psycopg.OperationalError(
                f"the server gave no answer for {waited:.0f} s and took no new connection"
                f" within {self._connect_timeout:g} s (stopped or hung)"
            ) from None
        finally:
            with self._lock:
                del self._watched[id(watch)]

    def _run(self) -> None:
        tick = min(1.0, self._patience / 2)
        while not self._stop.wait(tick):
            now = time.monotonic()
            with self._lock:
                overdue = any(
                    now - watch.since >= self._patience and _busy(watch.connection)
                    for watch in self._watched.values()
                )
            if not overdue or now < self._next_probe:
                continue
            if self._answers():
                # Only long: look again after another patience.
                self._next_probe = time.monotonic() + self._patience
                continue
            with self._lock:
                stalled = [watch for watch in self._watched.values() if _busy(watch.connection)]
                for watch in stalled:
                    watch.cut = True
                    _shut(watch.connection)
            if stalled:
                logger.warning(
                    "%s took no new connection within %g s: cut %d connection(s) waiting"
                    " for its answer",
                    self._display,
                    self._connect_timeout,
                    len(stalled),
                )

    def _answers(self) -> bool:
        """Whether the server takes a new connection within the connect timeout (a
        refusal is an answer too: only silence means it stopped)."""
        try:
            psycopg.connect(**self._parameters, autocommit=True).close()
        except psycopg.errors.ConnectionTimeout:
            return False
        except psycopg.Error:
            return True
        return True

    def close(self) -> None:
        """Stop watching."""
        self._stop.set()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout=self._connect_timeout + 5)
