"""BM25F from prepared terms, and what a query's words are in the store
(:mod:`recalld.retrieval.keyword`)."""

from __future__ import annotations

import gc
import math
import random
import weakref
from pathlib import Path

from recalld._text import MAX_NAMED_WORDS, named_words, query_terms
from recalld.config import Settings
from recalld.retrieval.keyword import (
    FIELDS,
    KeywordParameters,
    QueryKeywords,
    RowTerms,
    RowTermsCache,
    prepare_query,
    score_row,
    score_rows,
)
from recalld.retrieval.temporal import time_terms
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.store.retrieval import CandidateRow
from tests.conftest import FakeClock
from tests.semantic_support import (
    assert_another_namespace_changes_nothing,
    assert_another_namespace_keeps_the_best_match,
)


def _row(seq: int, content: str, **fields: object) -> CandidateRow:
    values: dict[str, object] = {
        "seq": seq,
        "id": f"m{seq}",
        "namespace": "default",
        "title": None,
        "content": content,
        "tags": (),
        "speaker": None,
        "source": None,
        "at_utc": None,
        "index_state": "indexed",
    }
    values.update(fields)
    return CandidateRow(**values)  # type: ignore[arg-type]


def _bm25f(
    query: QueryKeywords, fields: dict[str, list[str]], parameters: KeywordParameters
) -> float:
    # The module docstring's formula, written out term by term.
    total = 0.0
    for term, idf in zip(query.terms, query.idf, strict=True):
        pseudo = 0.0
        for name, tokens in fields.items():
            if not tokens:
                continue
            length = len(tokens) / parameters.reference_lengths[name]
            norm = 1.0 - parameters.b + parameters.b * length
            pseudo += parameters.weights[name] * tokens.count(term) / norm
        if pseudo:
            total += idf * pseudo / (parameters.k1 + pseudo)
    return total


def test_prepared_terms_score_as_the_formula_and_follow_the_text(tmp_path: Path) -> None:
    store = open_store(Settings(db=tmp_path / "k.db", embedder="none"))
    try:
        parameters = KeywordParameters()
        cache = RowTermsCache(store.retrieval, parameters, frozenset(), size=2)
        query = QueryKeywords(
            terms=("garden", "rose", "grandma"),
            idf=(parameters.idf(3), parameters.idf(40), parameters.idf(0)),
            all_terms=frozenset({"garden", "rose", "grandma"}),
        )
        row = _row(
            1,
            "Roses, roses and a garden",
            title="Garden notes",
            tags=("garden", "flowers"),
            speaker="Grandma",
        )
        score = score_row(query, cache.of(row), parameters)
        fields = {
            "title": ["garden", "note"],
            "content": ["rose", "rose", "and", "a", "garden"],
            "tags": ["garden", "flower"],
            "speaker": ["grandma"],
        }
        assert math.isclose(score.raw, _bm25f(query, fields, parameters), rel_tol=1e-12)
        assert score.matched_share == 1.0
        assert math.isclose(score.normalised, score.raw / sum(query.idf), rel_tol=1e-12)
        # Same seq, new text: the cache answers for the text, not the seq.
        edited = _row(1, "A quiet afternoon")
        assert score_row(query, cache.of(edited), parameters).raw == 0.0
        # A full cache drops its oldest entry and still answers correctly.
        third = _row(3, "grandma")
        assert score_row(query, cache.of(third), parameters).matched_share == 1 / 3
        again = score_row(query, cache.of(row), parameters)
        assert again == score

        # An entry keeps one 8-byte hash per term, not the words.
        prepared: RowTerms = cache.of(row)
        assert len(prepared.hashes) == 8 * sum(prepared.lengths) == 8 * 10
        assert prepared.lengths == (2, 5, 2, 1)
    finally:
        store.close()


def test_terms_kept_on_a_row_are_those_of_the_cache_that_asks(tmp_path: Path) -> None:
    # A row keeps the terms its last cache prepared; another cache (other BM25F
    # parameters, e.g. a refitted reranker's) prepares its own instead of reusing them.
    store = open_store(Settings(db=tmp_path / "k.db", embedder="none"))
    try:
        row = _row(1, "a garden of roses", title="Garden")
        mild = RowTermsCache(store.retrieval, KeywordParameters(b=0.3), frozenset(), size=10)
        strong = RowTermsCache(store.retrieval, KeywordParameters(b=0.9), frozenset(), size=10)
        first = mild.of(row)
        assert mild.of(row) is first
        other = strong.of(row)
        assert other.hashes == first.hashes
        assert other.shares != first.shares
        assert mild.of(row) == first
        # A row read again (a new object, the same text) finds the cache's entry.
        assert mild.of(_row(1, "a garden of roses", title="Garden")) == first
    finally:
        store.close()


