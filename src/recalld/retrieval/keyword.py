"""Field-weighted BM25 (BM25F) over a memory's title, content, tags, speaker, place and key.

The candidate stage takes the full-text index's best matches; this module
scores each candidate (and each candidate's neighbours) itself, because
FTS5's ``bm25()`` has fixed ``k1 = 1.2, b = 0.75`` and an IDF that depends on
how many memories are stored: with one memory every term's IDF collapses to
zero, so the same memory would score differently in a store of 1 and of 1,000.

Here the IDF uses a *fixed reference collection size* ``N_ref`` and the
number of memories of the namespace that hold the term, counted up to a cap
(a bounded scan): ``idf = ln(1 + (N_ref - df + 0.5) / (df + 0.5))``, floored
at the value for ``df = cap``. Length normalisation uses fixed reference
lengths per field, not the collection's average. So a memory's keyword score
depends only on the memory, the query and how many memories share the
query's words: memories that share no word with the query change nothing.

The normalised score divides BM25F by what a memory holding every query
term (saturated) would get: ``sum(idf * tf / (k1 + tf)) / sum(idf)``, in
[0, 1). It is the ``keyword`` channel of a hit.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import chain

import numpy as np

from recalld._text import (
    asks_question,
    document_grams,
    has_gram_text,
    named_words,
    query_terms,
)
from recalld.retrieval.temporal import mentions_time
from recalld.store.retrieval import CandidateRow, RetrievalStore, reference_idf

__all__ = [
    "KeywordParameters",
    "KeywordScore",
    "QueryKeywords",
    "RowTerms",
    "RowTermsCache",
    "document_terms",
    "prepare_query",
    "score_row",
    "score_rows",
    "term_hash",
]

FIELDS = ("title", "content", "tags", "speaker", "place", "key")


@dataclass(frozen=True)
class KeywordParameters:
    """The knobs of BM25F, shipped with the reranker they were fitted with."""

    # Chosen on the LoCoMo dev split by leave-one-conversation-out figures over a small
    # grid (k1 0.6/1.2, b 0.3/0.75, N_ref 1,000/10,000; see bench/RESULTS.md): a mild
    # length normalisation suits short memories.
    k1: float = 1.2
    b: float = 0.3
    weights: Mapping[str, float] = field(
        default_factory=lambda: {
            "title": 2.0,
            "content": 1.0,
            "tags": 1.0,
            "speaker": 1.0,
            "place": 1.0,
            "key": 1.0,
        }
    )
    reference_lengths: Mapping[str, float] = field(
        default_factory=lambda: {
            "title": 4.0,
            "content": 20.0,
            "tags": 2.0,
            "speaker": 1.0,
            "place": 2.0,
            "key": 2.0,
        }
    )
    reference_documents: float = 1_000.0
    document_count_cap: int = 1_000

    def idf(self, document_count: int) -> float:
        """The IDF of a term held by ``document_count`` memories (see the module docstring)."""
        return reference_idf(document_count, self.reference_documents, self.document_count_cap)


@dataclass(frozen=True)
class QueryKeywords:
    """A query's distinct index terms with their IDF, and every term of the query text."""

    terms: tuple[str, ...]
    idf: tuple[float, ...]
    all_terms: frozenset[str]
    unseen_name: bool = False
    """The query names something (a capitalised word, :func:`recalld._text.named_words`)
    that no memory of the namespaces holds: a person, place or thing the store never met."""

    @property
    def total_idf(self) -> float:
        """The best BM25F any memory could reach, before saturation."""
        return sum(self.idf)


# Not frozen: a recall builds one per candidate, and a frozen dataclass's __init__
# (object.__setattr__ per field) costs ~3x a plain one. Nothing mutates them.
@dataclass(slots=True)
class KeywordScore:
    """BM25F of one memory for one query: raw, normalised, and the share of terms matched."""

    raw: float
    normalised: float
    matched_share: float


ZERO = KeywordScore(raw=0.0, normalised=0.0, matched_share=0.0)


