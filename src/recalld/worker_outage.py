"""What the worker does with a batch the database could not take (a full disk, a
PostgreSQL restart, another process holding SQLite's write lock): results held for the
next step, jobs handed back past their lease.

A batch's vectors (or extractions) are computed, and storing them fails with
:class:`~recalld.errors.DiskFullError`, :class:`~recalld.errors.DatabaseUnavailableError`,
a :class:`~recalld.errors.DatabaseReadOnlyError` (a hot standby: adversarial pass d65),
or a :class:`~recalld.errors.DatabaseBusyError` other than a statement timeout (another
client's lock on PostgreSQL, a full pool: review of pass b64; SQLite's write lock held
past ``RECALLD_LOCK_RETRY_SECONDS``, :class:`~recalld.errors.DatabaseLockedError`:
adversarial pass a64): no fault of the texts.
Two passes fixed this two ways (adversarial passes c63 and d63), reconciled here (review
of pass d63):

- the results are **held** and stored by the worker's next step, before it claims
  anything, while it still leases their jobs: nothing is embedded again, and no further
  claim counts an attempt (the one the claim counted is the job's, now done);
- once the jobs' lease runs out, another worker may claim them (an attempt counted each
  time: an outage of ``worker_max_attempts`` leases failed a memory for good), so with
  the database still refusing them when less of the lease is left than the longest
  wait between two steps (:func:`longest_step_gap`, two minutes by default; half the
  lease when shorter) they are **handed back**
  (``release_jobs``: queued at once, the claim's attempt taken back) and the held
  results dropped in the same step. A worker that stops holding results hands them
  back too. A release the database cannot take either leaves the results held, and
  the lease decides, as for a crashed worker.

A held result is never stored after its job was handed back: the results are dropped as
the release returns, and each step stores (or fails on) what it holds before it claims,
so a job handed back, reused by an edit (see ``queue_again``) and claimed again by this
same worker id is embedded from the new text. The store's ``complete_jobs`` also skips a
memory whose text changed or that was forgotten meanwhile; a job no longer leased by this
worker it settles only when the job still waits for the same model, the memory's text is
the one embedded and the vector is as long as the model's stored ones
(:func:`recalld.store.semantic.completes`: adversarial pass d65, review of pass d65).
Any other error is no outage: nothing is held, the batch is left to its lease, and its
attempts count (a row the database can never take stops being retried).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, Protocol, TypeVar

from recalld.errors import (
    DatabaseBusyError,
    DatabaseReadOnlyError,
    DatabaseUnavailableError,
    DiskFullError,
    StatementTimeoutError,
    StorageError,
)
from recalld.store.base import Store
from recalld.store.graph import GraphJob
from recalld.store.semantic import Job

__all__ = [
    "DATABASE_AWAY",
    "FAILURE_BACKOFF_MAX_SECONDS",
    "UNTIL_IDLE_DATABASE_TRIES",
    "HeldResults",
    "is_outage",
    "longest_step_gap",
    "release_batch",
    "until_idle_delay",
]

logger = logging.getLogger(__name__)

FAILURE_BACKOFF_MAX_SECONDS = 60.0
# Steps in a row `recalld worker --until-idle` finds the database away before it gives up.
UNTIL_IDLE_DATABASE_TRIES = 8
# What `recalld worker --until-idle` waits out: a database server away, or busy with
# another's work (another process holding SQLite's write lock past
# RECALLD_LOCK_RETRY_SECONDS, another client's lock or a full pool on PostgreSQL: it ended
# the run), or taking no writes for a while (a failover's standby phase: it ended the run
# at once, the held results dropped, review of pass d65; a server read-only for good is
# refused when recalld opens it); a statement timeout is raised again by until_idle_delay
# (the batch's own size).
DATABASE_AWAY = (DatabaseUnavailableError, DatabaseBusyError, DatabaseReadOnlyError)


class _Leased(Protocol):
    @property
    def id(self) -> str: ...


JobT = TypeVar("JobT", bound=_Leased)
ResultT = TypeVar("ResultT")


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` is the database away, full or busy with another client's work
    (a lock it held past ``RECALLD_LOCK_RETRY_SECONDS``, every pooled connection in use),
    not a fault of the batch. A statement the server's timeout cut may be the batch's own
    size: no outage, its attempts count (review of pass b64)."""
    if isinstance(error, StatementTimeoutError):
        return False
    # A server that takes no writes (a hot standby mid-failover) is none of the batch's
    # fault either: its results were dropped and its attempts counted (adversarial pass d65).
    return isinstance(
        error,
        DiskFullError | DatabaseUnavailableError | DatabaseBusyError | DatabaseReadOnlyError,
    )


