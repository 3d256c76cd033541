"""The SQLite side of recall's candidate stage: keyword candidates, rows, neighbours, counts.

Terms come from the full-text index's own tokenizer (FTS5 ``porter unicode61
remove_diacritics 2``, called through apsw), so the reranker's BM25 counts
exactly the terms the index matched. Without FTS5 a plain lower-casing,
diacritic-folding word splitter stands in (no stemming, like the LIKE search).
A run of Chinese, Japanese, Korean, Thai, Lao, Myanmar or Khmer is one term (or
cut at its vowel signs) to the tokenizer: its characters and character pairs are
indexed too, as the ``fts_grams`` column (:mod:`recalld.store.grams`, migration
32), which a query's words match like any other text column (its words are pairs
already, :func:`recalld._text.query_terms`, and BM25F's row terms follow the index,
:func:`recalld.retrieval.keyword.document_terms`).

Keyword candidates skip common words. FTS5 ranks by scoring *every* row that
matches before it keeps the best, so one word held by most memories makes a
query cost a scan of the whole index (93% of the rows for a typical query of
the 100k recall benchmark: 64 ms). A word held by at least
:data:`COMMON_WORD_MEMORIES` memories of the scope's namespaces is therefore
left out of the candidate search when the query has a rarer word (one that
some memory of the namespaces holds: a word none holds finds nothing), and the
rarer words find the candidates, while the common word still counts in every
candidate's own BM25F (:mod:`recalld.retrieval.keyword`), and the vector
channel still finds what is near in meaning. Which words pick candidates
depends on the namespaces alone; the file's counts choose how. Words the file
holds rarely are ranked by ``bm25()`` (their rows are few by definition);
words the file holds often are looked up as common words
(:meth:`SQLiteRetrieval._held_candidates`): those rare in the namespaces by
themselves, sharing the candidates with the file-rare words (half each, or
what the other leaves). Common words are looked up
as the memories holding all of them (the best by a BM25 without word weights,
:func:`recent_rank`, among the :data:`COMMON_MATCH_WINDOW` most recently
written of them, found in a bounded range of the newest rowids), then, while
there is room, the most recently written memories holding any of them (a scan
that stops when it has enough, never a ranking of every match).
"""

from __future__ import annotations

import json
import threading
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import apsw

from recalld._text import QUESTION_HEAD, WORD, asks_question
from recalld._time import to_storage
from recalld.store.base import Scope
from recalld.store.migrations import (
    FTS_TABLE,
)
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
    reference_idf,
)
from recalld.store.sql import EARLIEST_WALK, neighbour_pairs
from recalld.store.sql import escape_like as _escape_like
from recalld.store.sql import like_words as _like_words
from recalld.store.sql import substring_pattern as _substring_pattern
from recalld.store.sqlite_connection import SQLiteDatabase
from recalld.store.sqlite_fts_query import (
    RANK_FUNCTION,
    WEIGHTED_RANK_FUNCTION,
    WORD_SAMPLE_ROWS,
    namespace_match,
    namespace_narrow,
    tags_match,
    text_match,
    with_rank,
)
from recalld.store.sqlite_row_cache import CachedRow, RowCache
from recalld.store.sqlite_rows import scope_sql as _scope_sql

__all__ = ["SQLiteRetrieval", "text_match"]

# FTS5 weights of title, content, tags, speaker, place name, key: only order the keyword
# candidates (the reranker computes its own field-weighted BM25 over them).
CANDIDATE_WEIGHTS = "2.0, 1.0, 1.0, 1.0, 1.0, 1.0"
TOKENIZER_ARGUMENTS = ["unicode61", "remove_diacritics", "2"]
# A word in at least this many memories of the file is common (see the module docstring).
COMMON_WORD_MEMORIES = 1_000
# A query of common words only ranks this many of the newest memories holding them all.
COMMON_MATCH_WINDOW = 1_000
# Equal BM25 scores oldest first, as PostgreSQL's ts_rank ties and recall's final order.
BM25_ORDER = f"bm25({FTS_TABLE}, {CANDIDATE_WEIGHTS}), {FTS_TABLE}.rowid"
# Word counts kept per thread while the file is unchanged (see _kept_counts).
COUNT_CACHE_SIZE = 4_096
# The kept counts' key for a word's share of the newest memories (see _telling); an FTS5
# clause narrowing a count always starts with " AND ".
NEWEST_SAMPLE = "newest"
# Words rare in the scope's namespaces but common in the file rank at most about this many
# matches a candidate wanted (see SQLiteRetrieval._local_candidates).
LOCAL_RANKED_MATCHES = 2