def prepare_query(
    store: RetrievalStore,
    namespaces: Sequence[str],
    text: str,
    words: Sequence[str],
    parameters: KeywordParameters,
    lexicon: frozenset[str] = frozenset(),
) -> QueryKeywords:
    """Stem the query's words with the index's tokenizer and look up their IDF, and
    whether a word the query names is one no memory holds (``lexicon``: time terms,
    which name no person: "in May", "last Sunday")."""
    stems: dict[str, str] = {}
    for word in words:
        for term in store.tokenize(word):
            stems.setdefault(term, word)
    names = [
        word.lower()
        for word in named_words(text)
        if any(len(term) >= MIN_NAME_CHARS and term not in lexicon for term in store.tokenize(word))
    ]
    looked_up = list(dict.fromkeys([*stems.values(), *names]))
    counts = store.document_counts(namespaces, looked_up, parameters.document_count_cap)
    terms = tuple(map(sys.intern, stems))
    idf = tuple(parameters.idf(counts.get(stems[term], 0)) for term in terms)
    # A store that cannot count (no full-text index) says nothing about names.
    unseen = any(counts.get(name) == 0 for name in names)
    return QueryKeywords(
        terms=terms, idf=idf, all_terms=frozenset(_query_terms(store, text)), unseen_name=unseen
    )


def _query_terms(store: RetrievalStore, text: str) -> list[str]:
    """Every index term of a query's text: a run of Chinese, Japanese or Korean as its
    character pairs (:func:`recalld._text.query_grams`), as the query's words are."""
    terms = store.tokenize(text)
    if not has_gram_text(text):
        return terms
    pairs = [part for part in query_terms(text, len(text)) if has_gram_text(part)]
    return [term for term in terms if not has_gram_text(term)] + store.tokenize(" ".join(pairs))


def document_terms(store: RetrievalStore, text: str) -> list[str]:
    """The index terms of a memory's field: the tokenizer's, with a term holding a run of
    Chinese, Japanese or Korean replaced by the run's characters and character pairs
    (:func:`recalld._text.document_grams`), the terms the index's ``fts_grams`` column
    holds for it. Text without such a run: the tokenizer's terms alone."""
    terms = store.tokenize(text)
    if not has_gram_text(text):
        return terms
    kept = [term for term in terms if not has_gram_text(term)]
    return kept + store.tokenize(" ".join(document_grams(text)))


@dataclass(frozen=True, slots=True)
class RowTerms:
    """What BM25F and the features need of one memory's text, computed once per text.

    For each searchable field that has terms (in :data:`FIELDS` order): its index
    terms, as the 64-bit hashes of the terms one after another in ``hashes`` (the
    fields one after another, ``lengths`` terms each; :func:`term_hash`), and its
    BM25F share (the field's weight over its length normalisation). A term's
    pseudo-frequency is the sum over the fields of its count in the field times the
    field's share: :func:`score_rows` counts a query's few terms in the hashes of a
    whole pool of memories at once, in numpy, instead of in Python memory by memory.
    The strings are not kept (a hash takes 8 bytes, a word in a tuple 8 bytes plus the
    word itself).
    """

    hashes: bytes
    """The int64 hashes of the fields' terms, field after field (native byte order)."""
    lengths: tuple[int, ...]
    """How many terms each field with terms holds, in :data:`FIELDS` order."""
    shares: tuple[float, ...]
    """Each such field's BM25F share, in the same order."""
    content_terms: int
    """How many index terms the content holds."""
    mentions_time: bool
    """Whether the title or content names a time (see ``temporal.mentions_time``)."""
    name_terms: tuple[str, ...]
    """The speaker's terms long enough to count as naming them (:data:`MIN_NAME_CHARS`)."""
    asks: bool = False
    """Whether the content asks a question (:func:`recalld._text.asks_question`)."""


# Memories whose terms are kept between queries (an entry took ~0.58 KB with the terms as
# hashes, measured by tracemalloc over 20,000 short memories, against ~0.67 KB with them
# as tuples of words; plus the text it is keyed by, which the row cache mostly shares).
ROW_TERMS_CACHE = 45_000
# Name tokens shorter than this never count as naming a speaker ("a", initials).
MIN_NAME_CHARS = 2
# Each RowTermsCache's own number (see RowTermsCache.of).
_GENERATIONS = itertools.count()


