"""Migration 31 (both stores): kinds and categories without white space at their ends.

Since stop 65 a kind or a category is trimmed on every write and in every filter, as a
tag always was (:func:`recalld._validate.composed_name`): " work" and "work" were two
categories, and a filter typed "work" missed the first. A memory an older version stored
with " work " was then found by neither "work" nor " work " (the filter is trimmed too)
until someone edited it; this migration trims what was stored, in NFC as every write
composes it. A row is changed only when its value changes, and its ``updated_at`` stays:
no one wrote it. A value white space alone made (never accepted: a blank name is refused)
is left as it is rather than emptied, and so is a kind that would become one kept for
reminders (" intention", which an older version stored as any other kind): trimmed, the
memory was a reminder's without a reminder, its kind not editable and its export not
importable. SQLite's :data:`migration_31` and PostgreSQL's
:data:`postgres_migration_31` differ only in their SQL.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

__all__ = ["migration_31", "postgres_migration_31", "trimmed_name"]

# The kind a reminder's memory has (``recalld.writing.INTENTION_KIND``, not imported: the
# store does not depend on the service's modules), which no other write may give.
RESERVED_KIND = "intention"

# The store's ``connection.execute``: SQL and its parameters, returning a cursor.
Execute = Callable[..., Any]


def trimmed_name(value: str) -> str:
    """``value`` as a write stores a kind or category: ends trimmed, in NFC (a blank one is
    kept as it is: no write stored one, and an empty name would be a new kind of row)."""
    trimmed = unicodedata.normalize("NFC", value.strip())
    return trimmed or value


def _trim(execute: Execute, mark: str, suspect: Callable[[str], str]) -> None:
    """Trim the kinds and categories that need it; ``suspect(column)`` holds for every value
    that starts or ends with white space (it may hold for more: each row is checked here)."""
    rows = execute(
        f"SELECT seq, kind, category FROM memories WHERE {suspect('kind')} OR {suspect('category')}"
    ).fetchall()
    for seq, kind, category in rows:
        new_kind = trimmed_name(kind)
        if new_kind == RESERVED_KIND:
            new_kind = kind  # a plain memory stays one (see the module)
        new_category = None if category is None else trimmed_name(category)
        if (new_kind, new_category) == (kind, category):
            continue
        execute(
            f"UPDATE memories SET kind = {mark}, category = {mark} WHERE seq = {mark}",
            (new_kind, new_category, seq),
        )


def migration_31(execute: Execute) -> None:
    """SQLite's step (see the module): a value starting or ending with a space, or holding
    anything but printable ASCII (a tab, a no-break space: Python's ``strip`` drops them)."""
    _trim(
        execute,
        "?",
        lambda column: f"({column} GLOB ' *' OR {column} GLOB '* ' OR {column} GLOB '*[^ -~]*')",
    )


def postgres_migration_31(execute: Execute) -> None:
    """PostgreSQL's step (see the module)."""
    _trim(
        execute,
        "%s",
        lambda column: (
            f"(left({column}, 1) = ' ' OR right({column}, 1) = ' ' OR {column} !~ '^[ -~]*$')"
        ),
    )
