"""The entity listing's ``query`` and ``type`` fold case alike on both stores (pass b58).

SQLite's LIKE and NOCASE fold ASCII only and PostgreSQL's ILIKE and lower() fold what the
database's locale folds, so "istanbul" found "İstanbul" and type "persön" found "PERSÖN"
on PostgreSQL only. Both now read the patterns of recalld.graph.matching, as
``search_entities`` does: Python's lower case, the same on every store.
"""

from __future__ import annotations

from recalld.store.base import Store
from tests.store.contract.conftest import NOW


def _declare(store: Store, *entities: tuple[str, str]) -> None:
    with store.transaction() as tx:
        for name, type in entities:
            tx.graph.declare_entity("default", name, type, NOW)


def _names(store: Store, *, query: str | None = None, type: str | None = None) -> list[str]:
    listed = store.graph.list_entities("default", NOW, query=query, type=type, limit=50, after=None)
    return sorted(entity.name for entity in listed)


def test_graph_listing_query_folds_case_as_python_does(store: Store) -> None:
    _declare(
        store,
        ("İstanbul", "place"),
        ("istanbul", "place"),
        ("ZOË", "person"),
        ("Émile", "person"),
        ("a_b", "thing"),
        ("axb", "thing"),
        ("100%", "thing"),
    )
    assert _names(store, query="istanbul") == ["istanbul"]
    assert _names(store, query="zoë") == ["ZOË"]
    assert _names(store, query="ÉMI") == ["Émile"]
    assert _names(store, query="PERSON") == ["ZOË", "Émile"]
    # LIKE's wildcards are plain characters.
    assert _names(store, query="_") == ["a_b"]
    assert _names(store, query="%") == ["100%"]


def test_graph_listing_type_is_the_whole_type_in_any_case(store: Store) -> None:
    _declare(
        store,
        ("A", "Persön"),
        ("B", "PERSÖN"),
        ("C", "person"),
        ("D", "persons"),
        ("E", "per_on"),
    )
    assert _names(store, type="persön") == ["A", "B"]
    assert _names(store, type="PERSON") == ["C"]
    assert _names(store, type="per_on") == ["E"]
    assert _names(store, type="ön") == []


def test_graph_listing_checks_wide_patterns_by_python_lower_case(store: Store) -> None:
    # Review of pass b58: a dotted capital I's pattern (and a sigma's) is wider than the
    # question, and the listing took every candidate: "İ" listed every name with an "i",
    # type "İl" also the type "il", on both stores. Candidates are now checked, as
    # search_entities checks them.
    _declare(
        store,
        ("İzmir", "İl"),
        ("Bonn", "il"),
        ("Kiel", "place"),
        ("Iİ", "place"),
    )
    assert _names(store, query="İ") == ["Iİ", "İzmir"]
    assert _names(store, type="İl") == ["İzmir"]
    assert _names(store, type="i\u0307l") == ["İzmir"]
    assert _names(store, type="il") == ["Bonn"]


def test_graph_listing_pages_through_wide_patterns(store: Store) -> None:
    # More candidates than one chunk, few of them answers: the page is still full.
    _declare(store, *((f"İ{index:03d}", "thing") for index in range(3)))
    _declare(store, *((f"i{index:03d}", "thing") for index in range(150)))
    listed = store.graph.list_entities("default", NOW, query="İ", type=None, limit=2, after=None)
    assert [entity.name for entity in listed] == ["İ000", "İ001"]
