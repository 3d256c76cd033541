"""PostgreSQL migration 26: keyword search splits words where SQLite's index does.

PostgreSQL's text search parser keeps a host name, an e-mail address, a URL, a file
path, a version or a decimal number as one token (``example.com``, ``anna@example.org``,
``/usr/local/bin``, ``1.2.3``, ``3.14``), so a search for ``example``, ``bin`` or
``14`` missed memories SQLite finds: FTS5's ``unicode61`` tokenizer splits at every
character that is not a letter or a digit, and a query's words are ``\\w+`` runs
already. The search column is made again with ASCII punctuation (the apostrophe aside:
"don't" is one English word to both) read as spaces, by ``translate``, which reads
characters whatever the database's locale (as migration 21 does for a key). Listed in
:data:`recalld.store.postgres_migrations.MIGRATIONS` with the others; SQLite's migration
26 (:mod:`recalld.store.migrations_ledger`) changes nothing.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

from recalld.store.grams import GRAMS_COLUMN, GRAMS_SOURCE, fill_grams

__all__ = [
    "SEARCH_CONFIGURATION",
    "WORD_SEPARATORS",
    "migration_26",
    "migration_32",
    "query_words",
    "word_query",
]

Execute = Callable[..., Any]
# The text search configuration of the search column from migration 23 on: English
# stemming after the unaccent dictionary, so "Munchen" finds "München" as on SQLite.
# (Here, where the last migration to build the column is; postgres_migrations exports it.)
SEARCH_CONFIGURATION = "recalld_search"

# ASCII punctuation but the apostrophe; neither a quote nor a NUL can end the literal.
WORD_SEPARATORS = "".join(character for character in string.punctuation if character != "'")
_SPACES = str.maketrans(WORD_SEPARATORS, " " * len(WORD_SEPARATORS))


def query_words(text: str) -> str:
    """``text`` as the search column reads its fields (:data:`WORD_SEPARATORS` as spaces),
    for ``plainto_tsquery``: a name such as "Jean-Luc" is the words the column holds
    ("jean", "luc"), not the hyphenated lexeme the parser would make of it."""
    return text.translate(_SPACES)


def word_query(bind: Callable[[str, Any], str], name: str, word: str) -> str:
    """The ``plainto_tsquery`` of ``word`` (read by :func:`query_words`), bound as ``name``
    by ``bind`` (a ``Parameters.bind``)."""
    return f"plainto_tsquery('{SEARCH_CONFIGURATION}', {bind(name, query_words(word))})"


def _words(column: str) -> str:
    """``column`` with :data:`WORD_SEPARATORS` read as spaces (an SQL expression)."""
    return f"translate({column}, '{WORD_SEPARATORS}', '{' ' * len(WORD_SEPARATORS)}')"


def _search_column(execute: Execute, *, grams: bool) -> None:
    """The generated ``search`` column and its GIN index again, every field's punctuation
    read as spaces (tags through their JSON text: its quotes, brackets and commas are
    punctuation too), with the character pairs of ``fts_grams`` at the content's weight when
    ``grams`` (migration 32)."""
    config = SEARCH_CONFIGURATION
    pairs = (
        f"\n            || setweight(to_tsvector('{config}', coalesce({GRAMS_COLUMN}, '')), 'B')"
        if grams
        else ""
    )
    execute("ALTER TABLE memories DROP COLUMN search")
    execute(
        f"""
        ALTER TABLE memories ADD COLUMN search TSVECTOR GENERATED ALWAYS AS (
            setweight(to_tsvector('{config}', {_words("coalesce(title, '')")}), 'A')
            || setweight(to_tsvector('{config}', {_words("coalesce(key, '')")}), 'A')
            || setweight(to_tsvector('{config}', {_words("content")}), 'B')
            || setweight(to_tsvector('{config}', {_words("tags::text")}), 'C')
            || setweight(to_tsvector('{config}', {_words("coalesce(speaker, '')")}), 'D')
            || setweight(to_tsvector('{config}', {_words("coalesce(place_name, '')")}), 'D'){pairs}
        ) STORED
        """
    )
    execute("CREATE INDEX memories_search ON memories USING gin(search)")


def migration_26(execute: Execute) -> None:
    """The generated ``search`` column and its GIN index again, every field's punctuation
    read as spaces (tags through their JSON text: its quotes, brackets and commas are
    punctuation too). Weights and configuration as migration 23 left them."""
    _search_column(execute, grams=False)


# The memories whose searchable text holds a character outside ASCII, paged by seq.
_TEXT = " || ".join(
    f"coalesce({column}{'::text' if column == 'tags' else ''}, '')" for column in GRAMS_SOURCE
)
_NON_ASCII_ROWS = (
    f"SELECT seq, {', '.join(GRAMS_SOURCE)} FROM memories WHERE seq > %s"
    f" AND octet_length({_TEXT}) != char_length({_TEXT}) ORDER BY seq LIMIT 1000"
)


def migration_32(execute: Execute) -> None:
    """Chinese, Japanese and Korean words are found inside a run (as SQLite's migration 32,
    :mod:`recalld.store.migrations_grams`): the ``fts_grams`` column, filled for the
    memories stored before it, and the ``search`` column made again with it.

    PostgreSQL's parser, like FTS5's tokenizer, reads a run of ideographs, kana or Hangul
    as one word, so "北京" missed "我昨天在北京吃了烤鸭"; the pairs are plain words to it."""
    execute(f"ALTER TABLE memories ADD COLUMN IF NOT EXISTS {GRAMS_COLUMN} TEXT")

    def write(seq: int, grams: str) -> None:
        execute(f"UPDATE memories SET {GRAMS_COLUMN} = %s WHERE seq = %s", (grams, seq))

    last = 0
    while True:
        rows = execute(_NON_ASCII_ROWS, (last,)).fetchall()
        if not rows:
            break
        fill_grams(rows, write)
        last = int(rows[-1][0])
    _search_column(execute, grams=True)
