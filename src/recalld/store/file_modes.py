"""Memories on disk are their owner's alone: the permissions recalld creates files with.

A user of agent memory expects what ssh, gnupg and pass do: files no other local user
can read. With the usual umask (022) every file recalld made was world-readable
(``-rw-r--r--``: the database, its write-ahead log, the reserve, exports) in a directory
anyone could list. So recalld now creates

* a new database file ``0600``; SQLite gives the ``-wal``, ``-shm`` and ``-journal`` it
  makes beside it the database file's own mode, so they follow;
* the data directory it creates for the database ``0700``;
* its other files beside the database (``-reserve``, ``-migrate.lock``, the vector
  graph ``-vectors-…``) with the database file's mode, so a database its owner chose
  to share with a group (``chmod 640``) shares them alike;
* a new export ``0600`` (a backup already takes the database file's mode).

Files and directories already there keep the mode their owner gave them; a umask can
only narrow these modes further. A database file every local user can read (one an
earlier recalld made ``0644``, in a directory others may enter) is named in a warning
the first time a process opens it, with the ``chmod`` that makes it private: as ssh and
gnupg do, recalld says so rather than change a mode its owner may have chosen.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

__all__ = [
    "PRIVATE_DIRECTORY_MODE",
    "PRIVATE_FILE_MODE",
    "create_private_file",
    "mode_beside",
    "warn_if_readable_by_others",
]

logger = logging.getLogger(__name__)

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIRECTORY_MODE = 0o700


def create_private_file(path: Path) -> None:
    """Create ``path`` empty, readable and writable by its owner only, unless it exists
    (another process may have created it a moment ago: then that one is kept)."""
    try:
        descriptor = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE_MODE
        )
    except FileExistsError:
        return
    os.close(descriptor)


def mode_beside(database: Path | str) -> int:
    """The mode for a file of recalld's own beside ``database``: the database file's
    read and write bits (``0600`` when it cannot be read, or is not there yet)."""
    try:
        return stat.S_IMODE(os.stat(database).st_mode) & 0o666
    except OSError:
        return PRIVATE_FILE_MODE


# The databases already named in a warning: once a process, not at every open.
_warned: set[str] = set()


def warn_if_readable_by_others(database: Path) -> None:
    """Log a warning, once a process, when every local user can read the file
    ``database``: it is readable by others and every directory above it lets them
    through (a private directory, ``chmod 700 ~/.local/share/recalld``, is enough)."""
    real = os.path.realpath(database)
    if real in _warned:
        return
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode)
        reachable = all(
            os.stat(directory).st_mode & stat.S_IXOTH for directory in Path(real).parents
        )
    except OSError:
        return
    if mode & stat.S_IROTH and reachable:
        _warned.add(real)
        logger.warning(
            "%s can be read by every user of this machine (mode %04o); `chmod 600 %s*`"
            " keeps its memories yours",
            database,
            mode,
            database,
        )
