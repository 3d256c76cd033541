"""The PostgreSQL side of recall's candidate stage: keyword candidates, rows, neighbours, counts.

Keyword candidates come from the weighted ``search`` vector (the same query
building as :meth:`recalld.store.postgres.PostgresStore.search`: each word
through ``plainto_tsquery``, OR-ed, so no user string is parsed as tsquery
syntax), ordered by ``ts_rank``; without word terms, or when every word is a
stop word, a case-insensitive substring match stands in (``like``). As on
SQLite, a word held by :data:`COMMON_WORD_MEMORIES` memories or more of the
scope's namespaces is left out
of the candidate search when the query has a rarer word (``ts_rank`` scores
every match), and a query of only common words takes the memories holding all
of them, best first, then the newest holding any.

Terms (:meth:`PostgresRetrieval.tokenize`) come from the same tokenizer as the
SQLite index, FTS5's ``porter unicode61 remove_diacritics 2`` on a private
in-memory SQLite connection (apsw is a dependency anyway): recall's reranker
was fitted on those terms, so its BM25F features (and so its scores) are the
same on both stores, and tokenizing a pool costs no round trip. Document
counts come from the ``search`` vector, whose English stemmer differs from
Porter's in a few words; a word PostgreSQL drops as a stop word ("the", "and")
is counted as held by ``cap`` memories, which is what it is in any real
collection, so its IDF is the floor, as a common word's is on SQLite. The
character pairs of Chinese, Japanese, Korean, Thai, Lao, Myanmar and Khmer text
(the ``fts_grams`` column, migration 32) are part of the ``search`` vector at the
content's weight, as they are a column of SQLite's index.
"""

from __future__ import annotations

import logging
import threading
import unicodedata
from collections.abc import Sequence
from typing import Any

import apsw

from recalld._text import QUESTION_HEAD, WORD, asks_question
from recalld._time import to_storage
from recalld.store.base import Scope
from recalld.store.postgres_connection import PostgresDatabase
from recalld.store.postgres_migrations import SEARCH_CONFIGURATION
from recalld.store.postgres_migrations_words import word_query
from recalld.store.postgres_rows import Parameters, scope_sql
from recalld.store.retrieval import (
    ROW_COLUMNS,
    ROW_WIDTH,
    TURN_KIND,
    CandidateRow,
    KeywordCandidate,
    Neighbour,
    Neighbours,
    candidate_row,
    neighbours_of,
)
from recalld.store.sql import (
    EARLIEST_WALK,
    escape_like,
    like_words,
    neighbour_pairs,
    substring_pattern,
)

__all__ = ["PostgresRetrieval"]

logger = logging.getLogger(__name__)

# ts_rank weights for {D, C, B, A} (speaker and place, tags, content, title and key): they only
# order the candidates; the reranker computes its own field-weighted BM25 over them.
CANDIDATE_WEIGHTS = "{0.5, 0.5, 0.5, 1.0}"
TOKENIZER_ARGUMENTS = ["unicode61", "remove_diacritics", "2"]
# A word in at least this many memories of the namespaces is common: as on SQLite (see
# recalld.store.sqlite_retrieval), it is left to the rarer words of the query.
COMMON_WORD_MEMORIES = 1_000


def _row(values: Sequence[Any]) -> CandidateRow:
    at_utc = values[8]
    tags = tuple(str(tag) for tag in values[5])
    return candidate_row(values, tags, None if at_utc is None else to_storage(at_utc))


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(character for character in decomposed if not unicodedata.combining(character))


# The LC_CTYPEs under which PostgreSQL's text search parser reads every non-ASCII
# character as a letter.
ASCII_CTYPES = frozenset({"C", "POSIX"})


