"""What the importers of other tools' files share about their JSON: telling JSON lines
from one document that does not parse, and a time given in Unix seconds."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

from recalld.errors import ValidationError

__all__ = ["json_lines", "unix_seconds"]


def json_lines(text: str) -> bool:
    """Whether ``text``, which is not one JSON document, is JSON lines: its first line is
    a JSON object or list by itself, or at least half of its lines are (a document over
    several lines that does not parse has almost no line that parses alone)."""
    lines = [line for line in text.split("\n") if line.strip()]
    whole = [_json_value(line) for line in lines]
    if whole and whole[0]:
        return True
    return sum(whole) * 2 >= len(lines) > 1


def _json_value(line: str) -> bool:
    """Whether ``line`` is a JSON object or list by itself."""
    try:
        return isinstance(json.loads(line), dict | list)
    except (ValueError, RecursionError):
        return False


def unix_seconds(value: float, field: str) -> str:
    """``value`` seconds since 1970 as an ISO 8601 time; refused naming ``field`` when it is
    no such time (negative, NaN, infinite, or past year 9999: milliseconds are)."""
    try:
        if not math.isfinite(value) or value < 0:
            raise ValueError
        return datetime.fromtimestamp(value, UTC).isoformat()
    except (ValueError, OverflowError, OSError):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise ValidationError(
            field, f"{shown} is not a time in Unix seconds (years 1970-9999)"
        ) from None
