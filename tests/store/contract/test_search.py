"""Keyword search: full text ranked into [0, 1], the substring fallback, scope walls, safety."""

from __future__ import annotations

from datetime import timedelta

import pytest

from recalld._text import query_terms
from recalld.store.base import FULL_TEXT_BACKENDS, Scope, Store
from tests.store.contract.conftest import NOW, record


def search(store: Store, text: str, *namespaces: str, limit: int = 10, **filters: object) -> list:  # type: ignore[type-arg]
    scope = Scope(namespaces=namespaces or ("default",), now=NOW, **filters)  # type: ignore[arg-type]
    return store.search(scope, text, query_terms(text, 64), limit)


@pytest.fixture
def corpus(store: Store) -> Store:
    with store.transaction() as tx:
        tx.insert(
            record(
                id="s1", title="Staging region", content="The staging database runs in Melbourne"
            )
        )
        tx.insert(
            record(
                id="s2", content="Production runs in Sydney; staging is smaller", tags=("infra",)
            )
        )
        tx.insert(record(id="s3", content="Lunch with Léa at the café near the station"))
        tx.insert(record(id="s4", content="staging secret in another namespace", namespace="other"))
        tx.insert(
            record(
                id="s5", content="staging notes that expired", expires_at=NOW - timedelta(seconds=1)
            )
        )
        tx.insert(record(id="s6", content="Meetings about deployments", tags=("meeting",)))
    return store


def test_search_ranks_full_text_matches_in_unit_interval(corpus: Store) -> None:
    matches = search(corpus, "where does staging run?")
    assert [match.memory.id for match in matches][:2] == ["s1", "s2"]
    assert {match.backend for match in matches} <= FULL_TEXT_BACKENDS
    assert all(0.0 <= match.keyword <= 1.0 for match in matches)
    assert matches[0].keyword >= matches[-1].keyword
    assert matches[0].keyword > 0.5


def test_search_stems_words(corpus: Store) -> None:
    assert [match.memory.id for match in search(corpus, "meeting deployment")] == ["s6"]


def test_search_respects_namespaces_expiry_and_filters(corpus: Store) -> None:
    assert "s4" not in [match.memory.id for match in search(corpus, "staging")]
    assert "s5" not in [match.memory.id for match in search(corpus, "staging")]
    assert [match.memory.id for match in search(corpus, "staging", "other")] == ["s4"]
    assert [match.memory.id for match in search(corpus, "staging", tags_any=("infra",))] == ["s2"]
    assert len(search(corpus, "staging", limit=1)) == 1


@pytest.mark.parametrize(
    "text",
    [
        "'; DROP TABLE memories; --",
        'staging" OR "x',
        "staging & !prod | (a <-> b)",
        "NEAR(a b)",
        "%_\\",
    ],
)
def test_search_any_string_is_safe(corpus: Store, text: str) -> None:
    for match in search(corpus, text):
        assert 0.0 <= match.keyword <= 1.0
    assert len(search(corpus, "staging")) == 2


def test_search_without_word_terms_is_a_substring_match(corpus: Store) -> None:
    with corpus.transaction() as tx:
        tx.insert(record(id="emoji", content="launch day 🚀 went well"))
    matches = search(corpus, "🚀")
    assert [match.memory.id for match in matches] == ["emoji"]
    assert matches[0].backend == "like"
    assert matches[0].keyword == 1.0


def test_search_of_only_common_words_still_answers(corpus: Store) -> None:
    # Every term is a stop word: full text has no lexeme, the store falls back to substrings.
    matches = search(corpus, "the")
    assert matches
    assert all(
        "the" in (match.memory.title or "").lower() + match.memory.content.lower()
        for match in matches
    )


def test_search_finds_accented_words(corpus: Store) -> None:
    assert [match.memory.id for match in search(corpus, "Léa café")] == ["s3"]
