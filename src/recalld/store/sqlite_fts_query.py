"""FTS5 query expressions for the SQLite store's keyword search, and its rank function.

The words of a query match the text columns only (never the namespace term);
tag filters and namespaces become clauses ANDed (or NOTed) into a match, so
FTS5 intersects short lists instead of a walk joining every match to its row.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import apsw

from recalld.store.base import Scope
from recalld.store.sqlite_fts import (
    FTS_NAMESPACE_COLUMN,
    FTS_TEXT_COLUMNS,
    fts_namespace_token,
)

__all__ = [
    "RANK_FUNCTION",
    "WORD_SAMPLE_ROWS",
    "namespace_match",
    "namespace_narrow",
    "recent_rank",
    "tags_match",
    "text_match",
    "with_rank",
]

# The rank of a query of common words (see recent_rank).
RANK_FUNCTION = "recalld_rank"
# The candidate weights of the FTS5 columns in order (FTS_COLUMNS): the namespace term's
# (index 6) left out, a character pair of Chinese, Japanese or Korean text (7) as content.
RANK_WEIGHTS = (2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0)
RANK_K1 = 1.2
RANK_B = 0.75
# The newest rowids over which the share of memories holding a word is sampled.
WORD_SAMPLE_ROWS = 1_000
# FTS5 column filter: a query's words match the text columns, never the namespace term.
TEXT_COLUMNS = "{" + " ".join(FTS_TEXT_COLUMNS) + "}"
# A match keeps to its namespaces by the NOT of the other namespaces' terms when there are
# at most this many others (see SQLiteRetrieval._namespace_narrow).
NOT_NAMESPACES = 8


def text_match(words: Sequence[str], operator: str = "OR") -> str:
    """An FTS5 query for ``words`` (index terms, quoted) in the text columns only."""
    joined = f" {operator} ".join(f'"{word}"' for word in words)
    return f"{TEXT_COLUMNS} : ({joined})"


def tags_match(scope: Scope, tokenize: Callable[[str], list[str]]) -> str | None:
    """An FTS5 clause (to AND with a query) keeping a superset of the memories that
    ``scope``'s tag filters let through, or None (no tag filter, or a tag with no index
    term, which the clause could not find).

    Each tag is a phrase of the ``tags`` column, so FTS5 intersects its short list of
    memories with the query's instead of the walk joining every match to its tags. A
    phrase also matches a memory whose tags merely contain it ("rare" in "rare-books"):
    the scope's exact test still applies to every row read.
    """
    if not scope.tags_any and not scope.tags_all:
        return None
    if not all(tokenize(tag) for tag in (*scope.tags_any, *scope.tags_all)):
        return None

    def phrase(tag: str) -> str:
        return '"' + tag.replace('"', '""') + '"'

    clauses = [f"{{tags}} : {phrase(tag)}" for tag in scope.tags_all]
    if scope.tags_any:
        clauses.append(f"{{tags}} : ({' OR '.join(phrase(tag) for tag in scope.tags_any)})")
    return " AND ".join(clauses)


def namespace_match(namespaces: Sequence[str]) -> str:
    """An FTS5 clause (to AND with a query) keeping the memories of ``namespaces``."""
    tokens = " OR ".join(f'"{fts_namespace_token(namespace)}"' for namespace in namespaces)
    return f"{FTS_NAMESPACE_COLUMN} : ({tokens})"


def namespace_narrow(connection: apsw.Connection, namespaces: Sequence[str]) -> str:
    """:meth:`SQLiteRetrieval._namespace_narrow`, read on ``connection``."""
    others: list[str] = []
    found: list[tuple[Any, ...]] = connection.execute(
        "SELECT min(namespace) FROM memories"
    ).fetchall()
    # The file's namespaces in order, one index seek each, until there are too many.
    while found and found[0][0] is not None and len(others) <= NOT_NAMESPACES:
        name = str(found[0][0])
        if name not in namespaces:
            others.append(name)
        found = connection.execute(
            "SELECT min(namespace) FROM memories WHERE namespace > ?", (name,)
        ).fetchall()
    if not others:
        return ""
    if len(others) <= NOT_NAMESPACES:
        sampled: list[tuple[Any, ...]] = connection.execute(
            "SELECT count(*), sum(namespace IN (SELECT value FROM json_each(:ns)))"
            " FROM memories WHERE seq > (SELECT max(seq) FROM memories) - :rows",
            {"ns": json.dumps(list(namespaces)), "rows": WORD_SAMPLE_ROWS},
        ).fetchall()
        total, inside = sampled[0]
        if total and 2 * int(inside or 0) > int(total):
            return f" NOT {namespace_match(others)}"
    return f" AND {namespace_match(namespaces)}"


# The length BM25 normalises to in recalld's ranking functions: the sum of the reference
# lengths recall's BM25F uses for title, content, tags and speaker, plus the namespace term
# (a memory's place name, when it has one, is part of its length). Not the
# file's average length, which other namespaces' memories would move.
RANK_REFERENCE_LENGTH = 28.0
WEIGHTED_RANK_FUNCTION = "recalld_weighted_rank"


def _bm25(api: apsw.FTS5ExtensionApi, phrases: int, weights: Sequence[float] | None) -> float:
    """BM25 of the current row over the query's first ``phrases`` phrases, each weighted
    by ``weights`` (all alike when None), with the candidate column weights."""
    norm = RANK_K1 * (1.0 - RANK_B + RANK_B * api.column_size(-1) / RANK_REFERENCE_LENGTH)
    score = 0.0
    for phrase in range(phrases):
        frequency = 0.0
        for column in api.phrase_columns(phrase):
            if column < len(RANK_WEIGHTS) and RANK_WEIGHTS[column]:
                frequency += RANK_WEIGHTS[column] * len(api.phrase_column_offsets(phrase, column))
        if frequency:
            weight = 1.0 if weights is None else weights[phrase]
            score += weight * frequency * (RANK_K1 + 1.0) / (frequency + norm)
    return score


def recent_rank(api: apsw.FTS5ExtensionApi, *arguments: apsw.SQLiteValue) -> float:
    """FTS5's BM25 of the current row (the candidate weights, the same k1 and b), with
    every phrase weighted alike: higher is better. Its one optional argument is how many
    of the query's first phrases count (the query's words: not the filters ANDed after
    them).

    It is FTS5's ``bm25()`` without the inverse document frequencies, whose counts
    take a walk over every memory holding each word (see
    :meth:`SQLiteRetrieval._common_candidates`); the words it ranks for are all
    common, so their weights would be about equal anyway. Lengths are normalised to
    :data:`RANK_REFERENCE_LENGTH`.
    """
    phrases = api.phrase_count
    if arguments and isinstance(arguments[0], int):
        phrases = min(phrases, arguments[0])
    return _bm25(api, phrases, None)


def weighted_rank(api: apsw.FTS5ExtensionApi, *arguments: apsw.SQLiteValue) -> float:
    """:func:`recent_rank` with a weight for each phrase: its arguments are how many of
    the query's first phrases count, then each one's weight (its IDF over the scope's
    own counts), so nothing of other memories (another namespace's) moves the order."""
    counted = arguments[0] if arguments else 0
    weights = [float(value) for value in arguments[1:] if isinstance(value, int | float)]
    phrases = min(api.phrase_count, counted, len(weights)) if isinstance(counted, int) else 0
    return _bm25(api, phrases, weights)


_RANKING: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()


def with_rank(connection: apsw.Connection) -> apsw.Connection:
    """``connection`` with :func:`recent_rank` and :func:`weighted_rank` registered (once
    per connection)."""
    if connection not in _RANKING:
        connection.register_fts5_function(RANK_FUNCTION, recent_rank)
        connection.register_fts5_function(WEIGHTED_RANK_FUNCTION, weighted_rank)
        _RANKING.add(connection)
    return connection
