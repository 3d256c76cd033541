"""The SQLite store's full-text index (FTS5): its names, and its creation on open.

The full-text index is not a migration: whether FTS5 can be used is a property
of the running SQLite library, so :func:`ensure_fts` creates it (and its sync
triggers) on open when available.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Execute = Callable[[str], Any]

__all__ = [
    "FTS_COLUMNS",
    "FTS_FIELD_COLUMNS",
    "FTS_GRAMS_COLUMN",
    "FTS_NAMESPACE_COLUMN",
    "FTS_TABLE",
    "FTS_TEXT_COLUMNS",
    "ensure_fts",
    "fts_namespace_token",
    "fts_table_exists",
]

FTS_TABLE = "memories_fts"
# A column of ``memories`` (migration 32) holding the characters and character pairs of the
# runs of Chinese, Japanese and Korean in a memory's texts (recalld._text.grams_column),
# indexed as the last FTS5 column: NULL, so nothing indexed, for text without them.
FTS_GRAMS_COLUMN = "fts_grams"
# The fields of a memory a query's words may match, as FTS5 columns.
FTS_FIELD_COLUMNS = ("title", "content", "tags", "speaker", "place_name", "key")
# The full-text columns a query's words may match (the namespace token column is not one).
FTS_TEXT_COLUMNS = (*FTS_FIELD_COLUMNS, FTS_GRAMS_COLUMN)
# A generated column of ``memories`` (migration 13) indexed as one more FTS5 column.
FTS_NAMESPACE_COLUMN = "fts_namespace"
# Every FTS5 column in order: the namespace term's before the pairs' (its index, 6, is the
# one recalld's ranking functions leave out).
FTS_COLUMNS = (*FTS_FIELD_COLUMNS, FTS_NAMESPACE_COLUMN, FTS_GRAMS_COLUMN)


def fts_namespace_token(namespace: str) -> str:
    """The single index term :data:`FTS_NAMESPACE_COLUMN` holds for ``namespace``.

    The same value as the generated column: ``'ns' || hex(namespace) || '0'``.
    Hexadecimal keeps any namespace one unicode61 token, and the final digit keeps
    the Porter stemmer from touching it (every suffix it strips ends in a letter),
    so two namespaces never share a term.
    """
    return "ns" + namespace.encode("utf-8").hex() + "0"


def fts_table_exists(execute: Execute) -> bool:
    """Whether the full-text table was created in this database."""
    rows = list(
        execute(f"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{FTS_TABLE}'")
    )
    return bool(rows)


def ensure_fts(execute: Execute) -> None:
    """Create the FTS5 index over title, content, tags, speaker, place name and key (and
    the namespace term, :data:`FTS_NAMESPACE_COLUMN`, and the character pairs of
    Chinese, Japanese and Korean text, :data:`FTS_GRAMS_COLUMN`), its triggers, and fill
    it.

    External content (the text lives once, in ``memories``); Porter stemming on
    top of unicode61 with diacritics folded; ``secure-delete`` so a deleted
    memory's terms leave the index at once instead of at the next merge.
    """
    columns = ", ".join(FTS_COLUMNS)
    new = ", ".join(f"new.{column}" for column in FTS_COLUMNS)
    old = ", ".join(f"old.{column}" for column in FTS_COLUMNS)
    execute(
        f"""
        CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(
            {columns},
            content='memories', content_rowid='seq',
            tokenize='porter unicode61 remove_diacritics 2'
        )
        """
    )
    execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES('secure-delete', 1)")
    execute(
        f"""
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO {FTS_TABLE}(rowid, {columns}) VALUES (new.seq, {new});
        END
        """
    )
    execute(
        f"""
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {columns})
            VALUES ('delete', old.seq, {old});
        END
        """
    )
    execute(
        f"""
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF {", ".join(FTS_TEXT_COLUMNS)}, namespace
        ON memories BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {columns})
            VALUES ('delete', old.seq, {old});
            INSERT INTO {FTS_TABLE}(rowid, {columns}) VALUES (new.seq, {new});
        END
        """
    )
    execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES('rebuild')")
