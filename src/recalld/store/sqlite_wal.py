"""Whether a ``-wal`` beside a database file is that file's log, read before SQLite opens it.

SQLite keeps no trace, in a write-ahead log, of the database it belongs to: its header
holds a magic number, the page size, a checkpoint sequence and two salts, and each frame
a page number, the database size after a commit and the salts again, all chained by a
checksum. Any ``<db>-wal`` whose frames check out is read as ``<db>``'s log when ``<db>``
is opened, and its pages are laid over the file's, whatever file that now is. So a backup
copied in place of a database (``cp backup.db memories.db``) beside the log an earlier
crash or a still running process left, was served with the old database's newest pages
over it: the restore silently undone, or the file damaged (adversarial pass d69).

What SQLite does guarantee is told by the file's own header: bytes 18 and 19 are 2 in a
database in WAL mode, 1 in one in rollback mode, and SQLite writes the 2 into the file
itself before it makes the log (probed with SQLite 3.54: ``PRAGMA journal_mode = WAL``
on a rollback-mode file rewrites its header in place, no ``-wal`` exists yet), and
switching back checkpoints and deletes the log before writing the 1. A file whose header
says rollback mode therefore never owns a log with committed frames: such a log is
another database's. Every backup recalld writes is in rollback mode (one self-contained
file), so this catches a backup put in place beside a log that is not its own. A copy
of a database in WAL mode (a file copied by hand) cannot be told from the original.
"""

from __future__ import annotations

import struct
import threading
from pathlib import Path

import apsw

__all__ = ["FileHeader", "committed_frames", "rollback_mode"]

_WAL_HEADER = 32
_FRAME_HEADER = 24
_MAGIC_LITTLE = 0x377F0682  # checksums over little-endian words
_MAGIC_BIG = 0x377F0683  # over big-endian words
_WAL_VERSION = 3007000
_MASK = 0xFFFFFFFF


def rollback_mode(header: bytes) -> bool:
    """Whether an SQLite file ``header`` (its first 20 bytes or more) says rollback mode:
    its write and read versions (bytes 18 and 19) are 1, not WAL's 2."""
    return len(header) >= 20 and header[18] == 1 and header[19] == 1


class FileHeader:
    """The header of an open database's file, read through SQLite's own VFS, to notice the
    file written over in place (``cp backup.db memories.db`` while a process has it open:
    the inode stays, so the replaced-file check by inode missed it).

    A database recalld has open is in WAL mode, written in its header on disk before any
    log exists (but for a file opened in rollback mode beside a log already there, whose
    header says WAL once page 1 is next checkpointed), and no connection can switch it
    back while this process holds it open; a header saying rollback mode after this one
    said WAL is therefore another file's, a backup copied over it. Its
    pages are read with the process's WAL laid over them, and its next checkpoint writes
    that log into the copy. One handle, held open until :meth:`close`: a file descriptor
    closed on the database file drops every POSIX lock this process holds on it, SQLite's
    too, and SQLite's VFS keeps such a close until its locks are gone, one descriptor per
    read. A read is a ``pread`` of 20 bytes, about a quarter of a microsecond."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._file: apsw.VFSFile | None = None
        self._lock = threading.Lock()
        self._seen_wal = False

    def written_over(self) -> bool:
        """Whether the file on disk is now in rollback mode (see the class docstring)."""
        with self._lock:
            if self._file is None:
                flags = apsw.SQLITE_OPEN_MAIN_DB | apsw.SQLITE_OPEN_READONLY
                self._file = apsw.VFSFile("", self._path, [flags, 0])
            header = self._file.xRead(20, 0)
            if rollback_mode(header):
                return self._seen_wal
            self._seen_wal = self._seen_wal or len(header) >= 20
            return False

    def close(self) -> None:
        """Let the handle go (after the connections: see the class docstring)."""
        with self._lock:
            if self._file is not None:
                self._file.xClose()
                self._file = None


def committed_frames(log: Path) -> int:
    """How many frames of the write-ahead log ``log`` SQLite would lay over its database
    when opening it: those up to the last valid commit frame (their salts match the log's
    header and the checksum chain holds). 0 for a missing, empty or damaged log, or one
    whose frames are left over from before its last reset (SQLite ignores those too)."""
    try:
        handle = log.open("rb")
    except FileNotFoundError:
        return 0
    with handle:
        header = handle.read(_WAL_HEADER)
        if len(header) < _WAL_HEADER:
            return 0
        magic, version, page_size, _sequence, salt1, salt2, sum1, sum2 = struct.unpack(
            ">8I", header
        )
        if magic not in (_MAGIC_LITTLE, _MAGIC_BIG) or version != _WAL_VERSION:
            return 0
        page_size = 65536 if page_size == 1 else page_size
        if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
            return 0
        words = ">" if magic == _MAGIC_BIG else "<"
        running = _checksum(header[:24], words, (0, 0))
        if running != (sum1, sum2):
            return 0
        frames = committed = 0
        while True:
            frame = handle.read(_FRAME_HEADER + page_size)
            if len(frame) < _FRAME_HEADER + page_size:
                return committed
            page, size_after, frame_salt1, frame_salt2, check1, check2 = struct.unpack(
                ">6I", frame[:_FRAME_HEADER]
            )
            if page == 0 or (frame_salt1, frame_salt2) != (salt1, salt2):
                return committed
            running = _checksum(frame[:8], words, running)
            running = _checksum(frame[_FRAME_HEADER:], words, running)
            if running != (check1, check2):
                return committed
            frames += 1
            if size_after != 0:
                committed = frames


def _checksum(data: bytes, order: str, seed: tuple[int, int]) -> tuple[int, int]:
    """SQLite's WAL checksum of ``data`` (a multiple of 8 bytes), continuing ``seed``."""
    first, second = seed
    values = struct.unpack(f"{order}{len(data) // 4}I", data)
    for index in range(0, len(values), 2):
        first = (first + values[index] + second) & _MASK
        second = (second + values[index + 1] + first) & _MASK
    return first, second
