"""Keyword search splits words at punctuation on both stores (pass b58).

FTS5's ``unicode61`` tokenizer splits at every character that is neither a letter nor a
digit; PostgreSQL's parser kept host names, e-mail addresses, URLs, paths, versions and
decimal numbers as one token each, so their parts were found on SQLite only.
"""

from __future__ import annotations

import pytest

from recalld.store.base import Store
from tests.store.contract.conftest import record
from tests.store.contract.test_search import search

TEXTS = {
    "host": "visit example.com today",
    "mail": "mail anna@example.org now",
    "url": "see https://docs.python.org/3/library today",
    "path": "file /usr/local/bin/tool here",
    "version": "version v1.2.3 released",
    "decimal": "pi is 3.14 exactly",
    "clock": "meet at 10:30 sharp",
    "phone": "call 555-1234 please",
    "date": "2026-10-25 date",
}


@pytest.fixture
def punctuated(store: Store) -> Store:
    with store.transaction() as tx:
        for id, content in TEXTS.items():
            tx.insert(record(id=id, content=content))
        tx.insert(record(id="tagged", content="a tagged memory", tags=("team.alpha",)))
        tx.insert(record(id="titled", content="a titled memory", title="notes/weekly"))
    return store


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("example", {"host", "mail"}),
        ("python", {"url"}),
        ("library", {"url"}),
        ("bin", {"path"}),
        ("v1", {"version"}),
        ("14", {"decimal"}),
        ("30", {"clock"}),
        ("1234", {"phone"}),
        ("25", {"date"}),
        ("alpha", {"tagged"}),
        ("weekly", {"titled"}),
    ],
)
def test_search_finds_words_inside_punctuated_tokens(
    punctuated: Store, word: str, expected: set[str]
) -> None:
    assert {match.memory.id for match in search(punctuated, word)} == expected