def test_a_term_never_matches_another_whose_characters_are_stored_alike(
    tmp_path: Path,
) -> None:
    # CPython hashes a string's stored bytes: "空" (U+7A7A) as "zz", "の" as "n0". Counted by
    # hash(), a memory saying "ZZ Top" scored for a query about 空 (review 51j).
    assert hash("空") == hash("zz")
    store = open_store(Settings(db=tmp_path / "k.db", embedder="none"))
    try:
        parameters = KeywordParameters()
        cache = RowTermsCache(store.retrieval, parameters, frozenset(), size=10)
        band = cache.of(_row(1, "ZZ Top played the blues in n0 time"))
        city = cache.of(_row(2, "東京 の 夜"))
        for terms, row in ((("空",), band), (("の",), band), (("n0", "zz"), city)):
            query = QueryKeywords(
                terms=terms, idf=tuple(parameters.idf(1) for _ in terms), all_terms=frozenset()
            )
            assert score_rows(query, [row], parameters)[0].raw == 0.0, terms
        both = QueryKeywords(
            terms=("zz", "の"), idf=(parameters.idf(1), parameters.idf(1)), all_terms=frozenset()
        )
        assert [score.matched_share for score in score_rows(both, [band, city], parameters)] == [
            0.5,
            0.5,
        ]
    finally:
        store.close()


def test_without_saturation_an_unmatched_term_adds_nothing(tmp_path: Path) -> None:
    # k1 = 0 (each matched term counts its whole IDF): an unmatched term's 0/0 made the
    # score NaN (review 51j).
    store = open_store(Settings(db=tmp_path / "k.db", embedder="none"))
    try:
        parameters = KeywordParameters(k1=0.0)
        cache = RowTermsCache(store.retrieval, parameters, frozenset(), size=10)
        query = QueryKeywords(
            terms=("garden", "rose"),
            idf=(parameters.idf(3), parameters.idf(40)),
            all_terms=frozenset({"garden", "rose"}),
        )
        [score] = score_rows(query, [cache.of(_row(1, "a garden"))], parameters)
        assert score.raw == parameters.idf(3)
        assert score.matched_share == 0.5
    finally:
        store.close()


def test_rows_do_not_keep_a_replaced_terms_cache_alive(tmp_path: Path) -> None:
    # A row keeps its terms with the number of the cache that made them, not the cache:
    # the store's row cache would otherwise keep every replaced cache (and its entries).
    store = open_store(Settings(db=tmp_path / "k.db", embedder="none"))
    try:
        row = _row(1, "a garden of roses")
        old = RowTermsCache(store.retrieval, KeywordParameters(), frozenset(), size=10)
        terms = old.of(row)
        gone = weakref.ref(old)
        del old
        gc.collect()
        assert gone() is None
        assert row.derived is not None
        assert row.derived[1] is terms
        new = RowTermsCache(store.retrieval, KeywordParameters(), frozenset(), size=10)
        assert new.of(row) == terms
    finally:
        store.close()


def _scalar_bm25f(
    query: QueryKeywords,
    fields: list[tuple[list[str], float]],
    parameters: KeywordParameters,
) -> tuple[float, float]:
    # One memory scored by itself, operation by operation as the formula reads: each
    # field's share times the term's count added field after field, each term's weight
    # added term after term (raw BM25F, share of terms matched).
    raw = 0.0
    matched = 0
    for term, idf in zip(query.terms, query.idf, strict=True):
        pseudo = 0.0
        for tokens, share in fields:
            count = tokens.count(term)
            if count:
                pseudo += share * count
        if pseudo:
            matched += 1
            raw += idf * pseudo / (parameters.k1 + pseudo)
    return raw, matched / len(query.terms)


