"""Scrubbing: content that left the database also leaves its files, or we say it has not yet.

A component the :class:`~recalld.service.MemoryService` owns. Every write that
drops content (forget, key overwrite, update, core-memory remove or patch, TTL
purge, an import that replaces a record) records a pending scrub in its own
transaction; right after the commit the service calls :meth:`Scrubber.after_drop`,
which checkpoints and truncates the write-ahead log, waiting for readers of
older snapshots at most ``scrub_wait_seconds``:

- done: the old bytes are gone from the database files; the answer says
  ``"scrub": "done"`` (``"scrubbed": true``);
- a reader (of this or any other process) still holds an older snapshot: the
  answer says ``"scrub": "pending"`` (``"scrubbed": false``), and a background
  thread retries, with short waits so that writers are not held up, until it
  is done. The pending record is durable, so if this process exits first, the
  next process that opens the database finishes it (every process tries on
  open; servers and workers also poll for scrubs other processes left).

``stats`` and ``status`` report how many scrubs are pending.
"""

from __future__ import annotations

import logging
import threading
import time

from recalld.config import Settings
from recalld.errors import DatabaseReplacedError, StorageError
from recalld.model import ScrubState
from recalld.store.base import Store

__all__ = ["ScrubState", "Scrubber"]

logger = logging.getLogger(__name__)

# A background attempt holds new writers up at most this long while readers finish.
BACKGROUND_WAIT_SECONDS = 0.2
# On open and on close, a scrub waits at most this long.
OPEN_CLOSE_WAIT_SECONDS = 0.5
BACKOFF_FACTOR_MAX = 8


class Scrubber:
    """Finishes content-dropping writes: a bounded scrub now, else one in the background."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self._store = store
        self._settings = settings
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._progress = threading.Condition()
        self._thread: threading.Thread | None = None
        self._watching = False

    # -- the foreground ------------------------------------------------------

    def after_drop(self, *, wait: bool = True) -> ScrubState:
        """Scrub after a committed content drop (waiting for readers when ``wait``).

        Returns ``"done"``, or ``"pending"`` after handing the scrub to the
        background thread. Never raises: a failing scrub is a pending one.
        """
        waited = self._settings.scrub_wait_seconds if wait else 0.0
        if self._attempt(waited):
            return "done"
        self._start()
        return "pending"

    def on_open(self) -> None:
        """Finish scrubs a previous process left pending (a crash, or a reader that stayed)."""
        try:
            if self._store.pending_scrubs() == 0:
                return
        except StorageError as error:
            logger.warning("could not check for pending scrubs: %s", error)
            return
        if not self._attempt(OPEN_CLOSE_WAIT_SECONDS):
            self._start()

    def pending(self) -> int:
        """Scrubs of any process not done yet."""
        return self._store.pending_scrubs()

    def wait_until_done(self, timeout: float) -> bool:
        """Block until no scrub is pending (True), or ``timeout`` seconds pass (False)."""
        deadline = time.monotonic() + timeout
        with self._progress:
            while True:
                if self._store.pending_scrubs() == 0:
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._wake.set()
                self._progress.wait(min(remaining, self._settings.scrub_poll_seconds))

    def _attempt(self, wait_seconds: float) -> bool:
        try:
            done = self._store.scrub(wait_seconds)
        except StorageError as error:
            logger.warning("scrubbing failed, it stays pending: %s", error)
            return False
        if done:
            with self._progress:
                self._progress.notify_all()
        return done

    # -- the background ------------------------------------------------------

    def watch(self) -> None:
        """Keep a background thread that also finishes scrubs other processes left pending
        (for long-running processes: servers and workers)."""
        with self._lock:
            self._watching = True
        self._start()

    def _start(self) -> None:
        with self._lock:
            self._wake.set()
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(target=self._run, name="recalld-scrubber", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        poll = self._settings.scrub_poll_seconds
        delay = poll
        while not self._stop.is_set():
            self._wake.clear()
            try:
                pending = self._store.pending_scrubs()
            except DatabaseReplacedError as error:
                # Nothing works again in this process (it holds the old file): it warned
                # every poll for as long as it ran. Said once, and the thread ends, as the
                # worker's and the scheduler's do (review of pass c68).
                logger.error("background scrubbing stopped: %s", error)
                break
            except StorageError as error:
                logger.warning("could not check for pending scrubs: %s", error)
                pending = -1
            if pending > 0:
                if self._attempt(BACKGROUND_WAIT_SECONDS):
                    logger.info("finished %d pending scrub(s)", pending)
                    delay = poll
                    continue
                delay = min(delay * 2, poll * BACKOFF_FACTOR_MAX)
            elif pending == 0:
                delay = poll
                with self._lock:
                    if not self._watching and not self._wake.is_set():
                        self._thread = None
                        return
            self._wake.wait(delay)
        with self._lock:
            self._thread = None

    def close(self) -> None:
        """Stop the background thread; a long-running process (or one with scrubs still
        pending) checkpoints once more, so a clean shutdown leaves the write-ahead log
        folded in and truncated when no reader prevents it."""
        self._stop.set()
        self._wake.set()
        with self._lock:
            thread, watching = self._thread, self._watching
        if thread is not None:
            thread.join(timeout=10)
        try:
            pending = self._store.pending_scrubs()
        except StorageError:
            pending = 0
        if watching or pending:
            self._attempt(OPEN_CLOSE_WAIT_SECONDS)
