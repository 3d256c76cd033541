"""Opaque keyset cursors for the listings (``list`` and ``recent``)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import datetime

from recalld._time import from_storage, to_storage
from recalld.errors import ValidationError
from recalld.store.base import Order

__all__ = ["CURSOR_ALPHABET", "decode_cursor", "encode_cursor"]

# What a cursor is written with (URL-safe base64, unpadded): the REST schema's pattern.
# The decoder skips any other character, so "Wy J!jc…" or a padded cursor read as the
# cursor they were made from although the schema refuses them.
CURSOR_ALPHABET = re.compile(r"[A-Za-z0-9_-]+")


def encode_cursor(order: Order, value: datetime, seq: int) -> str:
    """A URL-safe cursor naming the listing order and the last row returned."""
    raw = json.dumps([order, to_storage(value), seq], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, order: Order) -> tuple[datetime, int]:
    """The ``(value, seq)`` a cursor of this listing order holds; anything else is refused."""
    if not isinstance(cursor, str) or CURSOR_ALPHABET.fullmatch(cursor) is None:
        raise ValidationError("cursor", "is not a cursor this listing returned")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        kind, value, seq = json.loads(raw)
    except (binascii.Error, ValueError, TypeError, RecursionError):
        # RecursionError: "[[[[…" nested past the interpreter's depth (a 1.4 kB cursor).
        raise ValidationError("cursor", "is not a cursor this listing returned") from None
    if (
        kind != order
        or not isinstance(value, str)
        or type(seq) is not int  # JSON true is no seq (bool is an int subclass)
        or not 0 <= seq < 2**63  # store integers are 64-bit
    ):
        raise ValidationError("cursor", "is not a cursor this listing returned")
    try:
        moment = from_storage(value)
        # The stores compare the value in UTC: a forged time whose offset takes it past
        # year 1 or 9999 cannot be converted (an OverflowError deep in the listing).
        to_storage(moment)
    except (ValueError, OverflowError):
        raise ValidationError("cursor", "is not a cursor this listing returned") from None
    if moment.tzinfo is None:
        raise ValidationError("cursor", "is not a cursor this listing returned")
    return moment, seq