@dataclass
class _Counts:
    """Word counts of one connection at one version of the file, by (word, cap, narrow),
    and its namespace clauses."""

    connection: apsw.Connection
    version: tuple[int, int]
    values: dict[tuple[str, int, str], int] = field(default_factory=dict)
    # The namespace clause of each set of namespaces (see SQLiteRetrieval._namespace_narrow).
    narrows: dict[tuple[str, ...], str] = field(default_factory=dict)


def _row(values: Sequence[Any]) -> CandidateRow:
    tags = values[5]
    return candidate_row(values, () if tags == "[]" else tuple(json.loads(tags)), values[8])


def _filters_beyond_tags(scope: Scope) -> bool:
    """Whether ``scope`` narrows rows by more than namespace, expiry and tags (what a
    kept row can be tested for: it holds its tags)."""
    return replace(scope, tags_any=(), tags_all=()).filters_rows


def _count_each(
    connection: apsw.Connection, matches: Sequence[str], count: str, params: dict[str, Any]
) -> list[int]:
    """``count`` (a SQL count reading the FTS5 query ``:match``) for each of ``matches``,
    in one statement."""
    bound = dict(params)
    columns = []
    for index, match in enumerate(matches):
        bound[f"w{index}"] = match
        columns.append("(" + count.replace(":match", f":w{index}") + ")")
    rows: list[tuple[Any, ...]] = connection.execute(
        f"SELECT {', '.join(columns)}", bound
    ).fetchall()
    return [int(value) for value in rows[0]]


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(character for character in decomposed if not unicodedata.combining(character))


def _seq_params(seqs: Sequence[int], params: dict[str, Any]) -> str:
    params["seqs"] = json.dumps([int(seq) for seq in seqs])
    return "SELECT value FROM json_each(:seqs)"