def test_a_pool_scores_each_memory_bit_for_bit_as_it_scores_alone(tmp_path: Path) -> None:
    # A batch adds the same floating-point numbers in the same order as one memory
    # scored by itself: a term in all six fields, repeated, with shares of very
    # different sizes, is where another order of additions shows in the last bits.
    store = open_store(Settings(db=tmp_path / "k.db", embedder="none"))
    try:
        parameters = KeywordParameters()
        cache = RowTermsCache(store.retrieval, parameters, frozenset(), size=1_000)
        generator = random.Random(7)
        words = ["garden", "rose", "stone", "river", "lamp", "violin", "quiet", "maple"]

        def text(low: int, high: int) -> str:
            return " ".join(generator.choice(words) for _ in range(generator.randint(low, high)))

        rows = [
            _row(
                seq,
                text(1, 40),
                title=text(0, 6) or None,
                tags=tuple(text(1, 3).split()[: generator.randint(0, 3)]),
                speaker=text(0, 2) or None,
                place_name=text(0, 3) or None,
                key=text(0, 2) or None,
            )
            for seq in range(300)
        ]
        rows.append(_row(300, "!!!"))  # no term at all
        for round_ in range(20):
            terms = tuple(generator.sample(words, generator.randint(1, len(words))))
            query = QueryKeywords(
                terms=terms,
                idf=tuple(parameters.idf(generator.randint(0, 2_000)) for _ in terms),
                all_terms=frozenset(terms),
            )
            batch = generator.sample(rows, generator.randint(1, len(rows)))
            scored = score_rows(query, [cache.of(row) for row in batch], parameters)
            for row, score in zip(batch, scored, strict=True):
                values = {
                    "title": row.title,
                    "content": row.content,
                    "tags": " ".join(row.tags),
                    "speaker": row.speaker,
                    "place": row.place_name,
                    "key": row.key,
                }
                fields = []
                for name in FIELDS:
                    value = values[name]
                    tokens = store.retrieval.tokenize(value) if value else []
                    if tokens:
                        length = len(tokens) / parameters.reference_lengths[name]
                        norm = 1.0 - parameters.b + parameters.b * length
                        fields.append((tokens, parameters.weights[name] / norm))
                raw, share = _scalar_bm25f(query, fields, parameters)
                assert (score.raw, score.matched_share) == (raw, share), (round_, row.seq)
                assert score.normalised == raw / query.total_idf
                assert score == score_row(query, cache.of(row), parameters)
    finally:
        store.close()


def test_named_words_are_the_capitalised_words_inside_a_sentence() -> None:
    assert named_words("When did Caroline's sister move to Sweden?") == ["Caroline", "Sweden"]
    assert named_words("Is it Caroline\u2019s dog?") == ["Caroline"]
    # A sentence's first word is capitalised whatever it is; "I" names nobody.
    assert named_words("What did I eat? Where did Melanie go.") == ["Melanie"]
    assert named_words("Did Jean-Luc meet O'Brien and Jean-Luc?") == ["Jean-Luc", "O'Brien"]
    assert named_words("what did caroline say") == []
    # A stop word capitalised mid-sentence names nothing (a small store may hold no "what").
    assert named_words("ok so What does Grandma grow?") == ["Grandma"]
    assert named_words("") == []
    # Words capitalised for other reasons: contractions of "I", chat words, titles, short
    # months, and a text written in capitals (which tells nothing about names).
    assert named_words("Remind me what I'll need, is it OK in Sept or Jan?") == []
    assert named_words("Did Mr. Smith call Dr. Ruth?") == ["Smith", "Ruth"]
    assert named_words("WHERE DOES CAROLINE LIVE NOW?") == []
    assert named_words("Is the API key in Vault?") == ["API", "Vault"]
    # A query naming hundreds of things looks up only the first few.
    many = " ".join(f"Zed{index}x" for index in range(500))
    assert named_words(f"ask about {many}") == [f"Zed{index}x" for index in range(MAX_NAMED_WORDS)]


