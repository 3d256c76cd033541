"""The protocol core memory needs from a store (see :mod:`recalld.core_memory`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol, TypeVar

__all__ = ["CoreStore"]

T = TypeVar("T")


class CoreStore(Protocol):
    """Ordered core-memory entries per (namespace, target), edited atomically."""

    def entries(self, namespace: str, target: str) -> list[str]:
        """The current entries of a target, in order."""
        ...

    def version(self, namespace: str) -> int:
        """A number that changes whenever the namespace's core memory changes."""
        ...

    def edit(
        self, namespace: str, target: str, change: Callable[[list[str]], T], now: datetime
    ) -> T:
        """Run ``change`` on the current entries under the write lock; persist what it leaves."""
        ...
