"""Which process opened a database: a forked child cannot use its parent's connections.

SQLite's file locks belong to the process that took them, and a PostgreSQL
connection is a socket the parent keeps talking on, so neither survives a
``fork()``: a child that used them could corrupt the file or the parent's
session, and one that recalled hung on query threads that exist only in the
parent. The stores call :meth:`OpeningProcess.check` before each use, so the
child gets a :class:`StorageError` saying what to do instead, and skip closing
the parent's connections when a child closes its copy.
"""

from __future__ import annotations

import os

from recalld.errors import StorageError

__all__ = ["OpeningProcess"]


class OpeningProcess:
    """The process that opened ``location`` (see the module docstring)."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.pid = os.getpid()

    @property
    def forked(self) -> bool:
        """Whether this is a process forked from the one that opened the database."""
        return os.getpid() != self.pid

    def check(self) -> None:
        """Raise :class:`StorageError` in a forked child (nothing in the opening process)."""
        if self.forked:
            raise StorageError(
                f"{self.location} was opened by process {self.pid}, and this process"
                f" ({os.getpid()}) is a fork of it: its connections cannot be shared;"
                " open the database again in this process (recalld.open)"
            )
