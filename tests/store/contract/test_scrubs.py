"""Pending scrubs (issue 10) on every store: recorded with the drop, finished by ``scrub``.

SQLite finishes a scrub with a checkpoint that truncates the write-ahead log;
PostgreSQL with a ``VACUUM`` of the content tables. On both, a reader holding
a snapshot older than the drop keeps the scrub pending (never reported done),
the record outlives the process that made it, and it is cleared once the
scrub could run.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

from recalld.store.base import Scope, Store
from tests.scrub_support import old_snapshot
from tests.store.contract.conftest import NOW, OpenStore, record


def _forget(store: Store, memory_id: str) -> None:
    with store.transaction() as tx:
        found = tx.find("default", id=memory_id)
        assert found is not None
        tx.delete(found.seq)
        tx.dropped_content("forget", NOW)


def test_scrub_records_and_finishes_a_drop(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="secret", content="the vault code is 7731"))
    assert store.pending_scrubs() == 0
    _forget(store, "secret")
    assert store.pending_scrubs() == 1
    assert store.scrub(5.0) is True
    assert store.pending_scrubs() == 0
    assert store.scrub(0.1) is True  # nothing pending: done at once


def test_scrub_waits_for_an_older_snapshot(store: Store, database: str | Path) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="secret", content="the vault code is 7731"))
    with old_snapshot(database):
        _forget(store, "secret")
        assert store.scrub(0.2) is False
        assert store.pending_scrubs() == 1
    assert store.scrub(5.0) is True
    assert store.pending_scrubs() == 0


def test_scrub_waits_for_a_snapshot_that_ends_within_the_wait(
    store: Store, database: str | Path
) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="secret", content="the vault code is 7731"))
    holding = threading.Event()
    release = threading.Event()
    released = threading.Event()

    def reader() -> None:
        with old_snapshot(database):
            holding.set()
            release.wait(timeout=30)
            released.set()

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        assert holding.wait(timeout=30)
        _forget(store, "secret")
        # The reader lets go a moment after the scrub began; the scrub, allowed to wait
        # 20 s, must be waiting for it rather than answer "pending" at once.
        timer = threading.Timer(0.5, release.set)
        timer.start()
        assert not released.is_set()
        assert store.scrub(20.0) is True
        assert released.is_set()
        assert store.pending_scrubs() == 0
    finally:
        release.set()
        thread.join()


def test_scrub_record_outlives_the_store_that_made_it(open_another: OpenStore) -> None:
    first = open_another()
    with first.transaction() as tx:
        tx.insert(record(id="secret", content="the vault code is 7731"))
    _forget(first, "secret")
    first.close()
    second = open_another()
    assert second.pending_scrubs() == 1
    assert second.scrub(5.0) is True
    assert second.pending_scrubs() == 0


def test_purge_and_core_removals_record_scrubs(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="t", content="short-lived", expires_at=NOW - timedelta(seconds=1)))
    assert store.purge_expired(NOW) == 1
    assert store.pending_scrubs() == 1
    store.core.edit("default", "persona", lambda entries: entries.append("likes tea"), NOW)
    assert store.pending_scrubs() == 1  # adding drops nothing
    store.core.edit("default", "persona", lambda entries: entries.clear(), NOW)
    assert store.pending_scrubs() == 2
    assert store.scrub(5.0) is True
    assert store.pending_scrubs() == 0


def test_ids_are_unique_per_namespace(store: Store) -> None:
    with store.transaction() as tx:
        ours = tx.insert(record(id="same", content="ours"))
        theirs = tx.insert(record(id="same", content="theirs", namespace="other"))
    assert ours.seq != theirs.seq
    scope = Scope(namespaces=("other",), now=NOW)
    found = store.get(scope, id="same")
    assert found is not None
    assert found.content == "theirs"
