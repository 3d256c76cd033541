"""The SQLite store: migrations, pragmas, the FTS index and its sync, concurrent writers."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from recalld.model import Memory
from recalld.store.base import MemoryRecord, Scope
from recalld.store.migrations import (
    FTS_TABLE,
    MIGRATIONS,
    migration_8,
    migration_14,
)
from recalld.store.migrations_counters import migration_16
from recalld.store.migrations_graph import migration_24
from recalld.store.migrations_text import migration_18, migration_19, migration_20, migration_22
from recalld.store.semantic import decode_vectors, encode_vector
from recalld.store.sqlite import SQLiteStore
from recalld.store.sqlite_connection import FIRST_STATISTICS_REFRESH


def _record(id: str, content: str, tags: tuple[str, ...] = ()) -> MemoryRecord:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return MemoryRecord(
        id=id, namespace="default", content=content, created_at=now, updated_at=now, tags=tags
    )


def _scope() -> Scope:
    return Scope(namespaces=("default",), now=datetime(2026, 1, 2, tzinfo=UTC))


def test_sqlite_migrations_recorded_once(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    store = SQLiteStore(path)
    assert store.schema_version == len(MIGRATIONS)
    store.close()
    connection = apsw.Connection(str(path))
    versions = connection.execute("SELECT version FROM schema_migrations").fetchall()
    assert versions == [(number,) for number in range(1, len(MIGRATIONS) + 1)]
    assert connection.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)


def test_sqlite_pragmas_for_durability(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    assert store.pragmas() == {
        "journal_mode": "wal",
        "synchronous": 2,  # FULL
        "secure_delete": 1,
        "busy_timeout": 5000,
        "foreign_keys": 1,
    }
    store.close()
    # WAL is a property of the file: a connection of another program sees it too.
    other = apsw.Connection(str(tmp_path / "m.db"))
    assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    other.close()


def test_sqlite_fts_kept_in_sync_with_rows(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    with store.transaction() as tx:
        inserted = tx.insert(_record("a", "apples and pears", tags=("fruit",)))
    assert [m.memory.id for m in store.search(_scope(), "", ["apple"], 5)] == ["a"]
    assert [m.memory.id for m in store.search(_scope(), "", ["fruit"], 5)] == ["a"]
    with store.transaction() as tx:
        tx.replace(inserted.seq, _record("a", "bananas only", tags=("yellow",)))
    assert store.search(_scope(), "", ["apple"], 5) == []
    assert [m.memory.id for m in store.search(_scope(), "", ["banana"], 5)] == ["a"]
    with store.transaction() as tx:
        tx.delete(inserted.seq)
    assert store.search(_scope(), "", ["banana"], 5) == []
    store.close()
    connection = apsw.Connection(str(tmp_path / "m.db"))
    connection.execute("INSERT INTO memories_fts(memories_fts) VALUES('integrity-check')")
    connection.close()


def test_sqlite_fts_index_built_for_existing_rows(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = SQLiteStore(path, fts=False)
    assert store.fts_available is False
    store.close()
    # A database created before the FTS index existed gets it (and its rows) on open.
    connection = apsw.Connection(str(path))
    connection.execute("DROP TABLE IF EXISTS memories_fts")
    connection.close()
    store = SQLiteStore(path)
    with store.transaction() as tx:
        tx.insert(_record("a", "written later"))
    store.close()
    store = SQLiteStore(path)
    assert store.fts_available is True
    assert [m.memory.id for m in store.search(_scope(), "", ["written"], 5)] == ["a"]
    store.close()


def test_sqlite_transaction_rolls_back_on_error(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    try:
        with store.transaction() as tx:
            tx.insert(_record("a", "one"))
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert store.get(_scope(), id="a") is None
    store.close()


WRITER = """
import sys
from recalld.config import Settings
from recalld.service import MemoryService
path, label, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with MemoryService.open(Settings(db=path, synchronous="NORMAL", busy_timeout_ms=50)) as service:
    for index in range(count):
        service.remember(f"{label} marker {index}", tags=[label])
