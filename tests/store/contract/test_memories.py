"""Memories: writes in a transaction, reads by id/key/seq, scopes, listings, counts, TTL."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from recalld.errors import ConflictError
from recalld.model import Place
from recalld.store.base import Scope, Store
from tests.store.contract.conftest import NOW, OpenStore, record


def scope(*namespaces: str, **filters: object) -> Scope:
    return Scope(namespaces=namespaces or ("default",), now=NOW, **filters)  # type: ignore[arg-type]


def test_store_insert_keeps_every_field(store: Store) -> None:
    at = datetime(2026, 10, 25, 8, 10, 30, 123456, tzinfo=timezone(timedelta(hours=-7)))
    written = record(
        id="full",
        key="k1",
        title="kitchen entrance",
        content="Through the second door on the left",
        kind="experience",
        category="spatial",
        tags=("indoor", "café"),
        salience=0.75,
        source="file:///notes.md",
        at=at,
        expires_at=NOW + timedelta(days=1),
        place=Place(lat=37.78, lon=-122.41, geohash="9q8yyk8ytp", name="home"),
        meta={"speaker": "Ana", "nested": {"n": 1}},
        access_count=3,
        last_accessed_at=NOW - timedelta(hours=1),
    )
    with store.transaction() as tx:
        inserted = tx.insert(written)
    memory = store.get(scope(), id="full")
    assert memory is not None
    assert memory == inserted
    assert memory.seq > 0
    assert memory.at == at
    assert memory.at is not None
    assert memory.at.utcoffset() == timedelta(hours=-7)
    assert memory.at.hour == 8  # the local time of day survives
    assert memory.tags == ["indoor", "café"]
    assert memory.place == Place(lat=37.78, lon=-122.41, geohash="9q8yyk8ytp", name="home")
    assert memory.meta == {"speaker": "Ana", "nested": {"n": 1}}
    assert (memory.salience, memory.category, memory.kind) == (0.75, "spatial", "experience")
    assert memory.access_count == 3
    assert memory.created_at == NOW
    assert memory.created_at.tzinfo is not None


def test_store_get_by_id_key_and_seq(store: Store) -> None:
    with store.transaction() as tx:
        memory = tx.insert(record(id="a", key="the-key", content="alpha"))
    assert store.get(scope(), id="a") == memory
    assert store.get(scope(), key="the-key") == memory
    assert store.get(scope(), seq=memory.seq) == memory
    assert store.get(scope("other"), id="a") is None


def test_store_transaction_finds_and_replaces(store: Store) -> None:
    with store.transaction() as tx:
        first = tx.insert(record(id="r", key="k", content="old", tags=("a",)))
    with store.transaction() as tx:
        found = tx.find("default", key="k")
        assert found == first
        assert tx.find("default", id="r") == first
        assert tx.find("other", id="r") is None
        replaced = tx.replace(first.seq, record(id="r", key="k", content="new", tags=("b",)))
    assert replaced.seq == first.seq
    assert store.get(scope(), id="r") == replaced
    assert replaced.content == "new"
    assert replaced.tags == ["b"]
    assert [
        m.id for m in store.list_page(scope(tags_any=("a",)), order="created", limit=5, after=None)
    ] == []


def test_store_insert_duplicate_id_conflicts_and_keeps_the_transaction(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="dup", content="one"))
    with store.transaction() as tx:
        with pytest.raises(ConflictError):
            tx.insert(record(id="dup", content="two"))
        tx.insert(record(id="after", content="still written"))
    assert store.get(scope(), id="after") is not None
    dup = store.get(scope(), id="dup")
    assert dup is not None
    assert dup.content == "one"


def test_store_transaction_rolls_back_on_error(store: Store) -> None:
    def write_then_fail() -> None:
        with store.transaction() as tx:
            tx.insert(record(id="gone", content="never committed"))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_then_fail()
    assert store.get(scope(), id="gone") is None


def test_store_delete_removes_row_and_tags(store: Store) -> None:
    with store.transaction() as tx:
        memory = tx.insert(record(id="d", content="to delete", tags=("t",)))
    with store.transaction() as tx:
        tx.delete(memory.seq)
    assert store.get(scope(), id="d") is None
    assert store.list_page(scope(tags_any=("t",)), order="created", limit=5, after=None) == []


def test_store_touch_counts_accesses(store: Store) -> None:
    with store.transaction() as tx:
        memory = tx.insert(record(id="t", content="touched"))
    later = NOW + timedelta(minutes=5)
    with store.transaction() as tx:
        tx.touch([memory.seq, memory.seq], later)
    touched = store.get(scope(), id="t")
    assert touched is not None
    assert touched.access_count >= 1
    assert touched.last_accessed_at == later


def test_store_count_accesses_counts_each_memory_in_a_transaction_of_its_own(
    store: Store,
) -> None:
    with store.transaction() as tx:
        first = tx.insert(record(id="a1", content="recalled twice"))
        second = tx.insert(record(id="a2", content="recalled once"))
    later = NOW + timedelta(minutes=7)
    store.count_accesses([first.seq, second.seq], later)
    store.count_accesses([first.seq], later + timedelta(minutes=1))
    counted = {m.id: m for m in (store.get(scope(), id="a1"), store.get(scope(), id="a2")) if m}
    assert (counted["a1"].access_count, counted["a2"].access_count) == (2, 1)
    assert counted["a1"].last_accessed_at == later + timedelta(minutes=1)
    assert counted["a2"].last_accessed_at == later
    # What follows is committed as before: the counts did not hold a transaction open.
    with store.transaction() as tx:
        tx.insert(record(id="a3", content="written after"))
    assert store.get(scope(), id="a3") is not None


def test_store_scope_filters(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(
            record(
                id="1",
                content="one",
                kind="kv",
                category="fact",
                tags=("a", "b"),
                at=NOW - timedelta(days=2),
            )
        )
        tx.insert(
            record(
                id="2",
                content="two",
                kind="note",
                tags=("a",),
                at=NOW,
                created_at=NOW + timedelta(hours=1),
            )
        )
        tx.insert(record(id="3", content="three", namespace="other", tags=("a",)))
        tx.insert(record(id="4", content="expired", expires_at=NOW - timedelta(seconds=1)))

    def ids(**filters: object) -> list[str]:
        page = store.list_page(scope(**filters), order="created", limit=50, after=None)
        return sorted(memory.id for memory in page)

    assert ids() == ["1", "2"]
    assert ids(kind="kv") == ["1"]
    assert ids(category="fact") == ["1"]
    assert ids(tags_any=("b", "zzz")) == ["1"]
    assert ids(tags_all=("a", "b")) == ["1"]
    assert ids(since=NOW - timedelta(days=1)) == ["2"]
    assert ids(until=NOW - timedelta(days=1)) == ["1"]
    assert ids(created_since=NOW + timedelta(minutes=30)) == ["2"]
    assert ids(created_until=NOW + timedelta(minutes=30)) == ["1"]
    assert ids(include_expired=True) == ["1", "2", "4"]
    both = store.list_page(scope("default", "other"), order="created", limit=50, after=None)
    assert sorted(memory.id for memory in both) == ["1", "2", "3"]
    assert (
        store.list_page(Scope(namespaces=(), now=NOW), order="created", limit=5, after=None) == []
    )


def test_store_list_page_keyset_cursor(store: Store) -> None:
    with store.transaction() as tx:
        for index in range(7):
            tx.insert(
                record(
                    id=f"p{index}",
                    content=f"page {index}",
                    created_at=NOW + timedelta(seconds=index // 2),
                    updated_at=NOW + timedelta(seconds=10 - index),
                )
            )
    seen: list[str] = []
    after: tuple[datetime, int] | None = None
    while True:
        page = store.list_page(scope(), order="created", limit=3, after=after)
        if not page:
            break
        seen += [memory.id for memory in page]
        after = (page[-1].created_at, page[-1].seq)
    assert seen == [f"p{index}" for index in reversed(range(7))]
    by_update = store.list_page(scope(), order="updated", limit=7, after=None)
    assert [memory.id for memory in by_update] == [f"p{index}" for index in range(7)]


def test_store_counts_iterate_namespaces(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="c1", content="x", category="fact", kind="kv"))
        tx.insert(record(id="c2", content="y", kind="kv"))
        tx.insert(record(id="c3", content="z", namespace="other"))
        tx.insert(record(id="c4", content="old", expires_at=NOW - timedelta(minutes=1)))
    counts = store.counts(scope("default", "other"))
    assert counts.count == 3
    assert counts.by_kind == {"kv": 2, "note": 1}
    assert counts.by_category == {"fact": 1, "uncategorized": 2}
    assert counts.by_namespace == {"default": 2, "other": 1}
    assert counts.expired == 1
    assert [memory.id for memory in store.iterate(scope())] == ["c1", "c2"]
    assert store.namespaces() == ["default", "other"]


def test_store_counts_add_up_and_come_in_one_order(store: Store) -> None:
    # Pass b58: a category written "uncategorized" and memories with none were one key
    # whose later row replaced the earlier (stats lost memories), and the keys came in
    # each database's order (PostgreSQL: NULL last, by its collation).
    with store.transaction() as tx:
        tx.insert(record(id="u1", content="a", category="uncategorized"))
        tx.insert(record(id="u2", content="b"))
        tx.insert(record(id="u3", content="c", category="Zeta"))
        tx.insert(record(id="u4", content="d", category="alpha"))
        tx.insert(record(id="u5", content="e", category="\u00c4rger"))
    counts = store.counts(scope())
    assert counts.count == 5
    assert list(counts.by_category.items()) == [
        ("uncategorized", 2),
        ("Zeta", 1),
        ("alpha", 1),
        ("\u00c4rger", 1),
    ]


def test_store_purge_expired_deletes_only_expired(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="keep", content="stays", expires_at=NOW + timedelta(hours=1)))
        tx.insert(record(id="go", content="goes", expires_at=NOW - timedelta(hours=1)))
    assert store.purge_expired(NOW) == 1
    assert store.get(scope(include_expired=True), id="go") is None
    assert store.get(scope(), id="keep") is not None
    assert store.purge_expired(NOW) == 0


def test_store_reports_itself(store: Store, store_kind: str) -> None:
    assert store.schema_version >= 8
    assert store.keyword_backend == ("postgres-fts" if store_kind == "postgres" else "fts5")
    assert store.size_bytes() > 0
    assert "password" not in store.location()
    store.compact_after_forget()
    if store_kind == "postgres":
        assert store.index_location is None
        assert store.vector_search is not None
        assert store.change_feed is not None
    else:
        assert store.index_location is not None
        assert store.vector_search is None


def test_store_writes_are_seen_by_another_store(open_another: OpenStore) -> None:
    first, second = open_another(), open_another()
    with first.transaction() as tx:
        tx.insert(record(id="shared", content="written by one, read by the other"))
    seen = second.get(scope(), id="shared")
    assert seen is not None
    assert seen.content.startswith("written by one")


def test_store_at_in_utc_and_far_offsets_round_trip(store: Store) -> None:
    moments = [
        datetime(2026, 1, 1, 0, 0, tzinfo=UTC),
        datetime(2026, 6, 30, 23, 59, 59, tzinfo=timezone(timedelta(hours=14))),
        datetime(2026, 6, 30, 23, 59, 59, tzinfo=timezone(timedelta(hours=-9, minutes=-30))),
    ]
    with store.transaction() as tx:
        for index, moment in enumerate(moments):
            tx.insert(record(id=f"at{index}", content="time", at=moment))
    for index, moment in enumerate(moments):
        memory = store.get(scope(), id=f"at{index}")
        assert memory is not None
        assert memory.at is not None
        assert memory.at.isoformat() == moment.isoformat()


def test_store_namespaces_name_those_holding_only_core_memory_or_entities(store: Store) -> None:
    # export --all-namespaces backs up store.namespaces(): one holding only core memory or
    # a declared entity is a namespace too (one whose core memory was emptied is not).
    with store.transaction() as tx:
        tx.insert(record(id="n1", content="x", namespace="notes"))
        tx.graph.declare_entity("people", "Alice", "person", NOW)
    store.core.edit("core", "user", lambda entries: entries.append("prefers tea"), NOW)
    store.core.edit("emptied", "user", lambda entries: entries.append("gone"), NOW)
    store.core.edit("emptied", "user", lambda entries: entries.clear(), NOW)
    store.core.edit("notes", "memory", lambda entries: entries.append("also notes"), NOW)
    assert store.namespaces() == ["core", "notes", "people"]


def test_store_meta_numbers_keep_their_type_and_value(store: Store) -> None:
    # jsonb keeps a number as numeric, whose text has no decimal point when the number has
    # no fractional digits: 1e20 came back from PostgreSQL as the integer 10**20, and 1e308
    # as a 309-digit integer. SQLite keeps JSON text.
    numbers = {
        "big": 1e20,
        "huge": 1.7976931348623157e308,
        "odd": 1.2345678901234567e19,
        "edge": 1e16,
        "tiny": 5e-324,
        "small": 1e-7,
        "whole": 1.0,
        "tenth": 0.1,
        "integer": 2**62,
        "count": 12,
        "nested": [{"x": 3e30}, 4e17, True, None],
    }
    with store.transaction() as tx:
        tx.insert(record(id="numbers", content="numbers", meta=numbers))
    memory = store.get(scope(), id="numbers")
    assert memory is not None
    assert memory.meta == numbers
    # Floats stay floats and ints ints (== holds between 1e20 and 10**20).
    assert json.dumps(memory.meta, sort_keys=True) == json.dumps(numbers, sort_keys=True)
