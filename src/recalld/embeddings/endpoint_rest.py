"""How long recalld leaves an embedding endpoint alone after it stopped answering.

Without this, an endpoint that hangs (an overloaded server, a network that drops packets)
cost every embedding asked of it its whole timeout (60 s by default): each recall waited
that long for its query's vector, and a recall's catch-up, or a worker, for a batch and
then once more for every text of it retried alone, several minutes for one recall.

A request that cannot reach the endpoint, gets no whole answer within the timeout, or is
answered 429, 502, 503 or 504 puts the endpoint to rest: for 5 s, doubled after each
failed try up to 60 s, every embedding asked of it fails at once with
:class:`~recalld.errors.EmbedderUnavailableError` rather than waiting again. After the
rest, one request at a time tries the endpoint (others still fail at once until it
answers); any answer, even a refusal such as a 400, ends the rest. A request sent before
the endpoint last answered and failing only after it (a slow one of the first outage)
rests nothing: the endpoint has answered since. Meanwhile a recall
answers from the keyword index (its hits list ``vector-unavailable``), a recall's
catch-up embeds nothing, and a worker claims no job (no job uses up an attempt on an
endpoint known to be down).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from recalld.errors import EmbedderUnavailableError

__all__ = ["FIRST_REST_SECONDS", "LONGEST_REST_SECONDS", "EndpointRest", "Resting", "Sent"]

FIRST_REST_SECONDS = 5.0
LONGEST_REST_SECONDS = 60.0


@runtime_checkable
class Resting(Protocol):
    """An embedder that can say it should not be asked now (see the module)."""

    def available(self) -> bool:
        """False while its endpoint rests, or while another request tries it again."""
        ...


@dataclass(frozen=True)
class Sent:
    """A request :meth:`EndpointRest.enter` let go: after how many answers, and whether it
    is the one request trying the endpoint again after its rest."""

    answers: int
    trying: bool


class EndpointRest:
    """The rest of one endpoint (thread-safe); ``shown`` names it in messages."""

    def __init__(self, shown: str, clock: Callable[[], float] = time.monotonic) -> None:
        self._shown = shown
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0  # failed tries in a row; 0: the endpoint answers, no gate
        self._until = 0.0  # the rest ends then (clock seconds)
        self._failed_at = 0.0
        self._reason = ""
        self._trying = False  # a request tries the endpoint after its rest
        self._answers = 0  # answers so far: a request sent before the last one is stale

    def available(self) -> bool:
        """Whether a request would be sent now (see :meth:`enter`)."""
        with self._lock:
            return self._failures == 0 or (not self._trying and self._clock() >= self._until)

    def enter(self) -> Sent:
        """Before a request: raises :class:`EmbedderUnavailableError` while the endpoint
        rests or another request tries it again; otherwise the request may go (what it
        returns is for :meth:`failed` or :meth:`abandoned`)."""
        with self._lock:
            if self._failures == 0:
                return Sent(self._answers, trying=False)
            now = self._clock()
            if now < self._until:
                raise EmbedderUnavailableError(
                    f"{self._shown} failed {now - self._failed_at:.0f} s ago"
                    f" ({self._reason}); recalld asks it again in {self._until - now:.0f} s"
                )
            if self._trying:
                raise EmbedderUnavailableError(
                    f"{self._shown} failed {now - self._failed_at:.0f} s ago"
                    f" ({self._reason}); another request is trying it again"
                )
            self._trying = True
            return Sent(self._answers, trying=True)

    def answered(self) -> None:
        """The endpoint answered (whatever it said): no rest any more."""
        with self._lock:
            self._failures = 0
            self._trying = False
            self._answers += 1

    def abandoned(self, sent: Sent) -> None:
        """The request ``sent`` was given up without an answer or a failure (interrupted):
        the next request may try the endpoint again; the rest is as it was."""
        with self._lock:
            if sent.trying:
                self._trying = False

    def failed(self, reason: str, sent: Sent) -> EmbedderUnavailableError:
        """The request ``sent`` got no answer (``reason``: what happened, without the
        endpoint's name): the endpoint rests, longer after each failed try, unless it has
        answered since the request was sent; returns the error to raise."""
        with self._lock:
            if sent.trying:
                self._trying = False
            if sent.answers != self._answers:
                return EmbedderUnavailableError(
                    f"{self._shown} failed: {reason} (it has answered another request since)"
                )
            now = self._clock()
            # Requests sent together before the first failure came back count once.
            if self._failures == 0 or now >= self._until:
                self._failures += 1
                rest = min(FIRST_REST_SECONDS * 2 ** (self._failures - 1), LONGEST_REST_SECONDS)
                self._until = now + rest
            self._failed_at = now
            self._reason = reason
            return EmbedderUnavailableError(
                f"{self._shown} failed: {reason}; recalld asks it again in"
                f" {self._until - now:.0f} s"
            )
