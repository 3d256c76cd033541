"""The protocol prospective memory needs from a store (see :mod:`recalld.intentions`).

An intention is a memory row (kind ``intention``) plus an ``intentions`` row
(firing state), one row per trigger and, for sustained signal triggers, the
current streak of readings. Every table references ``memories(seq)`` with
``ON DELETE CASCADE``: ``forget`` removes all of it, and any queued reminder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypeVar

from recalld.model import Memory

__all__ = [
    "IntentionRecord",
    "IntentionRow",
    "IntentionSession",
    "IntentionStore",
    "Lookup",
    "ReminderDraft",
    "Streak",
    "TriggerRecord",
]

T = TypeVar("T")


@dataclass(frozen=True)
class TriggerRecord:
    """One trigger as stored: its JSON spec and the columns candidate lookups use."""

    type: str
    spec: dict[str, Any]
    term: str | None = None
    box: tuple[float, float, float, float] | None = None
    """A place trigger's (low lat, high lat, low lon, high lon) around its circle."""


@dataclass(frozen=True)
class IntentionRecord:
    """The firing state written with a new intention."""

    namespace: str
    repeat: str
    min_interval_seconds: float
    zone: str
    scheduled: bool
    triggers: Sequence[TriggerRecord]
    created_at: datetime
    expires_at: datetime | None = None
    next_due: datetime | None = None
    state: str = "active"


@dataclass(frozen=True)
class Streak:
    """Consecutive readings beyond a signal trigger's threshold, and when the last came."""

    count: int
    last_at: datetime


@dataclass(frozen=True)
class IntentionRow:
    """An intention as read back: its memory, triggers (in order) and firing state."""

    memory: Memory
    state: str
    repeat: str
    min_interval_seconds: float
    zone: str
    scheduled: bool
    triggers: list[TriggerRecord]
    created_at: datetime
    expires_at: datetime | None = None
    next_due: datetime | None = None
    last_fired_at: datetime | None = None
    fire_count: int = 0
    streaks: dict[int, Streak] = field(default_factory=dict)

    @property
    def seq(self) -> int:
        """The memory's seq (the intention's key in every table)."""
        return self.memory.seq


@dataclass(frozen=True)
class ReminderDraft:
    """A reminder to queue in the pending queue beside recollections."""

    seq: int
    namespace: str
    score: float
    channels: dict[str, float]
    prompt_line: str
    details: dict[str, Any]


@dataclass(frozen=True)
class Lookup:
    """What a sensed context could satisfy: the keys candidate triggers are found by."""

    terms: dict[str, Sequence[str]] = field(default_factory=dict)
    """Trigger type (``mention``, ``tag``, ``signal``) -> the lookup terms present."""
    place: tuple[float, float] | None = None


class IntentionSession(Protocol):
    """Reads and writes inside one write transaction (claims cannot race)."""

    def load(self, seqs: Sequence[int]) -> list[IntentionRow]:
        """The active intentions among ``seqs`` with their triggers and streaks."""
        ...

    def due(self, now: datetime, limit: int, skip: Sequence[int] = ()) -> list[IntentionRow]:
        """Active scheduled intentions whose ``next_due`` has come, earliest first, except
        the seqs in ``skip`` (those the scheduler cannot fire on this machine)."""
        ...

    def set_streak(self, seq: int, position: int, streak: Streak | None) -> None:
        """Store (or clear, with None) the streak of one signal trigger."""
        ...

    def record_firing(self, seq: int, now: datetime, state: str, next_due: datetime | None) -> None:
        """Count a firing and move the intention to ``state`` with its next due time."""
        ...

    def set_state(self, seq: int, state: str, now: datetime) -> None:
        """Move an intention to ``state`` without firing it (expired)."""
        ...

    def queue(self, reminder: ReminderDraft, now: datetime) -> None:
        """Put a reminder in the namespace's pending queue."""
        ...


class IntentionStore(Protocol):
    """Persistence of intentions: lookups, listings, cancel, and firing transactions.

    Every read reports the state as of ``now`` (default: this machine's clock): an
    ``active`` intention whose ``expires_at`` has come reads ``expired`` whether or
    not a firing transaction has moved its row yet (only those do; a read writes
    nothing, so every process sharing the database reads the same).
    """

    def select(
        self, namespace: str, states: Sequence[str] | None, *, now: datetime | None = None
    ) -> list[IntentionRow]:
        """Intentions of the namespace in these states (all when None), newest first."""
        ...

    def get(
        self, namespace: str, memory_id: str, *, now: datetime | None = None
    ) -> IntentionRow | None:
        """One intention by its memory id, in any state."""
        ...

    def cancel(self, namespace: str, memory_id: str, now: datetime) -> IntentionRow | None:
        """Cancel an active intention (one already expired at ``now`` stays ``expired``),
        drop its queued reminders and streaks; None when unknown."""
        ...

    def candidates(self, namespace: str, lookup: Lookup) -> list[int]:
        """Seqs of active intentions with at least one trigger the lookup could satisfy."""
        ...

    def next_due(self, skip: Sequence[int] = ()) -> datetime | None:
        """The earliest ``next_due`` of any active scheduled intention (every namespace)
        but the seqs in ``skip``."""
        ...

    def session(self, step: Callable[[IntentionSession], T]) -> T:
        """Run ``step`` in one write transaction."""
        ...

    def counts(self, namespace: str, *, now: datetime | None = None) -> dict[str, int]:
        """Intentions of the namespace by state (for tests and status)."""
        ...
