"""``Store.counts`` in one pass: what it counts, and that expired rows count only as such.

``/v1/stats`` (read by the browser on every search page) ran three ``GROUP BY`` queries
and an expired count over the memories, 1.7-2.2 s at 50,000; now one query groups by
namespace, category and kind together. These pin what that pass must still count."""

from __future__ import annotations

from datetime import timedelta

from recalld.store.base import Scope, Store
from tests.store.contract.conftest import NOW, record


def test_store_counts_a_namespace_holding_only_expired_memories_as_expired(
    store: Store,
) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="live", content="live", category="fact", kind="note"))
        tx.insert(
            record(
                id="gone",
                content="gone",
                namespace="faded",
                category="old",
                kind="gone",
                expires_at=NOW - timedelta(minutes=1),
            )
        )
        tx.insert(record(id="later", content="later", expires_at=NOW + timedelta(hours=1)))
    counts = store.counts(Scope(namespaces=["default", "faded"], now=NOW))
    assert counts.count == 2
    assert counts.by_namespace == {"default": 2}
    assert counts.by_category == {"uncategorized": 1, "fact": 1}
    assert counts.by_kind == {"note": 2}
    assert "old" not in counts.by_category
    assert counts.expired == 1


def test_store_counts_with_expired_included_counts_them_too(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="live", content="live"))
        tx.insert(record(id="gone", content="gone", expires_at=NOW - timedelta(minutes=1)))
    counts = store.counts(Scope(namespaces=["default"], now=NOW, include_expired=True))
    assert (counts.count, counts.by_namespace, counts.expired) == (2, {"default": 2}, 1)


def test_store_counts_keep_the_scope_filters(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="a", content="a", category="fact"))
        tx.insert(record(id="b", content="b", category="event"))
    counts = store.counts(Scope(namespaces=["default"], now=NOW, category="fact"))
    assert (counts.count, counts.by_category) == (1, {"fact": 1})
