"""Migrations 28 and 29 (both stores): tags, categories (28) and kinds (29) in one Unicode
spelling (NFC).

A key and a speaker were kept in NFC, but a tag or a category was kept as given, so
"café" written decomposed ("cafe" + U+0301, as macOS and some tools send it) was not
found by a filter typed precomposed, and the two spellings were two tags in ``stats``.
Every write now composes them (:func:`recalld._validate.tags`,
:func:`recalld._validate.category`), and so does every filter; this migration composes
what an older version stored: a memory's tags (its ``tags`` column and its
``memory_tags`` rows; two spellings of one tag become one), its category, and a
reminder's tag triggers (their lookup term and their JSON). A row is changed only when
a spelling changes, and its ``updated_at`` stays: no one wrote it. SQLite's
:data:`migration_28` and PostgreSQL's :data:`postgres_migration_28` differ only in their
SQL (placeholders, and how a row that holds only printable ASCII, which NFC cannot
change, is passed over).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "composed_tags",
    "migration_28",
    "migration_29",
    "postgres_migration_28",
    "postgres_migration_29",
]

# The store's ``connection.execute``: SQL and its parameters, returning a cursor.
Execute = Callable[..., Any]


def composed_tags(tags: Sequence[str]) -> list[str]:
    """``tags`` in NFC, in their order, each once (two spellings of one tag are one)."""
    return list(dict.fromkeys(unicodedata.normalize("NFC", tag) for tag in tags))


def _composed(value: str | None) -> str | None:
    return None if value is None else unicodedata.normalize("NFC", value)


def _respell(execute: Execute, mark: str, unusual: Callable[[str], str], json_mark: str) -> None:
    """Compose the tags, categories and tag triggers that need it (see the module).

    ``mark`` is the store's placeholder (``json_mark`` for JSON text written to a JSON
    column); ``unusual(column)`` is an SQL condition that holds for every text that is not
    printable ASCII (it may hold for more: each row it selects is checked here).
    """
    rows = execute(
        f"SELECT seq, tags, category FROM memories WHERE {unusual('tags')} OR {unusual('category')}"
    ).fetchall()
    for seq, stored, category in rows:
        tags = json.loads(stored) if isinstance(stored, str) else list(stored)
        composed = composed_tags(tags)
        if composed == tags and _composed(category) == category:
            continue
        execute(
            f"UPDATE memories SET tags = {json_mark}, category = {mark} WHERE seq = {mark}",
            (json.dumps(composed, ensure_ascii=False), _composed(category), seq),
        )
        if composed != tags:
            execute(f"DELETE FROM memory_tags WHERE seq = {mark}", (seq,))
            for tag in composed:
                execute(f"INSERT INTO memory_tags(seq, tag) VALUES ({mark}, {mark})", (seq, tag))
    triggers = execute(
        "SELECT seq, position, term, spec FROM intention_triggers"
        f" WHERE type = 'tag' AND {unusual('term')}"
    ).fetchall()
    for seq, position, term, stored in triggers:
        spec = json.loads(stored) if isinstance(stored, str) else dict(stored)
        if _composed(term) == term and _composed(spec.get("tag")) == spec.get("tag"):
            continue
        spec["tag"] = _composed(spec.get("tag"))
        execute(
            f"UPDATE intention_triggers SET term = {mark}, spec = {json_mark}"
            f" WHERE seq = {mark} AND position = {mark}",
            (_composed(term), json.dumps(spec, ensure_ascii=False), seq, position),
        )


def migration_28(execute: Execute) -> None:
    """SQLite's step (see the module). A ``\\`` in the JSON of tags may be an escaped
    character, so such a row is read too."""
    _respell(
        execute,
        "?",
        lambda column: f"({column} GLOB '*[^ -~]*' OR instr({column}, '\\') > 0)",
        "?",
    )


def postgres_migration_28(execute: Execute) -> None:
    """PostgreSQL's step (see the module): ``tags`` and ``spec`` are ``jsonb`` (a row is
    selected by its text; the JSON written back is cast)."""
    _respell(execute, "%s", lambda column: f"{column}::text !~ '^[ -~]*$'", "%s::jsonb")


def _compose_kinds(execute: Execute, mark: str, unusual: Callable[[str], str]) -> None:
    """Compose the kinds an older version stored as written (migration 29): a kind is
    composed on every write since, and a filter is composed too, so "réunion" stored
    decomposed, or Devanagari क़ stored as U+0958 (which NFC writes as two code points),
    was found by no filter but its own spelling. ``updated_at`` stays: no one wrote it."""
    rows = execute(f"SELECT seq, kind FROM memories WHERE {unusual('kind')}").fetchall()
    for seq, kind in rows:
        composed = unicodedata.normalize("NFC", kind)
        if composed != kind:
            execute(f"UPDATE memories SET kind = {mark} WHERE seq = {mark}", (composed, seq))


def migration_29(execute: Execute) -> None:
    """SQLite's step of :func:`_compose_kinds`."""
    _compose_kinds(execute, "?", lambda column: f"{column} GLOB '*[^ -~]*'")


def postgres_migration_29(execute: Execute) -> None:
    """PostgreSQL's step of :func:`_compose_kinds`."""
    _compose_kinds(execute, "%s", lambda column: f"{column} !~ '^[ -~]*$'")
