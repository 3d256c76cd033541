"""Opaque keyset cursors for the listings (``list`` and ``recent``)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import datetime
from typing import Any

from recalld._time import from_storage, to_storage
from recalld.errors import ValidationError
from recalld.store.base import Order

__all__ = ["cursor_text", "cursor_values", "decode_cursor", "encode_cursor"]

# What a cursor is written with (URL-safe base64, unpadded): the REST schema's pattern.
# The decoder skips any other character, so "Wy J!jc…" or a padded cursor read as the
# cursor they were made from although the schema refuses them.
CURSOR_ALPHABET = re.compile(r"[A-Za-z0-9_-]+")


def cursor_text(values: list[Any]) -> str:
    """``values`` as an opaque cursor: their JSON (UTF-8 as it is, not ``\\u`` escapes,
    which made a graph key of 200 CJK characters a cursor REST refused) in URL-safe base64,
    unpadded. Every listing's cursors (these, the graph's) are written by it."""
    raw = json.dumps(values, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def cursor_values(cursor: object, refused: ValidationError) -> Any:
    """The JSON value a cursor written by :func:`cursor_text` holds; ``refused`` is raised
    for anything that is no such text (a character outside the alphabet, padding, bytes
    that are not JSON, JSON nested past the interpreter's depth)."""
    if cursor == "":
        # Not read as "the first page": a script that sends the last page's missing
        # next_cursor as "" would page through the listing again, for ever.
        raise ValidationError(
            refused.field,
            "is empty: leave cursor out (or null) for the first page; a page that"
            " gives no next cursor is the last",
        )
    if not isinstance(cursor, str) or CURSOR_ALPHABET.fullmatch(cursor) is None:
        raise refused
    try:
        return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError, TypeError, RecursionError):
        # RecursionError: "[[[[…" nested past the interpreter's depth (a 1.4 kB cursor).
        raise refused from None


def encode_cursor(order: Order, value: datetime, seq: int) -> str:
    """A URL-safe cursor naming the listing order and the last row returned."""
    return cursor_text([order, to_storage(value), seq])


def decode_cursor(cursor: str, order: Order) -> tuple[datetime, int]:
    """The ``(value, seq)`` a cursor of this listing order holds; anything else is refused."""
    refused = ValidationError("cursor", "is not a cursor this listing returned")
    values = cursor_values(cursor, refused)
    if not isinstance(values, list) or len(values) != 3:
        raise refused
    kind, value, seq = values
    if (
        kind != order
        or not isinstance(value, str)
        or type(seq) is not int  # JSON true is no seq (bool is an int subclass)
        or not 0 <= seq < 2**63  # store integers are 64-bit
    ):
        raise refused
    try:
        moment = from_storage(value)
        # The stores compare the value in UTC: a forged time whose offset takes it past
        # year 1 or 9999 cannot be converted (an OverflowError deep in the listing).
        to_storage(moment)
    except (ValueError, OverflowError):
        raise refused from None
    if moment.tzinfo is None:
        raise refused
    return moment, seq
