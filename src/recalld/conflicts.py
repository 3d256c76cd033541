"""Run a write again when PostgreSQL broke it as a deadlock or serialization failure.

The service's writes run their code inside :meth:`Store.transaction`, which the store
cannot run again itself (the body is the caller's). When PostgreSQL picks such a
transaction as a deadlock's victim, or cannot serialise it, it rolls the whole of it
back and the store raises :class:`~recalld.errors.WriteConflictError`: nothing of the
attempt was written, so the operation (parsing done, its transaction begun afresh) can
simply be run again, and meets the other client's committed work. Mixed
knowledge-graph traffic from two servers met a few such conflicts a minute, each a 503
to the user (adversarial pass a68).

Only that error is run again: every other one (a lock held past the setting, a
statement timeout, a refused input) is answered at once. SQLite never raises it (its
writers queue for one lock), so there this is a plain call.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from recalld.errors import LastingConflictError, WriteConflictError

__all__ = ["CONFLICT_ATTEMPTS", "after_commit", "rerun_on_conflict", "rerunning_on_conflict"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
P = ParamSpec("P")

# Attempts in all, the first included: a deadlock's other party has committed by the
# time the victim runs again, so a second conflict is rare and a fifth one means
# contention the caller should hear about (503 database_busy, to send again).
CONFLICT_ATTEMPTS = 5
# The first pause, doubled after each conflict, each one stretched by up to as much
# again at random so that two victims of one another do not meet again in step
# (at most about 0.6 s of pauses in all).
FIRST_PAUSE_SECONDS = 0.02
# Set on a WriteConflictError raised by work after an operation's commit (after_commit).
_AFTER_COMMIT = "_recalld_after_commit"


def rerun_on_conflict(operation: Callable[[], T], *, what: str) -> T:
    """``operation()``, run again (up to :data:`CONFLICT_ATTEMPTS` in all, with jittered
    backoff) while it raises :class:`WriteConflictError`; the last one is raised.

    ``operation`` must be one transaction from start to end, so that a conflict left
    nothing of it written, and must keep no state of its own between attempts. ``what``
    names the operation in the log.
    """
    pause = FIRST_PAUSE_SECONDS
    for attempt in range(1, CONFLICT_ATTEMPTS + 1):
        try:
            return operation()
        except WriteConflictError as error:
            if (
                attempt == CONFLICT_ATTEMPTS
                or getattr(error, _AFTER_COMMIT, False)
                # The store ran it again for RECALLD_LOCK_RETRY_SECONDS already.
                or isinstance(error, LastingConflictError)
            ):
                raise
            logger.info(
                "%s conflicted with another client's write (attempt %d of %d); running it again",
                what,
                attempt,
                CONFLICT_ATTEMPTS,
            )
            time.sleep(pause * (1 + random.random()))
            pause *= 2
    raise AssertionError("unreachable: the last attempt returns or raises")


def rerunning_on_conflict(what: str) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """A method run whole again by :func:`rerun_on_conflict`: for one whose checks are
    pure and whose writes are one transaction; what it does after the commit goes through
    :func:`after_commit`, so that a conflict there is not run again."""

    def decorate(method: Callable[P, T]) -> Callable[P, T]:
        @functools.wraps(method)
        def rerun(*args: P.args, **kwargs: P.kwargs) -> T:
            return rerun_on_conflict(lambda: method(*args, **kwargs), what=what)

        return rerun

    return decorate


def after_commit(work: Callable[P, T]) -> Callable[P, T]:
    """``work`` as run after an operation's commit (the forget's scrub, inside a method
    :func:`rerunning_on_conflict` wraps whole): a :class:`WriteConflictError` it raises
    is raised as it is, never run again with the operation, whose commit stands (run
    again, a delete found nothing left and answered its entities "not found", review of
    pass a68)."""

    @functools.wraps(work)
    def marked(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return work(*args, **kwargs)
        except WriteConflictError as error:
            setattr(error, _AFTER_COMMIT, True)
            raise

    return marked