class PostgresRetrieval:
    """:class:`recalld.store.retrieval.RetrievalStore` on the store's connection pool."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._database = database
        self._local = threading.local()

    def warn_about_search(self) -> None:
        """Log a warning for each way this database's keyword search falls short: no
        ``unaccent`` dictionary in the search configuration (migration 23 could not
        create the extension: "Munchen" then misses "München"), or a database whose
        ``LC_CTYPE`` is ``C``/``POSIX``, where PostgreSQL's parser takes every non-ASCII
        character for a letter (a no-break space, an em dash or an emoji then joins the
        words beside it: "hello" misses "hello\u00a0world")."""
        folds, ctype = self._database.read(
            "SELECT EXISTS (SELECT 1 FROM pg_ts_config_map m"
            " JOIN pg_ts_config c ON c.oid = m.mapcfg JOIN pg_ts_dict d ON d.oid = m.mapdict"
            " WHERE c.cfgname = %s AND d.dictname = 'unaccent'),"
            " (SELECT datctype FROM pg_database WHERE datname = current_database())",
            (SEARCH_CONFIGURATION,),
        )[0]
        if not folds:
            logger.warning(
                "keyword search in %s does not fold accents: the unaccent extension is"
                " missing (see the README's PostgreSQL section)",
                self._database.display,
            )
        if ctype in ASCII_CTYPES:
            logger.warning(
                "keyword search in %s splits words at ASCII characters only: the database's"
                " LC_CTYPE is %s, so a no-break space, a dash or an emoji joins the words"
                " beside it (create the database with a UTF-8 LC_CTYPE such as C.UTF-8; see"
                " the README's PostgreSQL section)",
                self._database.display,
                ctype,
            )

    # -- terms -------------------------------------------------------------------

    def tokenize(self, text: str) -> list[str]:
        if not text:
            return []
        if not hasattr(self._local, "tokenizer"):
            connection = apsw.Connection(":memory:")
            try:
                self._local.tokenizer = connection.fts5_tokenizer("porter", TOKENIZER_ARGUMENTS)
            except apsw.Error:  # an SQLite without FTS5: the plain word splitter below
                self._local.tokenizer = None
            self._local.connection = connection
        tokenizer = self._local.tokenizer
        if tokenizer is None:
            return [_fold(word) for word in WORD.findall(text)]
        encoded = text.encode("utf-8", errors="replace")
        terms = tokenizer(
            encoded,
            apsw.FTS5_TOKENIZE_DOCUMENT,
            None,
            include_offsets=False,
            include_colocated=False,
        )
        return [str(term) for term in terms]

    def document_counts(
        self, namespaces: Sequence[str], words: Sequence[str], cap: int
    ) -> dict[str, int]:
        if not words or not namespaces:
            return {}
        params = Parameters()
        names = params.bind("names", list(namespaces))
        limit = params.bind("cap", cap)
        columns = []
        for index, word in enumerate(words):
            query = word_query(params.bind, f"w{index}", word)
            # Counting stops at the cap, so a very common word costs a bounded scan.
            columns.append(
                f"CASE WHEN numnode({query}) = 0 THEN {limit} ELSE"
                f" (SELECT count(*) FROM (SELECT 1 FROM memories m WHERE m.search @@ {query}"
                f" AND m.namespace = ANY({names}) LIMIT {limit}) AS hits) END"
            )
        row = self._database.read(f"SELECT {', '.join(columns)}", params)[0]
        return {word: int(count) for word, count in zip(words, row, strict=True)}

    # -- candidates --------------------------------------------------------------

    def keyword_candidates(
        self, scope: Scope, text: str, words: Sequence[str], limit: int
    ) -> list[KeywordCandidate]:
        if words:
            found = self._full_text(scope, words, limit)
            if found is not None:
                return found
        patterns = list(words) if words else [substring_pattern(text)]
        return self._like_candidates(scope, [pattern for pattern in patterns if pattern], limit)

    def _full_text(
        self, scope: Scope, words: Sequence[str], limit: int
    ) -> list[KeywordCandidate] | None:
        """Full-text candidates, or None when the words hold no lexeme (only stop words)."""
        # Counted in the scope's namespaces: which words pick candidates never depends on
        # what another namespace holds (ts_rank, unlike FTS5's bm25, has no IDF to count).
        counts = self._namespace_counts(scope.namespaces, words, COMMON_WORD_MEMORIES)
        # A word no memory holds (or a stop word) finds nothing and must not hide the others.
        present = [word for word in words if counts[word] > 0]
        rare = [word for word in present if counts[word] < COMMON_WORD_MEMORIES]
        if rare or not present:
            return self._matches(scope, rare or list(words), "||", limit)
        every = self._matches(scope, present, "&&", limit) if len(present) > 1 else []
        if every is not None and len(every) >= limit:
            return every
        newest = self._matches(scope, present, "||", limit, newest=True)
        if newest is None:
            return every
        seen = {candidate.row.seq for candidate in every or []}
        return ((every or []) + [found for found in newest if found.row.seq not in seen])[:limit]

    def earliest_matches(
        self, scope: Scope, words: Sequence[str], limit: int
    ) -> list[KeywordCandidate]:
        words = like_words(words)
        if not words or limit <= 0:
            return []
        params = Parameters()
        likes = " OR ".join(
            f"w.content ILIKE {params.bind(f'p{index}', f'%{escape_like(word)}%')} ESCAPE '\\'"
            for index, word in enumerate(words)
        )
        where = scope_sql(scope, params)
        # The scope's first memories in time order, then ILIKE on those only.
        rows = self._database.read(
            f"SELECT w.* FROM (SELECT {ROW_COLUMNS} FROM memories m WHERE {where}"
            " AND m.at_utc IS NOT NULL ORDER BY m.at_utc, m.seq"
            f" LIMIT {params.bind('walk', EARLIEST_WALK)}) AS w WHERE {likes}"
            f" ORDER BY w.at_utc, w.seq LIMIT {params.bind('limit', limit)}",
            params,
        )
        return [KeywordCandidate(row=_row(values), backend="like") for values in rows]

    def _namespace_counts(
        self, namespaces: Sequence[str], words: Sequence[str], cap: int
    ) -> dict[str, int]:
        """How many memories of ``namespaces`` hold each word (up to ``cap``; a stop word 0)."""
        params = Parameters()
        limit = params.bind("cap", cap)
        names = params.bind("names", list(namespaces))
        columns = []
        for index, word in enumerate(words):
            query = word_query(params.bind, f"w{index}", word)
            columns.append(
                f"(SELECT count(*) FROM (SELECT 1 FROM memories m WHERE m.search @@ {query}"
                f" AND m.namespace = ANY({names}) LIMIT {limit}) AS hits)"
            )
        row = self._database.read(f"SELECT {', '.join(columns)}", params)[0]
        return {word: int(count) for word, count in zip(words, row, strict=True)}

    def _matches(
        self, scope: Scope, words: Sequence[str], operator: str, limit: int, newest: bool = False
    ) -> list[KeywordCandidate] | None:
        """The best ``limit`` matches by ``ts_rank`` (or, with ``newest``, the most recent);
        None when the words hold no lexeme."""
        params = Parameters()
        query = f" {operator} ".join(
            word_query(params.bind, f"w{index}", word) for index, word in enumerate(words)
        )
        where = scope_sql(scope, params)
        order = (
            "m.seq DESC"
            if newest
            # Equal ranks oldest first, as SQLite's BM25 ties and recall's final order.
            else f"ts_rank('{CANDIDATE_WEIGHTS}', m.search, q.query, 1) DESC NULLS LAST, m.seq"
        )
        rows = self._database.read(
            f"WITH q AS (SELECT ({query}) AS query)"
            f" SELECT {ROW_COLUMNS}, numnode(q.query) AS nodes"
            f" FROM q LEFT JOIN memories m ON m.search @@ q.query AND {where}"
            f" ORDER BY {order} LIMIT {params.bind('limit', limit)}",
            params,
        )
        if not rows or rows[0][-1] == 0:
            return None
        return [
            KeywordCandidate(row=_row(values[:ROW_WIDTH]), backend="postgres-fts")
            for values in rows
            if values[0] is not None
        ]

    def _like_candidates(
        self, scope: Scope, patterns: Sequence[str], limit: int
    ) -> list[KeywordCandidate]:
        if not patterns:
            return []
        params = Parameters()
        where = scope_sql(scope, params)
        parts = []
        for index, pattern in enumerate(patterns):
            like = f"ILIKE {params.bind(f'p{index}', f'%{escape_like(pattern)}%')} ESCAPE '\\'"
            parts.append(
                f"((m.content {like}) OR (coalesce(m.title, '') {like}) OR EXISTS (SELECT 1"
                f" FROM memory_tags t WHERE t.seq = m.seq AND t.tag {like})"
                f" OR (coalesce(m.speaker, '') {like}) OR (coalesce(m.place_name, '') {like})"
                f" OR (coalesce(m.key, '') {like}))::int"
            )
        matched = " + ".join(parts)
        rows = self._database.read(
            f"SELECT {ROW_COLUMNS}, ({matched}) AS matched FROM memories m"
            f" WHERE {where} AND ({matched}) > 0"
            f" ORDER BY matched DESC, m.updated_at DESC, m.seq DESC"
            f" LIMIT {params.bind('limit', limit)}",
            params,
        )
        total = float(len(patterns))
        return [
            KeywordCandidate(
                row=_row(values[:ROW_WIDTH]),
                backend="like",
                like_share=float(values[ROW_WIDTH]) / total,
            )
            for values in rows
        ]

    def rows(self, scope: Scope, seqs: Sequence[int]) -> dict[int, CandidateRow]:
        if not seqs:
            return {}
        params = Parameters()
        where = scope_sql(scope, params)
        wanted = params.bind("seqs", [int(seq) for seq in seqs])
        rows = self._database.read(
            f"SELECT {ROW_COLUMNS} FROM memories m WHERE m.seq = ANY({wanted}) AND {where}",
            params,
        )
        return {int(values[0]): _row(values) for values in rows}

    def neighbours(self, scope: Scope, seqs: Sequence[int]) -> dict[int, Neighbours]:
        if not seqs:
            return {}
        params = Parameters()
        wanted = params.bind("seqs", [int(seq) for seq in seqs])
        names = params.bind("names", list(scope.namespaces))
        alive = ""
        if not scope.include_expired:
            alive = f" AND (p.expires_at IS NULL OR p.expires_at > {params.bind('now', scope.now)})"

        visible = f"m.seq = ANY({wanted}) AND m.namespace = ANY({names})"
        pairs = self._database.read(neighbour_pairs(visible, alive), params)
        around = sorted({int(seq) for _, *sides, _ in pairs for seq in sides if seq is not None})
        known: dict[int, Neighbour] = {}
        if around:
            known = {
                int(seq): Neighbour(
                    int(seq),
                    bool(flag) or asks_question(head),
                    speaker,
                    None if at_utc is None else to_storage(at_utc),
                    bool(turn),
                )
                for seq, flag, head, speaker, at_utc, turn in self._database.read(
                    f"SELECT seq, strpos(content, '?') > 0, left(content, {QUESTION_HEAD}),"
                    f" speaker, at_utc, kind = '{TURN_KIND}'"
                    " FROM memories WHERE seq = ANY(%s)",
                    (around,),
                )
            }
        return neighbours_of(pairs, known)