def test_prepare_query_knows_a_name_no_memory_of_the_namespace_holds(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = Settings(db=tmp_path / "names.db", embedder="none", graph_extractor="none")
    with MemoryService.open(settings, clock=clock) as service:
        service.remember("Caroline adopted a dog called Rex", namespace="home")
        service.remember("Gregor plays chess on Sundays", namespace="club")
        store = service.store.retrieval
        lexicon = time_terms(store.tokenize)

        def unseen(text: str, namespace: str = "home") -> bool:
            words = query_terms(text, 64)
            return prepare_query(
                store, (namespace,), text, words, KeywordParameters(), lexicon
            ).unseen_name

        assert not unseen("What dog did Caroline adopt?")
        # Gregor is only known to another namespace: not to this one.
        assert unseen("What dog did Gregor adopt?")
        assert not unseen("What dog did Gregor adopt?", "club")
        assert unseen("Did Caroline's dog meet Priya?")
        # Lower case, a sentence's first word, time words and "I" name nothing.
        assert not unseen("what dog did gregor adopt?")
        assert not unseen("Gregor? What dog did Caroline adopt?")
        assert not unseen("What did Caroline do last November, or in May?")
        assert not unseen("Which dog did I adopt?")
        # Thousands of names are no SQL error (SQLite allows 2,000 columns): the names looked up
        # are capped, as the query's words are. (Three letters each: the query stays under
        # its limit of 10,000 characters.)
        letters = "abcdefghijklmnopqrstuvwxyz"
        names = " ".join(f"Q{first}{second}" for first in letters for second in letters)
        names += " " + " ".join(f"Z{first}{second}" for first in letters for second in letters)
        names += " " + " ".join(f"X{first}{second}" for first in letters for second in letters)
        assert len(names.split()) > 2_000
        assert unseen(f"What dog did Caroline adopt? {names}")
        assert service.search(f"what dog {names}", min_score=0) == []


def test_what_a_contraction_leaves_is_no_query_term() -> None:
    # "s" of "what's" matched whatever held an apostrophe in a chat typed without them.
    text = "What's Jess's dog called? I'd say it's Biscuit, they've said so"
    assert query_terms(text, 64) == ["jess", "dog", "called", "say", "biscuit", "said"]
    # A letter of its own is a word: vitamin D, T cells, size M.
    assert query_terms("vitamin d and t cells, size m", 64) == [
        "vitamin",
        "d",
        "t",
        "cells",
        "size",
        "m",
    ]


def test_another_namespaces_common_word_changes_nothing_here(tmp_path: Path) -> None:
    settings = Settings(db=tmp_path / "walls.db", embedder="hashing", graph_extractor="none")
    with MemoryService(open_store(settings), settings) as service:
        assert_another_namespace_changes_nothing(service)


def test_another_namespaces_common_word_keeps_this_ones_best_match(tmp_path: Path) -> None:
    settings = Settings(db=tmp_path / "walls.db", embedder="none", graph_extractor="none")
    with MemoryService(open_store(settings), settings) as service:
        assert_another_namespace_keeps_the_best_match(service, mentions=300)


def test_the_memory_holding_every_rare_word_stays_when_only_the_rarest_ranks(
    tmp_path: Path,
) -> None:
    # Words rare in "a" but common in the file: only the rarest ranked its matches, so
    # the one memory holding both words was lost once "b" made both common in the file.
    settings = Settings(db=tmp_path / "walls.db", embedder="none", graph_extractor="none")
    with MemoryService(open_store(settings), settings) as service:
        both = service.remember(
            "The budget meeting for the new office moved to Thursday", namespace="a"
        )
        for word, verb in (("budget", "approved"), ("meeting", "held")):
            service.remember_many(
                [{"content": f"{word} {index} {verb}"} for index in range(450)], namespace="a"
            )
        service.remember_many(
            [{"content": f"budget meeting filler {index}"} for index in range(1_000)],
            namespace="b",
        )
        hits = service.search("budget meeting", namespace="a", mode="keyword", limit=3)
        assert [hit.memory.id for hit in hits][:1] == [both.id]


def test_another_namespaces_newest_memories_leave_this_ones_common_words_alone(
    tmp_path: Path,
) -> None:
    # Words common in "a" pick the memories holding all of them, less those most of the
    # newest memories hold (stop words by then). That share was sampled over the file's
    # newest memories, so "b" writing "meeting" 1,000 times dropped it from "a"'s "all":
    # "a"'s budget meetings gave way to its budget reviews.
    settings = Settings(db=tmp_path / "walls.db", embedder="none", graph_extractor="none")
    with MemoryService(open_store(settings), settings) as service:
        for content in ("budget meeting {}", "budget review {}", "filler {}"):
            service.remember_many(
                [{"content": content.format(index)} for index in range(1_000)], namespace="a"
            )
        service.remember("meeting log", namespace="b")

        def answers() -> list[tuple[str, float]]:
            hits = service.search(
                "budget meeting", namespace="a", mode="keyword", min_score=0, limit=10
            )
            return [(hit.memory.id, hit.score) for hit in hits]

        before = answers()
        assert service.get(before[0][0], namespace="a").content.startswith("budget meeting")
        service.remember_many(
            [{"content": f"meeting log {index}"} for index in range(1_000)], namespace="b"
        )
        assert answers() == before