# What a memory's terms depend on: its title, content, tags, speaker, place name and key.
_TextKey = tuple[str | None, str, tuple[str, ...], str | None, str | None, str | None]


class RowTermsCache:
    """The :class:`RowTerms` of recently scored memories, keyed by their text.

    The key is the text itself (title, content, tags, speaker, place name, key), so an edited
    memory is prepared again and the cache can never answer for old text. It
    belongs to one store (its tokenizer), one set of BM25F parameters and one
    ``lexicon`` of time terms; the oldest entries go first when it is full.
    """

    def __init__(
        self,
        store: RetrievalStore,
        parameters: KeywordParameters,
        lexicon: frozenset[str],
        size: int,
    ) -> None:
        self.parameters = parameters
        self.lexicon = lexicon
        self._store = store
        self._size = size
        # Oldest first. An OrderedDict, not a dict: deleting a dict's first entry leaves a
        # hole that the next "first entry" lookup walks over, so evicting from a full dict
        # cost ~3.4 µs a memory against ~0.4.
        self._rows: OrderedDict[_TextKey, RowTerms] = OrderedDict()
        self._speakers: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()
        # What the rows that keep this cache's terms (CandidateRow.derived) know it by: a
        # number, not the cache, which the store's row cache would otherwise keep alive.
        self._generation = next(_GENERATIONS)

    def of(self, row: CandidateRow) -> RowTerms:
        """The terms of ``row``'s text (prepared on first sight).

        Kept on the row too (``row.derived``, with this cache's number): the row cache hands
        the same row out again until memories change, and the row's text never changes,
        so the next recall finds them there without building and hashing the text key."""
        derived = row.derived
        if derived is not None and derived[0] == self._generation:
            terms: RowTerms = derived[1]
            return terms
        key = (row.title, row.content, row.tags, row.speaker, row.place_name, row.key)
        found = self._rows.get(key)
        if found is None:
            found = self._prepare(row)
            with self._lock:
                while len(self._rows) >= self._size:
                    self._rows.popitem(last=False)
                self._rows[key] = found
        row.derived = (self._generation, found)
        return found

    def _speaker(self, speaker: str | None) -> tuple[str, ...]:
        """The index terms of a speaker's name (kept: a conversation has few speakers)."""
        if not speaker:
            return ()
        found = self._speakers.get(speaker)
        if found is None:
            found = tuple(map(sys.intern, document_terms(self._store, speaker)))
            with self._lock:
                if len(self._speakers) >= self._size:
                    self._speakers.clear()
                self._speakers[speaker] = found
        return found

    def _prepare(self, row: CandidateRow) -> RowTerms:
        store = self._store
        tags = " ".join(row.tags) if row.tags else ""
        # The tokenizer itself unless a field holds a paired script (one isascii() a field
        # for English text).
        texts = (row.title, row.content, tags, row.place_name, row.key)
        terms: Callable[[str], list[str]] = store.tokenize
        if any(text and has_gram_text(text) for text in texts):
            terms = partial(document_terms, store)
        title = terms(row.title) if row.title else []
        content = terms(row.content)
        speaker = self._speaker(row.speaker)
        values = (
            title,
            content,
            terms(tags) if tags else [],
            speaker,
            terms(row.place_name) if row.place_name else [],
            terms(row.key) if row.key else [],
        )
        parameters = self.parameters
        b = parameters.b
        lengths = []
        shares = []
        for name, tokens in zip(FIELDS, values, strict=True):
            if tokens:
                weight = parameters.weights.get(name, 1.0)
                length = len(tokens) / parameters.reference_lengths.get(name, 1.0)
                lengths.append(len(tokens))
                shares.append(weight / (1.0 - b + b * length))
        # term_hash of each term, without a Python call per term (~0.4 us a memory).
        hashes = np.fromiter(
            map(hash, map(str.encode, chain.from_iterable(values))),
            dtype=np.int64,
            count=sum(lengths),
        )
        lexicon = self.lexicon
        return RowTerms(
            hashes=hashes.tobytes(),
            lengths=tuple(lengths),
            shares=tuple(shares),
            content_terms=len(content),
            mentions_time=mentions_time(row.content, content, lexicon)
            or (row.title is not None and mentions_time(row.title, title, lexicon)),
            name_terms=tuple(term for term in speaker if len(term) >= MIN_NAME_CHARS),
            asks=asks_question(row.content),
        )