@dataclass
class _Batch(Generic[ResultT]):
    results: list[ResultT]
    # Before the lease ends by more than a worker's longest wait between two steps
    # (see longest_step_gap; half the lease when that is shorter), so that the step
    # handing the jobs back comes before the lease runs out (see HeldResults.flush).
    hand_back_at: datetime


def _hand_back_at(now: datetime, lease_until: datetime, gap_seconds: float) -> datetime:
    margin = min(gap_seconds, (lease_until - now).total_seconds() / 2)
    return lease_until - timedelta(seconds=max(margin, 0.0))


def longest_step_gap(lock_retry_seconds: float, connect_timeout_seconds: float) -> float:
    """The longest a worker's steps can be apart while the database refuses its results,
    from one step's look at the held jobs' lease to the next step's hand-back: the
    longest back-off (:data:`FAILURE_BACKOFF_MAX_SECONDS`), then that step's failed
    store and its release, each waiting for the database at most as long as a write
    waits for SQLite's lock (``RECALLD_LOCK_RETRY_SECONDS``) or a PostgreSQL connection
    opens (``RECALLD_POSTGRES_CONNECT_TIMEOUT_SECONDS``). A minute alone (the back-off)
    left the release to come after the lease with a lock held 30 s (review of pass a64).
    """
    return FAILURE_BACKOFF_MAX_SECONDS + 2 * max(lock_retry_seconds, connect_timeout_seconds)


class HeldResults(Generic[JobT, ResultT]):
    """One kind's (vectors' or extractions') results held through an outage.

    ``store(results)`` stores results and returns how many jobs it completed;
    ``job_of(result)`` is a result's job; ``release(jobs)`` hands jobs back. Thread-safe:
    a recall's catch-up and the worker's thread may both flush."""

    def __init__(
        self,
        kind: str,
        store: Callable[[list[ResultT]], int],
        job_of: Callable[[ResultT], JobT],
        release: Callable[[Sequence[JobT]], int],
        clock: Callable[[], datetime],
        gap_seconds: float = FAILURE_BACKOFF_MAX_SECONDS,
    ) -> None:
        self._kind = kind
        self._gap_seconds = gap_seconds
        self._store = store
        self._job_of = job_of
        self._release = release
        self._clock = clock
        self._lock = threading.Lock()
        self._batches: list[_Batch[ResultT]] = []

    def __len__(self) -> int:
        with self._lock:
            return sum(len(batch.results) for batch in self._batches)

    def holds(self, job_id: str) -> bool:
        """Whether a result of job ``job_id`` is held."""
        with self._lock:
            return any(
                self._job_of(result).id == job_id
                for batch in self._batches
                for result in batch.results
            )

    def store(self, results: list[ResultT], lease_until: datetime) -> int:
        """Store ``results``; on an outage hold them (see the module) and raise."""
        try:
            return self._store(results)
        except Exception as error:
            if is_outage(error):
                with self._lock:
                    hand_back_at = _hand_back_at(self._clock(), lease_until, self._gap_seconds)
                    self._batches.append(_Batch(results, hand_back_at))
            raise

    def flush(self) -> int:
        """Store what is held, before any claim; how many jobs that completed. On an
        outage again, hand back the jobs whose lease runs out before the worker's next
        step may come, and raise. Handed back only once their lease had run out, another
        worker's claim could come first, counting an attempt each outage (a full disk
        takes the claims' small writes): ``worker_max_attempts`` such leases failed the
        jobs for good (adversarial pass a64)."""
        with self._lock:
            if not self._batches:
                return 0
            done = 0
            while self._batches:
                batch = self._batches[0]
                try:
                    done += self._store(batch.results)
                except Exception as error:
                    if not is_outage(error):
                        # No outage now: the batch is left to its lease (see the module).
                        self._batches.pop(0)
                        raise
                    self._give_back(lambda held: held.hand_back_at <= self._clock())
                    raise
                self._batches.pop(0)
                logger.info(
                    "stored the %s of %d jobs a database failure held back",
                    self._kind,
                    len(batch.results),
                )
            return done

    def give_back(self) -> None:
        """Hand back every held job (the worker stops); a release the database cannot
        take is logged, and the jobs' lease decides."""
        with self._lock:
            self._give_back(lambda _: True)

    def _give_back(self, due: Callable[[_Batch[ResultT]], bool]) -> None:
        kept: list[_Batch[ResultT]] = []
        for batch in self._batches:
            if not due(batch):
                kept.append(batch)
                continue
            try:
                self._release([self._job_of(result) for result in batch.results])
            except StorageError as error:
                logger.warning(
                    "could not hand back %d jobs (they run again when their lease expires): %s",
                    len(batch.results),
                    error,
                )
                kept.append(batch)
        self._batches = kept


