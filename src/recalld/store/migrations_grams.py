"""Migration 32 (SQLite): Chinese, Japanese and Korean words are found inside a run.

FTS5's ``unicode61`` tokenizer reads a whole run of ideographs, kana or Hangul as one
term, so a search for "北京" never found "我昨天在北京吃了烤鸭", nor "친구" the note
"서울에서 친구를 만났다". The new ``fts_grams`` column of memories holds each such run's
characters and overlapping character pairs (:mod:`recalld.store.grams`), written with
every memory and filled here for those stored before; the full-text table is dropped
with its triggers so :func:`recalld.store.sqlite_fts.ensure_fts` rebuilds it with the
column when the store opens (it is derived data). The stock tokenizer reads the pairs:
the file needs nothing registered to be read or written by any SQLite with FTS5.
PostgreSQL's migration 32 is :func:`recalld.store.postgres_migrations_words.migration_32`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from recalld.store.grams import GRAMS_COLUMN, GRAMS_SOURCE, fill_grams
from recalld.store.sqlite_fts import FTS_TABLE

__all__ = ["NON_ASCII_ROWS", "migration_32"]

Execute = Callable[..., Any]

# The memories whose searchable text holds a character outside ASCII (bytes differ from
# characters): the only ones that can hold a run of such a script, paged by seq.
_TEXT = " || ".join(f"coalesce({column}, '')" for column in GRAMS_SOURCE)
NON_ASCII_ROWS = (
    f"SELECT seq, {', '.join(GRAMS_SOURCE)} FROM memories WHERE seq > {{last}}"
    f" AND length(CAST({_TEXT} AS BLOB)) != length({_TEXT}) ORDER BY seq LIMIT 1000"
)


def migration_32(execute: Execute) -> None:
    """The ``fts_grams`` column, filled for the memories stored before it, and the
    full-text table dropped to be rebuilt with it (see the module docstring). The column
    is added unless a file recorded at an older version holds it already (written by
    this version, then marked older by hand or by a copy): the fill is the same."""
    present = list(
        execute(f"SELECT 1 FROM pragma_table_info('memories') WHERE name = '{GRAMS_COLUMN}'")
    )
    if not present:
        execute(f"ALTER TABLE memories ADD COLUMN {GRAMS_COLUMN} TEXT")
    for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update"):
        execute(f"DROP TRIGGER IF EXISTS {trigger}")
    execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")

    def write(seq: int, grams: str) -> None:
        execute(f"UPDATE memories SET {GRAMS_COLUMN} = ? WHERE seq = ?", (grams, seq))

    last = 0
    while True:
        rows = list(execute(NON_ASCII_ROWS.format(last=last)))
        if not rows:
            return
        fill_grams(rows, write)
        last = int(rows[-1][0])
