"""Checks of the bytes a file or upload holds before it is read as records: that it is
UTF-8 text, not an archive or a database, and that no line of it is past the limit.

Split from :mod:`recalld._validate` (which re-exports these names) to keep that module
under the house limit on length.
"""

from __future__ import annotations

import re

from recalld.errors import ValidationError

# The first bytes of the archives an export is handed out in (ChatGPT's and Claude's come
# as a zip holding conversations.json; a backed-up JSON lines file is often gzipped), and
# of a SQLite database (a `recalld backup`, given to import instead of restored).
SQLITE_DATABASE = "SQLite database"
ARCHIVES = (
    (b"SQLite format 3\x00", SQLITE_DATABASE),
    (b"PK\x03\x04", "zip archive"),
    (b"PK\x05\x06", "zip archive"),
    (b"\x1f\x8b", "gzip file"),
    (b"\xfd7zXZ\x00", "xz file"),
    (b"\x28\xb5\x2f\xfd", "zstd file"),
)


def archive_kind(data: bytes) -> str | None:
    """What compressed archive ``data`` starts as ("zip archive", "gzip file" ...) or
    whether it is a SQLite database, if either: its bytes are not text, and "not UTF-8"
    or "cannot tell the format" said nothing of the cause."""
    if re.match(rb"BZh[1-9]1AY&SY", data):  # "BZh" alone may start a text
        return "bzip2 file"
    return next((kind for magic, kind in ARCHIVES if data.startswith(magic)), None)


def archive_message(kind: str) -> str:
    """The refusal of a file that is an archive of ``kind``: what to do instead."""
    if kind == SQLITE_DATABASE:
        return (
            f"is a {kind}, not an export (a `recalld backup` is restored, not imported: stop"
            " the servers and run `recalld restore BACKUP`, or point --db at it; to import,"
            " give what `recalld export` wrote)"
        )
    message = f"is a {kind}, not the text inside it: unpack it and give the file it holds"
    if kind == "zip archive":
        message += " (ChatGPT's and Claude's exports come as one: their conversations.json)"
    return message


def utf8_text(data: bytes, field: str, *, lines: bool = False) -> str:
    """``data`` decoded as UTF-8; refused naming ``field`` and the first bad byte (and,
    with ``lines``, its line) when it is not: a replaced byte would store other text than
    the file's, and say nothing. A UTF-16 byte-order mark is named: the usual cause."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        where = f"at offset {error.start}"
        if lines:
            line = data.count(b"\n", 0, error.start) + 1
            where += f", line {line}"
        message = f"is not UTF-8 text (byte 0x{data[error.start]:02x} {where})"
        kind = archive_kind(data)
        if kind is not None:
            message = archive_message(kind)
        elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
            message += "; it starts with a UTF-16 byte-order mark: save it as UTF-8"
        raise ValidationError(field, message) from None


class LongLine(bytes):
    """In place of a line of a file of lines longer than ``limit`` bytes, which was not
    read whole (a file without line ends would fill the memory): :func:`line_text` refuses
    it, so the import reports it by number like any bad line, and the reader yields
    nothing after it."""

    limit = 0

    @classmethod
    def of(cls, limit: int) -> LongLine:
        marker = cls()
        marker.limit = limit
        return marker


def line_text(line: object) -> str:
    """One line of a file of lines (an import) as text: ``str`` as it is, ``bytes`` (a file
    opened in binary mode) decoded as UTF-8 (:func:`utf8_text`). Anything else is refused
    naming ``line``."""
    if isinstance(line, LongLine):
        raise ValidationError(
            "line",
            f"is longer than {line.limit} bytes, which no line of an export is (is it a file"
            " of JSON lines?): the import stopped here, the lines after it were not read",
        )
    if isinstance(line, str):
        return line
    if isinstance(line, bytes):
        return utf8_text(line, "line")
    raise ValidationError("line", f"give text, got {type(line).__name__}")
