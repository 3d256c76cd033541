"""The clock-driven scheduler: fires time-only intentions when they come due.

Every long-running process runs one (``recalld serve``, ``recalld mcp``,
``recalld worker``; ``scheduler_thread=True`` in any service). Each step,
:meth:`Scheduler.run_due`, claims and fires everything due in one write
transaction, so two processes never deliver the same firing: the second sees
the first's committed ``next_due``. Between steps the thread waits until the
earliest due time (read from the database, so intentions written by other
processes count), at most ``scheduler_poll_seconds``; :meth:`Scheduler.wake`
ends the wait at once (a new intention in this process, a test moving its clock).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from recalld._time import Clock
from recalld.config import Settings
from recalld.errors import DatabaseReplacedError, RecalldError
from recalld.recollection.cue import Recollection

__all__ = ["Scheduler"]

logger = logging.getLogger(__name__)

RunDue = Callable[[datetime], list[Recollection]]
NextDue = Callable[[], datetime | None]


class Scheduler:
    """A thread that runs ``run_due`` at each due time, or when woken."""

    def __init__(
        self,
        run_due: RunDue,
        next_due: NextDue,
        settings: Settings,
        clock: Clock,
        on_fired: Callable[[list[Recollection]], None] | None = None,
    ) -> None:
        self._run_due = run_due
        self._next_due = next_due
        self._poll_seconds = settings.scheduler_poll_seconds
        self._clock = clock
        self._on_fired = on_fired
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Why run_forever ended on its own (the database was replaced under the process),
        # and set when it did: `recalld worker` without a worker waits on it to exit 1.
        self.stopped_by: DatabaseReplacedError | None = None
        self.gave_up = threading.Event()

    def wait_seconds(self, now: datetime) -> float:
        """How long the thread may sleep from ``now``: until the next due time, bounded."""
        due = self._next_due()
        if due is None:
            return self._poll_seconds
        return min(self._poll_seconds, max(0.0, (due - now).total_seconds()))

    def step(self) -> list[Recollection]:
        """Fire what is due at the clock's time (what the thread does each time it wakes).

        Looks first with a read: firing is a write transaction, and one on every poll
        with nothing due waited for another process's write lock (a long import), up to
        ``RECALLD_LOCK_RETRY_SECONDS``, and logged a failed step each time (review of
        pass a64)."""
        now = self._clock()
        due = self._next_due()
        if due is None or due > now:
            return []
        fired = self._run_due(now)
        if fired and self._on_fired is not None:
            self._on_fired(fired)
        return fired

    def run_forever(self) -> None:
        """Step, then wait for the next due time (or a wake), until :meth:`stop`."""
        while not self._stop.is_set():
            try:
                self.step()
                delay = self.wait_seconds(self._clock())
            except DatabaseReplacedError as error:
                # Nothing works again in this process (it holds the old file): it failed
                # every poll for as long as it ran. Said once, and the thread ends.
                logger.error("intention scheduler stopped: %s", error)
                self.stopped_by = error
                self.gave_up.set()
                return
            except RecalldError as error:
                # The database may be briefly unavailable; the thread must outlive it.
                logger.warning("intention scheduler step failed: %s", error)
                delay = self._poll_seconds
            self._wake.wait(delay)
            self._wake.clear()

    def wake(self) -> None:
        """End the current wait now (something new may be due)."""
        self._wake.set()

    def start(self) -> None:
        """Run :meth:`run_forever` in a daemon thread (idempotent)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self.run_forever, name="recalld-scheduler", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Ask the thread to finish and wait for it."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    @property
    def running(self) -> bool:
        """Whether the thread is alive."""
        return self._thread is not None and self._thread.is_alive()
