"""The protocol involuntary recall needs from a store (see :mod:`recalld.recollection`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from recalld._text import prompt_line, reminder_line
from recalld.model import Memory

__all__ = ["ContextStore", "PendingRow", "rewritten_pending"]


@dataclass(frozen=True)
class PendingRow:
    """One queued recollection (or reminder, ``kind``) with its memory."""

    id: int
    memory: Memory
    score: float
    channels: dict[str, float]
    prompt_line: str
    fired_at: datetime
    kind: str = "recollection"
    details: dict[str, Any] | None = None


def rewritten_pending(
    memory: Memory, kind: str, details: dict[str, Any] | None
) -> tuple[str, dict[str, Any] | None]:
    """A queued item's prompt line and details for its memory as it reads now.

    The queue keeps a copy of what the memory said when it fired; a write that
    changes the memory (an overwrite, an update, an import) rewrites that copy in
    the same transaction, so the old text is scrubbed with the rest and never handed
    out afterwards.
    """
    if kind == "reminder" and details is not None:
        details = {**details, "action": memory.content}
        return reminder_line(memory.content, str(details.get("why", ""))), details
    return prompt_line(memory), details


class ContextStore(Protocol):
    """Derived signal features, candidate lookups, trigger history and the pending queue."""

    def signals(self, seqs: Sequence[int]) -> dict[int, dict[str, bytes]]:
        """The stored features of the given memories, by seq and channel."""
        ...

    def biometrics(self, seqs: Sequence[int]) -> dict[int, dict[str, float]]:
        """The stored biometric readings of the given memories, by seq and name."""
        ...

    def biometric_rows(
        self, namespace: str, names: Sequence[str], now: datetime
    ) -> list[tuple[int, str, float]]:
        """(seq, name, value) of every live memory's reading among ``names``."""
        ...

    def nearest_readings(
        self,
        namespace: str,
        name: str,
        low: float,
        value: float,
        high: float,
        now: datetime,
        limit: int,
    ) -> list[int]:
        """Seqs of live memories whose ``name`` reading lies in ``[low, high]``, nearest
        ``value`` first: up to ``limit`` at or above it and ``limit`` below it."""
        ...

    def with_channel(self, namespace: str, channel: str, now: datetime) -> list[tuple[int, bytes]]:
        """(seq, features) of every live memory in the namespace that has this channel."""
        ...

    def near_points(
        self,
        namespace: str,
        prefixes: Sequence[str],
        now: datetime,
        limit: int,
        cells: Sequence[str] = (),
    ) -> list[tuple[int, float, float, datetime | None, str]]:
        """(seq, lat, lon, at, geohash) of live memories whose geohash is one of ``cells``
        (places given coarser than the search, which hold part of it) or starts with one of
        ``prefixes``; ``at`` keeps the offset it was stored with (its own local time of day)."""
        ...

    def by_seqs(self, namespace: str, seqs: Sequence[int], now: datetime) -> list[Memory]:
        """Live memories of the namespace among ``seqs``."""
        ...

    def dated_points(
        self, namespace: str, now: datetime, limit: int
    ) -> list[tuple[int, datetime, float | None]]:
        """(seq, at, salience) of the live memories of the namespace that carry an ``at``,
        newest first, at most ``limit``, without loading rows; ``at`` keeps the offset it
        was stored with (its own local time of day)."""
        ...

    def fire(
        self,
        namespace: str,
        candidates: Sequence[tuple[int, float, dict[str, float]]],
        now: datetime,
        habituated_since: datetime,
        limit: int | None = None,
    ) -> list[Memory]:
        """Record and queue each candidate (seq, score, channels) not fired since
        ``habituated_since`` whose memory is still live in the namespace, in the order
        given, until ``limit`` have fired; returns those memories as they read in that
        transaction (the queue's line is made from them)."""
        ...

    def take_pending(
        self, namespace: str, limit: int, drain: bool, now: datetime
    ) -> list[PendingRow]:
        """The oldest queued recollections of memories live at ``now`` (removed when
        ``drain``); one of a memory that expired since it was queued is never returned."""
        ...

    def queued_reminders(self, namespace: str, now: datetime) -> list[PendingRow]:
        """Every reminder still queued (not delivered) of memories live at ``now``, oldest
        first, left in the queue (an export carries them)."""
        ...

    def pending_version(self, namespace: str) -> int:
        """Changes whenever the namespace's pending queue changes."""
        ...

    def counts(self, namespace: str) -> tuple[int, int]:
        """(trigger history rows, pending items) of a namespace."""
        ...
