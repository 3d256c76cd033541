"""Change notifications from PostgreSQL: ``LISTEN`` on one channel, a counter watchers wait on.

Triggers (migrations 4 and 5) ``NOTIFY`` :data:`~recalld.store.postgres_migrations.CHANGES_CHANNEL`
in the transaction that changes core memory or a pending queue, whichever
server ran it; PostgreSQL delivers the notification to every listening
connection when that transaction commits. One daemon thread per store keeps
a dedicated connection listening (started by the first :meth:`PostgresChangeFeed.wait`,
so short CLI commands never start it) and bumps a counter per notification.
When the connection drops it reconnects with backoff and bumps the counter
once more, since changes made meanwhile were not heard: watchers then re-check.
Its ``idle_session_timeout`` is off (the connection is idle by design).
"""

from __future__ import annotations

import logging
import threading

import psycopg

from recalld.errors import StorageError
from recalld.store.postgres_connection import Connection, PostgresDatabase
from recalld.store.postgres_migrations import CHANGES_CHANNEL

__all__ = ["PostgresChangeFeed"]

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.5
RECONNECT_MAX_SECONDS = 10.0


class PostgresChangeFeed:
    """:class:`~recalld.store.base.ChangeFeed` over ``LISTEN/NOTIFY``."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._database = database
        self._count = 0
        self._condition = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._listening = threading.Event()

    def _start(self) -> None:
        with self._condition:
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(
                target=self._listen, name="recalld-postgres-listen", daemon=True
            )
            self._thread.start()

    def wait(self, after: int, timeout: float) -> int:
        """Block until a change numbered above ``after`` arrives or ``timeout`` passes."""
        self._start()
        with self._condition:
            self._condition.wait_for(
                lambda: self._count > after or self._stop.is_set(), timeout=timeout
            )
            return self._count

    def listening(self, timeout: float) -> bool:
        """Wait until the listener is connected (tests, and callers that must not miss one)."""
        self._start()
        return self._listening.wait(timeout)

    def _bump(self) -> None:
        with self._condition:
            self._count += 1
            self._condition.notify_all()

    def _listen(self) -> None:
        delay = 0.1
        while not self._stop.is_set():
            connection: Connection | None = None
            try:
                connection = self._database.connect(autocommit=True)
                # Idle between notifications by design: an idle_session_timeout the
                # database sets (for forgotten clients) would end it again and again.
                connection.execute("SET idle_session_timeout = 0")
                connection.execute(f"LISTEN {CHANGES_CHANNEL}")
                self._listening.set()
                delay = 0.1
                self._bump()  # anything may have changed while nobody listened
                while not self._stop.is_set():
                    for _notification in connection.notifies(timeout=POLL_SECONDS):
                        self._bump()
            except (psycopg.Error, StorageError) as error:
                self._listening.clear()
                if not self._stop.is_set():
                    logger.warning("change notifications interrupted (%s); reconnecting", error)
                    self._stop.wait(delay)
                    delay = min(delay * 2, RECONNECT_MAX_SECONDS)
            finally:
                if connection is not None:
                    connection.close()
        self._listening.clear()

    def close(self) -> None:
        """Stop listening and wake every waiter."""
        self._stop.set()
        with self._condition:
            self._condition.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=5 * POLL_SECONDS + 1)
