"""Recall's candidate rows kept between recalls: what the cache must never serve."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import cast

import apsw
import pytest

from recalld.store.base import Scope
from recalld.store.retrieval import CandidateRow
from recalld.store.sqlite import SQLiteStore
from recalld.store.sqlite_row_cache import CachedRow, RowCache
from tests.store.test_sqlite_retrieval import START, _record, _scope


def _contents(store: SQLiteStore, seqs: list[int], **scope: object) -> dict[int, str]:
    found = store.retrieval.rows(_scope(**scope), seqs)  # type: ignore[arg-type]
    return {seq: row.content for seq, row in found.items()}


def _one(store: SQLiteStore, content: str, **fields: object) -> int:
    with store.transaction() as tx:
        return tx.insert(_record(content[:8], content, **fields)).seq  # type: ignore[arg-type]


def test_row_cache_sees_another_process_write(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store, other = SQLiteStore(path), SQLiteStore(path)
    seq = _one(store, "the violin lesson is on Tuesday")
    assert _contents(store, [seq]) == {seq: "the violin lesson is on Tuesday"}
    assert _contents(store, [seq]) == {seq: "the violin lesson is on Tuesday"}  # now cached
    # A commit by another connection (here another store on the file, as another process).
    with other.transaction() as tx:
        tx.replace(seq, _record("the viol", "the violin lesson moved to Friday"))
    assert _contents(store, [seq]) == {seq: "the violin lesson moved to Friday"}
    with other.transaction() as tx:
        tx.delete(seq)
    assert _contents(store, [seq]) == {}
    store.close()
    other.close()


def test_row_cache_applies_expiry_and_the_namespace_wall(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.db")
    fading = _one(store, "the parking code is 4411", expires_at=START + timedelta(hours=1))
    private = _one(store, "the safe code is 9090", namespace="alice")
    assert _contents(store, [fading, private]) == {fading: "the parking code is 4411"}
    assert _contents(store, [fading, private], namespace="alice") == {
        private: "the safe code is 9090"
    }
    # Nothing was written since: the rows come from the cache, and still expire on time.
    later = START + timedelta(hours=2)
    assert _contents(store, [fading, private], now=later) == {}
    everything = Scope(namespaces=("default",), now=later, include_expired=True)
    assert set(store.retrieval.rows(everything, [fading, private])) == {fading}
    store.close()


def test_row_cache_keeps_nothing_read_inside_a_transaction(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.db")
    seq = _one(store, "the boiler was serviced in May")

    class AbandonError(Exception):
        pass

    def uncommitted(connection: apsw.Connection) -> None:
        connection.execute("UPDATE memories SET content = 'not committed' WHERE seq = ?", (seq,))
        # This thread's connection sees its own pending write...
        assert _contents(store, [seq]) == {seq: "not committed"}
        raise AbandonError

    with pytest.raises(AbandonError):
        store.write(uncommitted)
    # ...which was rolled back. Another write then brings the change count to the value
    # the abandoned one had reached: only rows read outside transactions may be kept.
    _one(store, "the gutters were cleared in June")
    assert _contents(store, [seq]) == {seq: "the boiler was serviced in May"}
    store.close()


def test_row_cache_works_on_a_private_database() -> None:
    store = SQLiteStore(Path(":memory:"))
    seq = _one(store, "kept in memory only")
    assert _contents(store, [seq]) == {seq: "kept in memory only"}
    with store.transaction() as tx:
        tx.replace(seq, _record("kept in ", "kept in memory, and edited"))
    assert _contents(store, [seq]) == {seq: "kept in memory, and edited"}
    store.close()


def _changes(store: SQLiteStore) -> int:
    rows = store._connection().execute("SELECT counter FROM memory_changes").fetchall()
    return int(cast(int, rows[0][0]))


def test_memory_changes_count_what_recall_reads_and_not_access_counts(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.db")
    seq = _one(store, "the spare key is under the blue pot")
    counted = _changes(store)
    assert counted > 0
    with store.transaction() as tx:
        tx.touch([seq], START)  # what recall() writes for every hit
    assert _changes(store) == counted
    with store.transaction() as tx:
        tx.replace(seq, _record("the spar", "the spare key is under the red pot"))
    assert _changes(store) > counted
    edited = _changes(store)
    with store.transaction() as tx:
        tx.delete(seq)
    assert _changes(store) > edited
    store.close()


def _cached(seq: int) -> CachedRow:
    row = CandidateRow(
        seq=seq,
        id=str(seq),
        namespace="default",
        title=None,
        content=f"memory {seq}",
        tags=(),
        speaker=None,
        source=None,
        at_utc=None,
        index_state="indexed",
    )
    return CachedRow(row=row, expires_at=None)


def test_row_cache_keeps_the_most_recently_used_and_drops_a_stale_put() -> None:
    cache = RowCache(size=2)
    assert cache.get(1, [1]) == {}
    cache.put(1, {1: _cached(1), 2: _cached(2)})
    assert set(cache.get(1, [1])) == {1}  # 1 is now the most recently used
    cache.put(1, {3: _cached(3)})
    assert set(cache.get(1, [1, 2, 3])) == {1, 3}
    # Rows read before the token moved are not kept under the new one.
    assert cache.get(2, [1]) == {}
    cache.put(1, {4: _cached(4)})
    assert len(cache) == 0


def test_access_counts_commit_without_the_fsync_and_leave_the_setting(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.db", synchronous="FULL")
    seq = _one(store, "the gate code changed in March")
    seen: list[int] = []

    def trace(connection: apsw.Connection) -> None:
        seen.append(int(cast(int, connection.execute("PRAGMA synchronous").fetchall()[0][0])))

    original = store._database.after_commit

    def after_commit(connection: apsw.Connection) -> None:
        trace(connection)  # inside the write, after its COMMIT
        original(connection)

    store._database.after_commit = after_commit  # type: ignore[method-assign]
    store.count_accesses([seq], START)
    store._database.after_commit = original  # type: ignore[method-assign]
    assert seen == [1]  # NORMAL (1) for that commit: no fsync waited for
    # The connection is back at FULL (2) for every other write.
    assert store._connection().execute("PRAGMA synchronous").fetchall()[0][0] == 2
    found = store.get(_scope(), seq=seq)
    assert found is not None
    assert found.access_count == 1
    store.close()


def test_row_cache_applies_tag_filters_as_the_file_does(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.db")
    tagged = {
        "both": ("garden", "spring"),
        "garden": ("garden",),
        "near": ("gardens", "Garden"),  # neither is "garden": tags compare exactly
        "none": (),
    }
    seqs = {}
    with store.transaction() as tx:
        for name, labels in tagged.items():
            record = dataclasses.replace(_record(name, f"{name} note"), tags=labels)
            seqs[tx.insert(record).seq] = name
    filters: list[dict[str, tuple[str, ...]]] = [
        {"tags_any": ("garden",)},
        {"tags_any": ("spring", "Garden")},
        {"tags_all": ("garden", "spring")},
        {"tags_any": ("gardens",), "tags_all": ("Garden",)},
        {"tags_any": ("absent",)},
    ]
    for wanted in filters:
        scope = Scope(
            namespaces=("default",),
            now=START,
            tags_any=wanted.get("tags_any", ()),
            tags_all=wanted.get("tags_all", ()),
        )
        found = store.retrieval.rows(scope, list(seqs))
        # Every row is kept, whatever the filter let through, and tested on each read.
        assert len(store.retrieval._row_cache) == len(seqs)
        assert store.retrieval.rows(scope, list(seqs)) == found
        # The same memories as the SQL's tag tests keep.
        assert set(found) == set(store.semantic.visible_seqs(scope)), wanted
        expected = {
            seq
            for seq, name in seqs.items()
            if (not wanted.get("tags_any") or set(wanted["tags_any"]) & set(tagged[name]))
            and set(wanted.get("tags_all", ())) <= set(tagged[name])
        }
        assert set(found) == expected, wanted
    store.close()
