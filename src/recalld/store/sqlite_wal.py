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
from pathlib import Path

__all__ = ["committed_frames", "rollback_mode"]

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