"""


def test_sqlite_concurrent_processes_lose_no_write(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    SQLiteStore(path).close()
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"w{index}", "150"],
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(3)
    ]
    for writer in writers:
        _, error_output = writer.communicate(timeout=120)
        assert writer.returncode == 0, error_output
        assert "locked" not in error_output
    store = SQLiteStore(path)
    memories: list[Memory] = list(store.iterate(_scope()))
    contents = sorted(memory.content for memory in memories)
    expected = sorted(f"w{w} marker {i}" for w in range(3) for i in range(150))
    assert contents == expected
    store.close()


def _database_before(path: Path, migration: object) -> apsw.Connection:
    """A database migrated up to (not including) ``migration``, as an older recalld left it."""
    connection = apsw.Connection(str(path))
    connection.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    for number, step in enumerate(MIGRATIONS[: MIGRATIONS.index(migration)], start=1):  # type: ignore[arg-type]
        step(connection.execute)
        connection.execute(
            "INSERT INTO schema_migrations VALUES (?, '2026-01-01T00:00:00Z')", (number,)
        )
    return connection


def test_sqlite_compact_vectors_migration_converts_float32_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    connection = _database_before(path, migration_8)
    vectors = np.random.default_rng(3).standard_normal((3, 384)).astype(np.float32)
    for seq, vector in enumerate(vectors, start=1):
        connection.execute(
            "INSERT INTO memories(seq, id, namespace, content, created_at, updated_at,"
            " index_state) VALUES (?, ?, 'default', ?, 'x', 'x', 'indexed')",
            (seq, f"m{seq}", f"memory {seq}"),
        )
        connection.execute(
            "INSERT INTO vectors(seq, model, dimension, text_hash, vector, created_at)"
            " VALUES (?, 'model''s', 384, 'h', ?, 'x')",
            (seq, vector.tobytes()),
        )
        connection.execute(
            "INSERT INTO jobs(id, seq, model, state, run_after, created_at, updated_at)"
            " VALUES (?, ?, 'model''s', 'done', 'x', 'x', 'x')",
            (f"job{seq}", seq),
        )
    connection.close()
    store = SQLiteStore(path)
    try:
        stored = store.semantic.vectors_for("model's", [1, 2, 3])
        assert sorted(stored) == [1, 2, 3]
        for seq, vector in enumerate(vectors, start=1):
            assert len(stored[seq]) == 384 * 2  # float16
            np.testing.assert_allclose(
                decode_vectors([stored[seq]], 384)[0], vector, rtol=1e-3, atol=1e-3
            )
        assert store._read("SELECT count(*) FROM jobs", ()) == [(0,)]
        # The change-log triggers came back with the rebuilt table.
        before = store.semantic.last_vector_change("model's")
        store.write(lambda tx: tx.execute("DELETE FROM memories WHERE seq = 2"))
        changes = store.semantic.vector_changes("model's", before)
        assert changes.deletes == [2]
    finally:
        store.close()


def test_sqlite_vector_model_id_migration_keeps_vectors_and_their_log(tmp_path: Path) -> None:
    path = tmp_path / "v13.db"
    connection = _database_before(path, migration_14)
    blobs = {seq: encode_vector(np.full(384, seq / 10, dtype=np.float32)) for seq in (1, 2, 3)}
    for seq, blob in blobs.items():
        connection.execute(
            "INSERT INTO memories(seq, id, namespace, content, created_at, updated_at,"
            " index_state) VALUES (?, ?, 'default', ?, 'x', 'x', 'indexed')",
            (seq, f"m{seq}", f"memory {seq}"),
        )
        for model in ("model's", "other"):
            connection.execute(
                "INSERT INTO vectors(seq, model, text_hash, vector) VALUES (?, ?, 'h', ?)",
                (seq, model, blob),
            )
    connection.close()
    store = SQLiteStore(path)
    try:
        assert store.semantic.vectors_for("model's", [1, 2, 3]) == blobs
        assert store.semantic.vectors_for("other", [2]) == {2: blobs[2]}
        # Each model's name is stored once, in vector_models.
        assert store._read("SELECT name FROM vector_models ORDER BY id", ()) == [
            ("model's",),
            ("other",),
        ]
        before = store.semantic.last_vector_change("model's")
        assert before > 0  # the old rows' log survived the rebuild
        store.write(lambda tx: tx.execute("DELETE FROM memories WHERE seq = 2"))
        changes = store.semantic.vector_changes("model's", before)
        assert changes.deletes == [2]  # the cascade reached vector_rows, and it was logged
        # The view keeps the old columns, for whatever reads or writes them.
        store.write(
            lambda tx: tx.execute(
                "INSERT INTO vectors(seq, model, text_hash, vector) VALUES (3, 'new', 'h', ?)",
                (blobs[3],),
            )
        )
        assert store._read("SELECT seq, model FROM vectors WHERE model = 'new'", ()) == [(3, "new")]
        assert store.semantic.drop_other_models("model's") == 3
        assert store._read("SELECT DISTINCT model FROM vectors", ()) == [("model's",)]
    finally:
        store.close()


def test_sqlite_seq_lookups_use_the_primary_key(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "plans.db")
    try:
        plan = store._read(
            "EXPLAIN QUERY PLAN SELECT m.seq FROM memories m NOT INDEXED"
            " WHERE m.seq IN (SELECT value FROM json_each(?)) AND m.namespace IN ('default')",
            ("[1, 2]",),
        )
        details = " ".join(str(row[-1]) for row in plan)
        assert "INTEGER PRIMARY KEY" in details
        assert "memories_geohash" not in details
    finally:
        store.close()


def test_sqlite_duplicate_check_uses_the_content_hash_index(tmp_path: Path) -> None:
    # A plan over (namespace, key IS NULL) visited every keyless memory of the namespace on
    # every write: ingest slowed to ~165 memories/s at 70,000 memories.
    store = SQLiteStore(tmp_path / "duplicates.db")
    statements: list[tuple[str, Any]] = []

    def trace(cursor: Any, sql: str, bindings: Any) -> bool:
        if "content_hash = :hash" in sql:
            statements.append((sql, bindings))
        return True

    try:
        with store.transaction() as tx:
            tx.insert(_record("a", "the same words"))
            connection: apsw.Connection = tx._connection
            connection.exec_trace = trace
            found = tx.find_duplicate("default", "the  same words", datetime.now(UTC))
            connection.exec_trace = None
        assert found is not None
        assert found.id == "a"
        [(sql, bindings)] = statements
        plan = " ".join(str(row[-1]) for row in store._read(f"EXPLAIN QUERY PLAN {sql}", bindings))
        assert "memories_content_hash" in plan
    finally:
        store.close()


def _old_fts(execute: Any) -> None:
    """The full-text table and triggers as recalld created them before the speaker field."""
    execute(
        f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(title, content, tags,"
        " content='memories', content_rowid='seq',"
        " tokenize='porter unicode61 remove_diacritics 2')"
    )
    new = "new.seq, new.title, new.content, new.tags"
    old = "'delete', old.seq, old.title, old.content, old.tags"
    into = f"{FTS_TABLE}(rowid, title, content, tags)"
    command = f"{FTS_TABLE}({FTS_TABLE}, rowid, title, content, tags)"
    execute(
        f"CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN"
        f" INSERT INTO {into} VALUES ({new}); END"
    )
    execute(
        f"CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN"
        f" INSERT INTO {command} VALUES ({old}); END"
    )
    execute(
        f"CREATE TRIGGER memories_fts_update AFTER UPDATE OF title, content, tags ON memories"
        f" BEGIN INSERT INTO {command} VALUES ({old}); INSERT INTO {into} VALUES ({new}); END"
    )
    execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES('rebuild')")


def test_sqlite_per_namespace_ids_migration_keeps_rows_and_seq_high_water(tmp_path: Path) -> None:
    """A database from before per-namespace ids keeps every row, tag, vector and FTS entry."""
    path = tmp_path / "old.db"
    connection = apsw.Connection(str(path))
    connection.execute("PRAGMA journal_mode = WAL")
    for number, migration in enumerate(MIGRATIONS[:5], start=1):
        migration(connection.execute)
        connection.execute(f"PRAGMA user_version = {number}")
    connection.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    connection.executemany(
        "INSERT INTO schema_migrations VALUES (?, '2026-01-01T00:00:00Z')",
        [(number,) for number in range(1, 6)],
    )
    stamp = "2026-01-01T00:00:00.000000Z"
    for seq, (memory_id, namespace) in enumerate([("a", "one"), ("b", "one"), ("c", "two")], 1):
        connection.execute(
            "INSERT INTO memories(seq, id, namespace, content, tags, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, '[\"t\"]', ?, ?)",
            (seq, memory_id, namespace, f"old apples {memory_id}", stamp, stamp),
        )
        connection.execute("INSERT INTO memory_tags(seq, tag) VALUES (?, 't')", (seq,))
    connection.execute("INSERT INTO vectors VALUES (1, 'm', 1, 'h', x'00000000', ?)", (stamp,))
    # A forgotten memory once held seq 9: it must never be handed out again.
    connection.execute("UPDATE sqlite_sequence SET seq = 9 WHERE name = 'memories'")
    _old_fts(connection.execute)  # the full-text index and triggers of that version
    connection.close()

    store = SQLiteStore(path)
    assert store.schema_version == len(MIGRATIONS)
    scope = Scope(namespaces=("one", "two"), now=datetime(2026, 1, 2, tzinfo=UTC))
    assert sorted(m.id for m in store.iterate(scope)) == ["a", "b", "c"]
    assert [m.memory.id for m in store.search(scope, "", ["apples"], 5)] != []
    assert store.counts(scope).count == 3
    with store.transaction() as tx:
        # The same id in another namespace is now a different memory.
        fresh = tx.insert(
            MemoryRecord(
                id="a",
                namespace="two",
                content="new",
                created_at=datetime(2026, 1, 3, tzinfo=UTC),
                updated_at=datetime(2026, 1, 3, tzinfo=UTC),
            )
        )
        assert fresh.seq == 10
        tx.delete(1)
        tx.replace(2, replace(_record("b", "bananas now"), namespace="one"))
    # The full-text triggers came through the rebuild: the index follows every change.
    assert [m.memory.id for m in store.search(scope, "", ["apples"], 5)] == ["c"]
    assert [m.memory.id for m in store.search(scope, "", ["bananas"], 5)] == ["b"]
    store.close()
    check = apsw.Connection(str(path))
    assert check.execute("SELECT count(*) FROM memory_tags").fetchone() == (1,)  # c only
    assert check.execute("SELECT count(*) FROM vectors").fetchone() == (0,)  # cascaded
    assert check.execute("PRAGMA foreign_key_check").fetchall() == []
    assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    check.execute("INSERT INTO memories_fts(memories_fts) VALUES('integrity-check')")
    check.close()


def test_sqlite_statistics_follow_a_file_this_process_fills(tmp_path: Path) -> None:
    # The statistics of a new file say its tables hold a few rows. A process that then
    # filled it kept them, and FTS5's range deletes on its segment table became scans:
    # ingest fell from 5,600 to 250 memories/s by 300,000 memories.
    store = SQLiteStore(tmp_path / "growing.db")
    plan_sql = f"EXPLAIN QUERY PLAN DELETE FROM {FTS_TABLE}_data WHERE id >= ? AND id <= ?"
    try:
        for batch in range(6):
            with store.transaction() as tx:
                for number in range(500):
                    tx.insert(_record(f"m{batch}-{number}", f"note {batch} {number} words"))
                connection: apsw.Connection = tx._connection
        assert connection.total_changes() >= FIRST_STATISTICS_REFRESH
        stats = dict(store._read("SELECT tbl, stat FROM sqlite_stat1 WHERE idx IS NULL", ()))
        assert int(str(stats[f"{FTS_TABLE}_data"]).split()[0]) > 2
        plan = " ".join(str(row[-1]) for row in store._read(plan_sql, (1, 5)))
        assert "INTEGER PRIMARY KEY" in plan
        assert "SCAN" not in plan
    finally:
        store.close()


def test_sqlite_place_index_migration_covers_a_place_scan(tmp_path: Path) -> None:
    # A place cue reads seq, coordinates, time and expiry of every memory in the cells
    # around it: from the index alone since migration 16, which leaves out memories
    # without a place.
    path = tmp_path / "v15.db"
    connection = _database_before(path, migration_16)
    rows = [
        (1, "u09tunq", 48.8566, 2.3522, "2026-05-01T10:00:00Z", None),
        (2, "u09tunr", 48.8570, 2.3530, None, "2026-01-01T00:00:00Z"),  # expired
        (3, "u09tvw0", 48.8700, 2.3700, None, None),
        (4, None, None, None, None, None),
    ]
    for seq, geohash, lat, lon, at, expires in rows:
        connection.execute(
            "INSERT INTO memories(seq, id, namespace, content, created_at, updated_at,"
            " index_state, geohash, lat, lon, at, expires_at)"
            " VALUES (?, ?, 'default', 'x', 'x', 'x', 'indexed', ?, ?, ?, ?, ?)",
            (seq, f"m{seq}", geohash, lat, lon, at, expires),
        )
    connection.close()
    store = SQLiteStore(path)
    try:
        now = datetime(2026, 6, 1, tzinfo=UTC)
        points = store.context.near_points("default", ["u09tun", "u09tv"], now, 100)
        assert [(seq, lat, geohash) for seq, lat, _, _, geohash in points] == [
            (1, 48.8566, "u09tunq"),
            (3, 48.87, "u09tvw0"),
        ]
        assert points[0][3] == datetime(2026, 5, 1, 10, tzinfo=UTC)
        plan = store._read(
            "EXPLAIN QUERY PLAN SELECT m.seq, m.lat, m.lon, m.at, m.geohash FROM memories m"
            " WHERE m.namespace = 'default' AND m.geohash >= 'u09tun' AND m.geohash < 'u09tun~'"
            " AND (m.expires_at IS NULL OR m.expires_at > '2026')",
            (),
        )
        assert "COVERING INDEX memories_geohash" in plan[0][3]
        indexed = store._read(
            "SELECT count(*) FROM memories INDEXED BY memories_geohash"
            " WHERE namespace = 'default' AND geohash IS NOT NULL",
            (),
        )
        assert indexed == [(3,)]
        assert store.schema_version == len(MIGRATIONS)
    finally:
        store.close()


def test_sqlite_place_name_migration_rebuilds_the_full_text_index(tmp_path: Path) -> None:
    # A file from before migration 18: its full-text table has no place-name column, so
    # an experience was not found by its place's name. Opening it rebuilds the index.
    path = tmp_path / "v17.db"
    connection = _database_before(path, migration_18)
    connection.execute(
        "INSERT INTO memories(seq, id, namespace, content, created_at, updated_at,"
        " index_state, geohash, lat, lon, place_name)"
        " VALUES (1, 'visit', 'default', 'ordered a cortado', 'x', 'x', 'indexed',"
        " '9q8yyk', 37.776, -122.423, 'Blue Bottle Cafe')"
    )
    connection.execute(
        f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(title, content, tags, speaker,"
        " fts_namespace, content='memories', content_rowid='seq')"
    )
    connection.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES('rebuild')")
    connection.close()
    store = SQLiteStore(path)
    try:
        columns = [row[1] for row in store._read(f"PRAGMA table_info({FTS_TABLE})", ())]
        assert {"place_name", "key"} <= set(columns)  # migrations 18 and 21
        found = store.retrieval.keyword_candidates(_scope(), "", ["bottle"], 5)
        assert [(c.row.id, c.row.place_name) for c in found] == [("visit", "Blue Bottle Cafe")]
        assert store.schema_version == len(MIGRATIONS)
    finally:
        store.close()


def test_sqlite_place_name_migration_queues_those_memories_again(tmp_path: Path) -> None:
    # Vectors made before migration 19 lack the place's name: each model that had one
    # queues the memory again and the old vector goes (logged, for every process's index).
    path = tmp_path / "v18.db"
    connection = _database_before(path, migration_19)
    blob = encode_vector(np.full(384, 0.1, dtype=np.float32))
    for seq, name in ((1, "Kyoto"), (2, None), (3, "")):
        connection.execute(
            "INSERT INTO memories(seq, id, namespace, content, created_at, updated_at,"
            " index_state, place_name) VALUES (?, ?, 'default', ?, 'x', 'x', 'indexed', ?)",
            (seq, f"m{seq}", f"memory {seq}", name),
        )
        for model in ("model's", "other"):
            connection.execute(
                "INSERT INTO vectors(seq, model, text_hash, vector) VALUES (?, ?, 'h', ?)",
                (seq, model, blob),
            )
    connection.close()
    store = SQLiteStore(path)
    try:
        assert sorted(store._read("SELECT seq, model, state FROM jobs", ())) == [
            (1, "model's", "queued"),
            (1, "other", "queued"),
        ]
        assert store.semantic.vectors_for("model's", [1, 2, 3]).keys() == {2, 3}
        ((inserted,),) = store._read("SELECT max(change) FROM vector_log WHERE seq = 3", ())
        assert store.semantic.vector_changes("model's", inserted).deletes == [1]
        states = store._read("SELECT seq, index_state FROM memories ORDER BY seq", ())
        assert states == [(1, "queued"), (2, "indexed"), (3, "indexed")]
    finally:
        store.close()


def test_sqlite_short_years_migration_pads_the_stored_times(tmp_path: Path) -> None:
    # An older version wrote the year 800 as "800-12-25T...", sorted after "2026-...".
    path = tmp_path / "v19.db"
    connection = _database_before(path, migration_20)
    for seq, at in ((1, "800-12-25T12:00:00.000000Z"), (2, "2026-01-01T00:00:00.000000Z")):
        connection.execute(
            "INSERT INTO memories(seq, id, namespace, content, created_at, updated_at,"
            " index_state, at_utc, expires_at) VALUES (?, ?, 'default', ?, ?, ?, 'indexed', ?,"
            " NULL)",
            (seq, f"m{seq}", f"memory {seq}", "5-01-01T00:00:00.000000Z", at, at),
        )
    connection.execute(
        "INSERT INTO graph_entities(id, namespace, name, key, type, created_at, updated_at)"
        " VALUES (1, 'default', 'Charlemagne', 'charlemagne', 'person', 'x', 'x')"
    )
    connection.execute(
        "INSERT INTO graph_relations(id, namespace, subject_id, predicate, object_id, created_at)"
        " VALUES (1, 'default', 1, 'crowned', 1, 'x')"
    )
    connection.execute(
        "INSERT INTO graph_relation_sources(relation_id, seq, at)"
        " VALUES (1, 1, '800-12-25T12:00:00.000000Z')"
    )
    connection.close()
    store = SQLiteStore(path)
    try:
        rows = store._read("SELECT seq, at_utc, created_at, updated_at FROM memories", ())
        assert sorted(rows) == [
            (
                1,
                "0800-12-25T12:00:00.000000Z",
                "0005-01-01T00:00:00.000000Z",
                "0800-12-25T12:00:00.000000Z",
            ),
            (
                2,
                "2026-01-01T00:00:00.000000Z",
                "0005-01-01T00:00:00.000000Z",
                "2026-01-01T00:00:00.000000Z",
            ),
        ]
        early = store._read("SELECT seq FROM memories WHERE at_utc < '1000'", ())
        assert early == [(1,)]
        assert store._read("SELECT at FROM graph_relation_sources", ()) == [
            ("0800-12-25T12:00:00.000000Z",)
        ]
    finally:
        store.close()


def test_sqlite_key_words_migration_queues_keyed_memories_again(tmp_path: Path) -> None:
    # Vectors made before migration 22 lack the key's words (migration 19's helper).
    path = tmp_path / "v21.db"
    connection = _database_before(path, migration_22)
    blob = encode_vector(np.full(384, 0.1, dtype=np.float32))
    for seq, key in ((1, "user.favourite_colour"), (2, None)):
        connection.execute(
            "INSERT INTO memories(seq, id, namespace, content, created_at, updated_at,"
            " index_state, key) VALUES (?, ?, 'default', ?, 'x', 'x', 'indexed', ?)",
            (seq, f"m{seq}", f"memory {seq}", key),
        )
        connection.execute(
            "INSERT INTO vectors(seq, model, text_hash, vector) VALUES (?, 'model', 'h', ?)",
            (seq, blob),
        )
    connection.close()
    store = SQLiteStore(path)
    try:
        assert store._read("SELECT seq, model, state FROM jobs", ()) == [(1, "model", "queued")]
        assert store.semantic.vectors_for("model", [1, 2]).keys() == {2}
        states = store._read("SELECT seq, index_state FROM memories ORDER BY seq", ())
        assert states == [(1, "queued"), (2, "indexed")]
    finally:
        store.close()


def test_sqlite_graph_names_migration_gives_each_name_a_memory_that_says_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    connection = _database_before(path, migration_24)
    for seq in (1, 2):
        connection.execute(
            "INSERT INTO memories(seq, id, namespace, content, created_at, updated_at,"
            " index_state) VALUES (?, ?, 'default', ?, 'x', 'x', 'indexed')",
            (seq, f"m{seq}", f"Kate, memory {seq}"),
        )
    # "KATE" was the spelling of a memory forgotten before this version re-derived names.
    entities = [(1, "kate", "KATE", "person", 0), (2, "ann", "Ann (declared)", "friend", 1)]
    connection.executemany(
        "INSERT INTO graph_entities(id, namespace, key, name, type, declared, created_at,"
        " updated_at) VALUES (?, 'default', ?, ?, ?, ?, 'x', 'x')",
        entities,
    )
    connection.executemany(
        "INSERT INTO graph_mentions(entity_id, seq, surface, count) VALUES (?, ?, ?, 1)",
        [(1, 2, "kate"), (1, 1, "Kate"), (2, 1, "ann")],
    )
    connection.close()
    store = SQLiteStore(path)
    try:
        assert store._read("SELECT id, name, type FROM graph_entities ORDER BY id", ()) == [
            (1, "Kate", "person"),  # the earliest memory's spelling
            (2, "Ann (declared)", "friend"),
        ]
        assert store._read(
            "SELECT entity_id, seq, type FROM graph_mentions ORDER BY entity_id, seq", ()
        ) == [(1, 1, "person"), (1, 2, "person"), (2, 1, "friend")]
        # From now on the triggers keep it so: memory 1 goes, memory 2's spelling stays.
        store.write(lambda tx: tx.execute("DELETE FROM memories WHERE seq = 1"))
        assert store._read("SELECT name, type FROM graph_entities WHERE id = 1", ()) == [
            ("kate", "person")
        ]
    finally:
        store.close()
