"""JSON text for PostgreSQL's ``jsonb``: a float keeps being a float.

``jsonb`` keeps a number as ``numeric``, whose text shows the scale it was given:
``1e+20`` (Python's text for the float 1e20) has none, so it came back as
``100000000000000000000`` and was read as an integer (``1e308`` as a 309-digit
one), while SQLite, which keeps the JSON text, gave the float back. A float whose
text has an exponent of 16 or more is therefore written out in full with a
fractional ``.0``, which ``numeric`` keeps, so it reads back as the same float.
Smaller floats (``1e-07`` included) already keep their scale. (``-0.0`` still reads
back as ``0.0``: ``numeric`` has no negative zero.) A float subclass (numpy's
``float64``) is written as the float it is.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

__all__ = ["dumps"]


def _has_large_float(value: Any) -> bool:
    if isinstance(value, float):
        return "e+" in float.__repr__(value)
    if isinstance(value, dict):
        return any(_has_large_float(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_has_large_float(item) for item in value)
    return False


def _float_text(value: float) -> str:
    text = float.__repr__(value)  # not repr(): numpy's float64 shows as np.float64(...)
    if "e+" not in text:
        return text
    return format(Decimal(text), "f") + ".0"


def _key_text(key: Any) -> str:
    # As json.dumps writes a key that is not text (True as "true", 1 as "1").
    return json.dumps(key if isinstance(key, str) else json.dumps(key))


def _encode(value: Any) -> str:
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, dict):
        items = (f"{_key_text(key)}:{_encode(item)}" for key, item in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_encode(item) for item in value) + "]"
    return json.dumps(value)


def dumps(value: Any) -> str:
    """``value`` as JSON text for a ``jsonb`` parameter (see the module docstring)."""
    if not _has_large_float(value):
        return json.dumps(value)
    return _encode(value)