class SQLiteRetrieval:
    """:class:`recalld.store.retrieval.RetrievalStore` on the store's connections."""

    def __init__(self, database: SQLiteDatabase, *, fts_available: bool) -> None:
        self._database = database
        self._fts_available = fts_available
        self._local = threading.local()
        self._row_cache = RowCache()

    def _read(self, sql: str, params: dict[str, Any] | tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._database.read(sql, params)

    # -- terms -------------------------------------------------------------------

    def tokenize(self, text: str) -> list[str]:
        if not text:
            return []
        if not self._fts_available:
            return [_fold(word) for word in WORD.findall(text)]
        tokenizer = getattr(self._local, "tokenizer", None)
        if tokenizer is None:
            connection = self._database.connection()
            tokenizer = connection.fts5_tokenizer("porter", TOKENIZER_ARGUMENTS)
            self._local.tokenizer = tokenizer
        encoded = text.encode("utf-8", errors="replace")
        terms = tokenizer(
            encoded,
            apsw.FTS5_TOKENIZE_DOCUMENT,
            None,
            include_offsets=False,
            include_colocated=False,
        )
        # Without offsets or colocated tokens apsw returns the terms as a list of str.
        return cast(list[str], terms)

    def document_counts(
        self, namespaces: Sequence[str], words: Sequence[str], cap: int
    ) -> dict[str, int]:
        if not self._fts_available or not words or not namespaces:
            return {}
        # The namespace terms of the memories (migration 13) narrow the match in the index
        # itself (no row lookups, no row of another namespace); most stores hold one
        # namespace, and then nothing narrows it.
        counts = self._index_counts(words, cap, self._namespace_narrow(namespaces))
        return dict(zip(words, counts, strict=True))

    def _index_counts(self, words: Sequence[str], cap: int, narrow: str = "") -> list[int]:
        """How many memories hold each word, counted up to ``cap`` by the index alone (no
        row lookups): in the whole file, or in what the FTS5 clause ``narrow`` keeps.

        Counts are kept until the file changes (:meth:`_kept_counts`): a query counts
        the same words twice on a one-namespace store (common words, then IDF), and
        consecutive queries share most words.
        """

        def count(connection: apsw.Connection) -> list[int]:
            return self._kept_counts(
                connection,
                words,
                (cap, narrow),
                lambda missing: _count_each(
                    connection,
                    [text_match([word]) + narrow for word in missing],
                    f"SELECT count(*) FROM (SELECT 1 FROM {FTS_TABLE}"
                    f" WHERE {FTS_TABLE} MATCH :match LIMIT :cap)",
                    {"cap": cap},
                ),
            )

        return self._database.run(count)

    def _kept_counts(
        self,
        connection: apsw.Connection,
        words: Sequence[str],
        kind: tuple[int, str],
        count: Callable[[list[str]], list[int]],
    ) -> list[int]:
        """A count of each of ``words``, kept per thread under ``kind`` until the file
        changes (any commit by another connection moves ``PRAGMA data_version``; this
        connection's own writes move its ``total_changes``); ``count`` counts the words
        not kept yet."""
        cache = self._kept(connection)
        if len(cache.values) > COUNT_CACHE_SIZE:
            cache.values.clear()
        missing = [word for word in dict.fromkeys(words) if (word, *kind) not in cache.values]
        if missing:
            for word, value in zip(missing, count(missing), strict=True):
                cache.values[(word, *kind)] = value
        return [cache.values[(word, *kind)] for word in words]

    def _kept(self, connection: apsw.Connection) -> _Counts:
        """This thread's kept values for ``connection`` at the file's current version
        (any commit by another connection moves ``PRAGMA data_version``; this
        connection's own writes move its ``total_changes``): emptied when it moved."""
        data_version: list[tuple[Any, ...]] = connection.execute("PRAGMA data_version").fetchall()
        version = (int(data_version[0][0]), connection.total_changes())
        cache: _Counts | None = getattr(self._local, "counts", None)
        if cache is None or cache.connection is not connection or cache.version != version:
            cache = _Counts(connection, version)
            self._local.counts = cache
        return cache

    def _namespace_narrow(self, namespaces: Sequence[str]) -> str:
        """The FTS5 clause that keeps a match to the memories of ``namespaces`` (to append
        to it): empty when the file holds no other namespace; ``NOT`` the other
        namespaces' terms when there are at most :data:`NOT_NAMESPACES` of them and
        ``namespaces`` hold most of the :data:`WORD_SAMPLE_ROWS` newest memories;
        otherwise ``AND`` their own terms. Kept until the file changes.

        Every memory holds exactly one namespace term, so both clauses keep the same
        memories; what differs is the cost. FTS5 intersects a match with each term's
        list of memories, as long as its namespace: with a namespace holding 99 % of a
        million memories, a walk over three common words took 4.9 ms with its term and
        1.2 ms with the NOT of the 1 % one's.
        """

        def narrow(connection: apsw.Connection) -> str:
            cache = self._kept(connection)
            key = tuple(namespaces)
            found = cache.narrows.get(key)
            if found is None:
                if len(cache.narrows) > COUNT_CACHE_SIZE:
                    cache.narrows.clear()
                found = cache.narrows[key] = namespace_narrow(connection, namespaces)
            return found

        return self._database.run(narrow)

    # -- candidates --------------------------------------------------------------

    def keyword_candidates(
        self, scope: Scope, text: str, words: Sequence[str], limit: int
    ) -> list[KeywordCandidate]:

        if words and self._fts_available:
            counts = dict(zip(words, self._index_counts(words, COMMON_WORD_MEMORIES), strict=True))
            # Which words pick candidates is decided by the scope's namespaces alone (a word
            # another namespace holds often is still telling in this one); the file's counts
            # only choose how each is looked up.
            narrow = self._namespace_narrow(scope.namespaces) if scope.namespaces else ""
            inside = (
                dict(
                    zip(words, self._index_counts(words, COMMON_WORD_MEMORIES, narrow), strict=True)
                )
                if narrow
                else counts
            )
            # A word no memory holds finds nothing and must not hide the words that do.
            present = [word for word in words if inside[word] > 0]
            rare = [word for word in present if counts[word] < COMMON_WORD_MEMORIES]
            local = [
                word for word in present if inside[word] < COMMON_WORD_MEMORIES <= counts[word]
            ]
            if not present:
                return []
            if not rare and not local:  # every word is common in the namespaces
                return self._held_candidates(scope, present, limit)
            best = self._fts_candidates(scope, rare, "OR", limit) if rare else []
            if not local:
                return best
            # The words rare here only are looked up by themselves (the namespaces' common
            # words left out, as beside any rarer word), and share the room with the
            # file-rare words: half each, or what the other leaves.
            held = self._local_candidates(scope, local, inside, limit)
            chosen = best[: max(limit - len(held), limit // 2)]
            seen = {candidate.row.seq for candidate in chosen}
            return (chosen + [other for other in held if other.row.seq not in seen])[:limit]
        patterns = list(words) if words else [_substring_pattern(text)]
        return self._like_candidates(scope, [pattern for pattern in patterns if pattern], limit)

    def earliest_matches(
        self, scope: Scope, words: Sequence[str], limit: int
    ) -> list[KeywordCandidate]:
        words = _like_words(words)
        if not words or limit <= 0:
            return []
        params: dict[str, Any] = {"limit": limit, "walk": EARLIEST_WALK}
        where = _scope_sql(scope, params)
        likes = []
        for index, word in enumerate(words):
            params[f"p{index}"] = f"%{_escape_like(word)}%"
            likes.append(f"content LIKE :p{index} ESCAPE '\\'")
        # The scope's first memories in time order (the namespace's at index), then LIKE
        # on those only: however many memories of the file hold a word, or however many
        # the range holds, at most EARLIEST_WALK rows are read.
        rows = self._read(
            f"SELECT * FROM (SELECT {ROW_COLUMNS} FROM memories m WHERE {where}"
            " AND m.at_utc IS NOT NULL ORDER BY m.at_utc, m.seq LIMIT :walk)"
            f" WHERE {' OR '.join(likes)} ORDER BY at_utc, seq LIMIT :limit",
            params,
        )
        return [KeywordCandidate(row=_row(values), backend="like") for values in rows]

    def _fts_candidates(
        self,
        scope: Scope,
        words: Sequence[str],
        operator: str,
        limit: int,
        newest: bool = False,
    ) -> list[KeywordCandidate]:
        """The best ``limit`` matches by FTS5's BM25, or with ``newest`` the most recently
        written ones (the scan stops at ``limit``)."""
        params: dict[str, Any] = {
            "match": text_match(words, operator),
            "limit": limit,
        }
        where = _scope_sql(scope, params)
        # Rare words only (an OR of words under COMMON_WORD_MEMORIES memories each: their
        # counts are exact, so BM25's own count of each word's memories is cheap).
        if (
            operator == "OR"
            and not newest
            and not scope.filters_rows
            and not self._crowded(scope, words)
        ):
            return self._ranked_then_read(scope, params["match"], limit, BM25_ORDER)
        order = f"{FTS_TABLE}.rowid DESC" if newest else BM25_ORDER
        if newest:
            # Newest first: the walk stops once it has ``limit`` rows of the scope, and the
            # scope's terms in the match spare it every other row. (Not under BM25, whose
            # score the tags' phrases would change.)
            params["match"] = self._scoped(scope, params["match"])
        rows = self._read(
            f"SELECT {ROW_COLUMNS} FROM {FTS_TABLE} JOIN memories m"
            f" ON m.seq = {FTS_TABLE}.rowid WHERE {FTS_TABLE} MATCH :match AND {where}"
            f" ORDER BY {order} LIMIT :limit",
            params,
        )
        return [KeywordCandidate(row=_row(values), backend="fts5") for values in rows]

    def _common_candidates(
        self, scope: Scope, words: Sequence[str], limit: int
    ) -> list[KeywordCandidate]:
        """The memories holding every one of ``words`` (all common): the best ``limit`` by
        :func:`recent_rank` among the :data:`COMMON_MATCH_WINDOW` newest of the scope's.

        FTS5's ``bm25()`` is not used here: it counts the memories of each word over the
        whole index before it scores the first row (34 of the 45 ms such a query took at
        1M memories), and the words are common by definition.
        """
        if not scope.namespaces or limit <= 0:
            return []
        # The scope's terms keep the window to the scope's own matches: a window of
        # another namespace's, or of untagged, matches would leave none.
        match = self._scoped(scope, text_match(words, "AND"))
        newest = self._newest_matches(match, COMMON_MATCH_WINDOW, len(words))
        newest.sort(key=lambda item: (-item[1], -item[0]))
        return self._read_in_order(scope, [seq for seq, _ in newest], limit)

    def _held_candidates(
        self, scope: Scope, words: Sequence[str], limit: int
    ) -> list[KeywordCandidate]:
        """Candidates for words the file holds often (:data:`COMMON_WORD_MEMORIES` or more
        memories; held by the scope's namespaces, often or not): the memories holding all
        of them (:meth:`_common_candidates`), then, while there is room, the newest
        holding any. Never FTS5's ``bm25()``, which counts each word's memories over the
        whole index before the first row; the scope's terms keep both walks to the
        scope's own matches."""
        every = (
            self._common_candidates(scope, self._telling(scope, words), limit)
            if len(words) > 1
            else []
        )
        if len(every) >= limit:
            return every
        seen = {candidate.row.seq for candidate in every}
        newest = self._fts_candidates(scope, words, "OR", limit, newest=True)
        return (every + [found for found in newest if found.row.seq not in seen])[:limit]

    def _local_candidates(
        self, scope: Scope, words: Sequence[str], inside: dict[str, int], limit: int
    ) -> list[KeywordCandidate]:
        """Candidates for words the scope's namespaces hold rarely (fewer than
        :data:`COMMON_WORD_MEMORIES` memories; ``inside`` counts them) though the file
        holds them often: the namespaces' matches, best first by BM25 whose weights and
        length normalisation read nothing of other namespaces (:func:`weighted_rank`).

        Not FTS5's ``bm25()``, which would count each word's memories over the whole
        file before the first row; and not the newest matches first, which let another
        namespace's use of a word decide which of this one's matches were candidates
        (its best one dropped once another namespace held the word 1,000 times).
        """
        if not scope.namespaces or limit <= 0:
            return []
        # Ranking costs a call per match: the rarest words here pick, until their matches
        # would pass LOCAL_RANKED_MATCHES a candidate (at least one word). The others
        # still count in every candidate's BM25F, as a common word does beside a rarer.
        picked: list[str] = []
        matches = 0
        for word in sorted(words, key=lambda word: (inside[word], word)):
            if picked and matches + inside[word] > LOCAL_RANKED_MATCHES * limit:
                break
            picked.append(word)
            matches += inside[word]

        def ranked(chosen: Sequence[str], operator: str) -> list[KeywordCandidate]:
            weights = ", ".join(repr(reference_idf(inside[word])) for word in chosen)
            # Ties in the order FTS5 ranks them for bm25() (its scan: oldest first).
            order = f"{WEIGHTED_RANK_FUNCTION}({FTS_TABLE}, {len(chosen)}, {weights}) DESC, rowid"
            match = self._scoped(scope, text_match(chosen, operator))
            return self._ranked_then_read(scope, match, limit, order, ranking=True)

        if len(picked) == len(words):
            return ranked(words, "OR")
        # The words left out still pick the memories that hold every one of the words
        # (few, so few to rank): the one holding "budget" and "meeting" is not lost
        # because "budget" alone was ranked.
        every = ranked(words, "AND")
        if len(every) >= limit:
            return every
        seen = {candidate.row.seq for candidate in every}
        rest = ranked([word for word in words if word in picked], "OR")
        return (every + [found for found in rest if found.row.seq not in seen])[:limit]

    def _telling(self, scope: Scope, words: Sequence[str]) -> list[str]:
        """``words`` without those held by most of the newest memories (at least one kept).

        A word in more than half of the memories tells them apart no more than a
        stop word (BM25's weight for it is about zero), yet it makes FTS5 walk a
        list as long as the file in every AND it joins: 12 ms for an AND of four
        common words at 1M memories, 0.7 ms without the two that nine memories in
        ten hold. The share is sampled over the :data:`WORD_SAMPLE_ROWS` newest
        rowids of the whole file, or, when the file holds other namespaces, over
        the scope's namespaces' newest memories: another namespace's newest
        memories must not decide which of this one's words are stop words (a bounded
        walk per word); the candidates' BM25F still counts every word.
        """
        narrow = self._namespace_narrow(scope.namespaces) if scope.namespaces else ""

        def sample(connection: apsw.Connection) -> list[int]:
            if narrow:
                # The namespaces' newest memories, walked down their terms in the index.
                top: list[tuple[Any, ...]] = connection.execute(
                    f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :match"
                    " ORDER BY rowid DESC LIMIT 1 OFFSET :offset",
                    {
                        "match": namespace_match(scope.namespaces),
                        "offset": WORD_SAMPLE_ROWS - 1,
                    },
                ).fetchall()
                if not top:
                    return []
                low = int(top[0][0])
            else:
                top = connection.execute("SELECT max(seq) FROM memories").fetchall()
                if not top or top[0][0] is None or int(top[0][0]) < WORD_SAMPLE_ROWS:
                    return []
                low = int(top[0][0]) - WORD_SAMPLE_ROWS + 1
            # Kept with the word counts, until the file changes.
            return self._kept_counts(
                connection,
                words,
                (WORD_SAMPLE_ROWS, NEWEST_SAMPLE + narrow),
                lambda missing: _count_each(
                    connection,
                    [text_match([word]) + narrow for word in missing],
                    f"SELECT count(*) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :match"
                    f" AND {FTS_TABLE}.rowid >= :low",
                    {"low": low},
                ),
            )

        held = self._database.run(sample)
        if not held:
            return list(words)
        telling = [
            word for word, count in zip(words, held, strict=True) if 2 * count <= WORD_SAMPLE_ROWS
        ]
        return telling or [min(zip(held, words, strict=True))[1]]

    def _scoped(self, scope: Scope, match: str) -> str:
        """``match`` kept by FTS5 clauses to (a superset of) the rows ``scope`` sees: its
        tag filters (:func:`tags_match`) and its namespaces (:meth:`_namespace_narrow`).
        The SQL's exact wall still applies."""
        tagged = tags_match(scope, self.tokenize)
        if tagged is not None:
            match = f"{match} AND {tagged}"
        narrow = self._namespace_narrow(scope.namespaces) if scope.namespaces else ""
        return f"({match}){narrow}" if narrow else match

    def _newest_matches(self, match: str, window: int, words: int) -> list[tuple[int, float]]:
        """The ``window`` newest matches of ``match`` as ``(rowid, recent_rank)`` (ranked by
        its first ``words`` phrases).

        FTS5 walks a match from its newest end at twice the cost of a forward walk, and
        it finds the first match of an AND from the start of the file whatever rowid
        range is asked for. So a forward walk that stops after ``window + 1`` matches
        comes first: when it finds no more than ``window``, they are every match.
        Only a match held by more memories is walked from its newest end, and that
        walk stops after ``window`` of them.
        """
        sql = (
            f"SELECT rowid, {RANK_FUNCTION}({FTS_TABLE}, :words) FROM {FTS_TABLE}"
            f" WHERE {FTS_TABLE} MATCH :match ORDER BY rowid {{}} LIMIT :limit"
        )
        params = {"match": match, "words": words}

        def walk(connection: apsw.Connection) -> list[tuple[int, float]]:
            with_rank(connection)
            found = connection.execute(sql.format("ASC"), {**params, "limit": window + 1})
            rows: list[tuple[Any, ...]] = found.fetchall()
            if len(rows) > window:
                found = connection.execute(sql.format("DESC"), {**params, "limit": window})
                rows = found.fetchall()
            return [(int(rowid), float(rank)) for rowid, rank in rows]

        return self._database.run(walk)

    def _ranked_then_read(
        self, scope: Scope, match: str, limit: int, order: str, *, ranking: bool = False
    ) -> list[KeywordCandidate]:
        """The best ``limit`` matches ranked by the index alone (by ``order``), then read
        by seq.

        Joining every match to its row before the sort read each matching memory
        (content included) only to keep ``limit`` of them. Here a few more than
        ``limit`` are ranked and read, and the rows apply the namespace wall and
        expiry; the ranking goes deeper only when they left too few. It is used
        when the scope's namespaces hold most of the matches (see :meth:`_crowded`),
        so other namespaces rarely take places. ``ranking``: ``order`` calls recalld's
        own ranking functions (:func:`with_rank`).
        """
        if not scope.namespaces or limit <= 0:
            return []
        depth = limit + max(limit // 4, 8)
        sql = (
            f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :match"
            f" ORDER BY {order} LIMIT :depth"
        )
        while True:
            params = {"match": match, "depth": depth}
            ranked = self._ranked(sql, params) if ranking else self._read(sql, params)
            seqs = [int(row[0]) for row in ranked]
            kept = self._read_in_order(scope, seqs, limit)
            if len(kept) >= limit or len(seqs) < depth:
                return kept
            depth *= 4

    def _ranked(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """:meth:`_read` on a connection with recalld's ranking functions."""

        def read(connection: apsw.Connection) -> list[tuple[Any, ...]]:
            return with_rank(connection).execute(sql, params).fetchall()

        return self._database.run(read)

    def _read_in_order(
        self, scope: Scope, seqs: Sequence[int], limit: int
    ) -> list[KeywordCandidate]:
        """The rows of the first ``limit`` of ``seqs`` the scope sees, in that order: read
        a few more than ``limit`` at a time (the scope's row filters may drop some)."""
        kept: list[KeywordCandidate] = []
        position = 0
        chunk = limit + max(limit // 4, 8)
        while len(kept) < limit and position < len(seqs):
            part = seqs[position : position + chunk]
            found = self.rows(scope, part)
            kept += [
                KeywordCandidate(row=found[seq], backend="fts5") for seq in part if seq in found
            ]
            position += len(part)
            chunk *= 4
        return kept[:limit]

    def _crowded(self, scope: Scope, words: Sequence[str]) -> bool:
        """Whether other namespaces hold most of the matches of ``words``.

        Then the join with the scope's rows stays the cheaper way (ranking with each
        memory's namespace term instead cost 44 ms against 20 for a 1% namespace at
        1M memories). The in-scope counts are the ones BM25F asks for next (cached).
        """
        narrow = self._namespace_narrow(scope.namespaces)
        if not narrow:
            return False
        every = self._index_counts(words, COMMON_WORD_MEMORIES)
        inside = self._index_counts(words, COMMON_WORD_MEMORIES, narrow)
        return 2 * sum(inside) < sum(every)

    def _like_candidates(
        self, scope: Scope, patterns: Sequence[str], limit: int
    ) -> list[KeywordCandidate]:

        if not patterns:
            return []
        params: dict[str, Any] = {"limit": limit}
        where = _scope_sql(scope, params)
        parts = []
        for index, pattern in enumerate(patterns):
            params[f"p{index}"] = f"%{_escape_like(pattern)}%"
            like = f"LIKE :p{index} ESCAPE '\\'"
            parts.append(
                f"((m.content {like}) OR (coalesce(m.title, '') {like}) OR EXISTS (SELECT 1"
                f" FROM memory_tags t WHERE t.seq = m.seq AND t.tag {like})"
                f" OR (coalesce(m.speaker, '') {like}) OR (coalesce(m.place_name, '') {like})"
                f" OR (coalesce(m.key, '') {like}))"
            )
        matched = " + ".join(parts)
        rows = self._read(
            f"SELECT {ROW_COLUMNS}, ({matched}) AS matched FROM memories m"
            f" WHERE {where} AND ({matched}) > 0"
            " ORDER BY matched DESC, m.updated_at DESC, m.seq DESC LIMIT :limit",
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
        # Rows filtered by more than namespace, expiry and tags are read from the file.
        token = None if _filters_beyond_tags(scope) else self._change_token()
        if token is not None:
            return self._cached_rows(token, scope, seqs)
        params: dict[str, Any] = {}
        where = _scope_sql(scope, params)
        wanted = _seq_params(seqs, params)
        rows = self._read(
            f"SELECT {ROW_COLUMNS} FROM memories m WHERE m.seq IN ({wanted}) AND {where}",
            params,
        )
        return {int(values[0]): _row(values) for values in rows}

    def _change_token(self) -> int | None:
        """Migration 15's count of changes to what recall reads of memories. None (read
        from the file) on a private database, whose rows another thread could not see,
        and inside a transaction, which sees its own writes before anyone else does."""
        if self._database.private:
            return None

        def read(connection: apsw.Connection) -> int | None:
            if not connection.get_autocommit():
                return None
            found = connection.execute("SELECT counter FROM memory_changes WHERE id = 1")
            row = found.fetchone()
            return None if row is None else int(row[0])

        return self._database.run(read)

    def _cached_rows(
        self, token: int, scope: Scope, seqs: Sequence[int]
    ) -> dict[int, CandidateRow]:
        """:meth:`rows` through the row cache (:mod:`recalld.store.sqlite_row_cache`)."""
        found = self._row_cache.get(token, seqs)
        missing = [seq for seq in dict.fromkeys(seqs) if seq not in found]
        if missing:
            params: dict[str, Any] = {}
            wanted = _seq_params(missing, params)
            sql = f"SELECT {ROW_COLUMNS}, m.expires_at FROM memories m WHERE m.seq IN ({wanted})"

            def read(connection: apsw.Connection) -> tuple[bool, list[tuple[Any, ...]]]:
                # As in _change_token: what a transaction reads is not kept.
                return connection.get_autocommit(), connection.execute(sql, params).fetchall()

            committed, values = self._database.run(read)
            read_rows = {
                int(row[0]): CachedRow(_row(row[:ROW_WIDTH]), row[ROW_WIDTH]) for row in values
            }
            if committed:
                self._row_cache.put(token, read_rows)
            found.update(read_rows)
        namespaces = set(scope.namespaces)
        now = None if scope.include_expired else to_storage(scope.now)
        # As the SQL's tag tests (memory_tags holds each memory's tags, compared exactly).
        any_tag = frozenset(scope.tags_any)
        every_tag = frozenset(scope.tags_all)
        visible: dict[int, CandidateRow] = {}
        for seq in seqs:
            cached = found.get(seq)
            if cached is None or cached.row.namespace not in namespaces:
                continue
            if now is not None and cached.expires_at is not None and cached.expires_at <= now:
                continue
            if any_tag and any_tag.isdisjoint(cached.row.tags):
                continue
            if every_tag and not every_tag.issubset(cached.row.tags):
                continue
            visible[seq] = cached.row
        return visible

    def neighbours(self, scope: Scope, seqs: Sequence[int]) -> dict[int, Neighbours]:
        if not seqs:
            return {}
        params: dict[str, Any] = {}
        wanted = _seq_params(seqs, params)
        names = []
        for index, namespace in enumerate(scope.namespaces):
            params[f"ns{index}"] = namespace
            names.append(f":ns{index}")
        alive = ""
        if not scope.include_expired:
            params["now"] = to_storage(scope.now)
            alive = " AND (p.expires_at IS NULL OR p.expires_at > :now)"

        visible = f"m.seq IN ({wanted}) AND m.namespace IN ({', '.join(names) or 'NULL'})"
        pairs = self._read(neighbour_pairs(visible, alive), params)
        around = sorted({int(seq) for _, *sides, _ in pairs for seq in sides if seq is not None})
        known: dict[int, Neighbour] = {}
        if around:
            flags: dict[str, Any] = {}
            listed = _seq_params(around, flags)
            known = {
                int(seq): Neighbour(
                    int(seq), bool(flag) or asks_question(head), speaker, at_utc, bool(turn)
                )
                for seq, flag, head, speaker, at_utc, turn in self._read(
                    f"SELECT seq, instr(content, '?') > 0, substr(content, 1, {QUESTION_HEAD}),"
                    f" speaker, at_utc, kind = '{TURN_KIND}'"
                    f" FROM memories WHERE seq IN ({listed})",
                    flags,
                )
            }
        return neighbours_of(pairs, known)