def release_batch(
    store: Store,
    worker_id: str,
    jobs: Sequence[object],
    now: datetime,
    held: Sequence[HeldResults[Any, Any]],
) -> None:
    """Hand back the jobs of a batch the store failed to settle (a full disk, a database
    gone away) whose results are not held (adversarial pass c63).

    Left to their lease, the jobs ran again only after it expired, and each claim had
    counted an attempt: an outage of ``worker_max_attempts`` leases (ten minutes by
    default) failed every job in flight for good, so those memories were never indexed
    once the disk had room again. A store still failing here cannot take this write
    either: the lease then decides, as before. Only for those passing failures: another
    database error (one a job's own row may cause) still counts its attempts, so a batch
    failing that way for good stops being retried."""
    jobs = [job for job in jobs if not any(kind.holds(getattr(job, "id", "")) for kind in held)]
    graph_jobs = [job for job in jobs if isinstance(job, GraphJob)]
    embedding_jobs = [job for job in jobs if isinstance(job, Job)]
    try:
        if graph_jobs:  # a batch is of one kind
            store.graph.release_jobs(worker_id, graph_jobs, now)
        if embedding_jobs:
            store.semantic.release_jobs(worker_id, embedding_jobs, now)
    except StorageError as error:
        logger.warning(
            "could not hand back %d jobs (they run again when their lease expires): %s",
            len(jobs),
            error,
        )


def until_idle_delay(
    failures: int, error: StorageError, poll_seconds: float, stopping: bool
) -> float:
    """How long ``recalld worker --until-idle`` waits after its ``failures``-th step in a
    row that found the database away (PostgreSQL restarting, a failover), busy with
    another's work or read-only (:data:`DATABASE_AWAY`): doubling from twice
    ``worker_poll_seconds`` up to a minute, as :meth:`Worker.run_forever` does. Raises
    ``error`` at the ``UNTIL_IDLE_DATABASE_TRIES``-th (about three minutes, more the lock
    waits), once the worker is stopping, or at once for a statement timeout (the batch's
    own size: waiting would not help) (adversarial passes d63, a64, b64)."""
    if (
        failures >= UNTIL_IDLE_DATABASE_TRIES
        or stopping
        or isinstance(error, StatementTimeoutError)
    ):
        raise error
    delay = min(poll_seconds * float(2 ** min(failures, 16)), FAILURE_BACKOFF_MAX_SECONDS)
    if isinstance(error, DatabaseBusyError):
        state = "busy"
    elif isinstance(error, DatabaseReadOnlyError):
        state = "read-only"
    else:
        state = "unavailable"
    logger.warning(
        "the database is %s (%d in a row), retrying in %.1f s: %s",
        state,
        failures,
        delay,
        error,
    )
    return delay