def term_hash(term: str) -> int:
    """The 64-bit hash a term is counted by: of its UTF-8 bytes, which no two terms share.

    Not ``hash(term)``: CPython hashes a string's stored bytes, one, two or four a
    character, so "空" (U+7A7A, stored as two bytes) hashes as "zz" and "の" as "n0",
    whatever ``PYTHONHASHSEED`` is, and a memory saying "ZZ Top" matched a query for 空
    (review 51j). Two byte strings share a hash by chance only (SipHash, about 2^-64 a
    pair). Per process: the hashes never leave it."""
    return hash(term.encode("utf-8"))


def score_row(query: QueryKeywords, row: RowTerms, parameters: KeywordParameters) -> KeywordScore:
    """BM25F of a memory with the terms ``row`` (see the module docstring)."""
    return score_rows(query, [row], parameters)[0]


def score_rows(
    query: QueryKeywords, rows: Sequence[RowTerms], parameters: KeywordParameters
) -> list[KeywordScore]:
    """BM25F of each memory of ``rows`` (see the module docstring), all at once.

    The floating-point operations of the formula in a fixed order (each field's share
    times the term's count, added field after field from 0; each term's saturated
    weight added term after term from 0; a missing field or term adds 0), so a memory
    scores the same bit for bit alone and in any batch.
    """
    count = len(rows)
    terms = query.terms
    if not terms or not count:
        return [ZERO] * count
    hashes = np.frombuffer(b"".join([row.hashes for row in rows]), dtype=np.int64)
    lengths = np.fromiter(chain.from_iterable([row.lengths for row in rows]), dtype=np.intp)
    shares = np.fromiter(chain.from_iterable([row.shares for row in rows]), dtype=np.float64)
    fields = np.fromiter([len(row.lengths) for row in rows], dtype=np.intp, count=count)
    value = np.zeros((count, len(terms)), dtype=np.float64)
    if len(hashes):
        # Each field's count of each term (found by a binary search among the query's few
        # hashes: memory and time in the number of terms the pool holds, whatever the
        # query's length), and its share times the count ...
        wanted = np.fromiter(map(term_hash, terms), dtype=np.int64, count=len(terms))
        order = np.argsort(wanted)
        ordered = wanted[order]
        nearest = np.minimum(np.searchsorted(ordered, hashes), len(terms) - 1)
        found = np.flatnonzero(ordered[nearest] == hashes)
        field = np.searchsorted(np.cumsum(lengths), found, side="right")
        counts = np.bincount(
            field * len(terms) + order[nearest[found]], minlength=len(lengths) * len(terms)
        ).reshape(len(lengths), len(terms))
        # ... laid out by memory and field (in FIELDS order), then added field after
        # field: explicit additions, so the order is the scalar one whatever numpy's
        # reductions do.
        first = np.zeros(count, dtype=np.intp)
        np.cumsum(fields[:-1], out=first[1:])
        owner = np.repeat(np.arange(count), fields)
        by_field = np.zeros((count, int(fields.max()), len(terms)), dtype=np.float64)
        by_field[owner, np.arange(len(lengths)) - first[owner]] = shares[:, None] * counts
        for place in range(by_field.shape[1]):
            value += by_field[:, place]
    k1 = parameters.k1
    raw = np.zeros(count, dtype=np.float64)
    added = np.zeros(count, dtype=np.float64)
    for column, idf in enumerate(query.idf):
        pseudo = value[:, column]
        if k1 > 0:
            raw += idf * pseudo / (k1 + pseudo)  # 0 for a term a memory lacks
            continue
        # Without saturation a term a memory lacks would be 0/0: it adds nothing.
        np.divide(idf * pseudo, k1 + pseudo, out=added, where=pseudo != 0)
        added[pseudo == 0] = 0.0
        raw += added
    matched = np.count_nonzero(value, axis=1)
    total = query.total_idf
    normalised = (raw / total).tolist() if total > 0 else [0.0] * count
    shares_matched = (matched / len(terms)).tolist()
    return list(map(KeywordScore, raw.tolist(), normalised, shares_matched))
