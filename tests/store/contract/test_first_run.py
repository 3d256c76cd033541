"""Issue 14's store additions on every store: duplicates by content hash, a source's turns in
order, the speaker filter, ``created``/``location()``, backups and migration progress."""

from __future__ import annotations

import itertools
import random
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import StorageError
from recalld.store.base import Scope, Store
from recalld.store.factory import open_store
from tests.store.contract.conftest import NOW, OpenStore, record

_FRESH_DATABASES = itertools.count(1)


def scope(*namespaces: str, **filters: object) -> Scope:
    return Scope(namespaces=namespaces or ("default",), now=NOW, **filters)  # type: ignore[arg-type]


def _settings(database: Path | str) -> Settings:
    return Settings(db=database, synchronous="NORMAL", embedder="none", graph_extractor="none")


@pytest.fixture
def fresh_database(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path | str:
    """A database recalld has never opened (PostgreSQL: an empty database, no template)."""
    if store_kind == "postgres":
        server: Any = request.getfixturevalue("postgres_server")
        url: str = server.create_database(f"fresh_{next(_FRESH_DATABASES)}")
        return url
    return tmp_path / "fresh.db"


def _execute(store: Store, *statements: str) -> None:
    """Run raw SQL on the store's own connection, in one write transaction (both stores
    offer ``write(operation)`` with a DB-API style ``connection.execute``)."""

    def step(connection: Any) -> None:
        for statement in statements:
            connection.execute(statement)

    store.write(step)  # type: ignore[attr-defined]


def test_store_find_duplicate_matches_normalised_content(store: Store) -> None:
    with store.transaction() as tx:
        first = tx.insert(record(id="one", content="The gate code is 4821"))
        tx.insert(record(id="keyed", key="gate", content="The door code is 1234"))
        tx.insert(record(id="other-ns", namespace="elsewhere", content="Deploys on Tuesdays"))
    with store.transaction() as tx:
        found = tx.find_duplicate("default", "  The gate\ncode   is 4821 ", NOW)
        assert found is not None
        assert found.id == first.id
        assert tx.find_duplicate("default", "the gate code is 4821", NOW) is None  # case counts
        assert tx.find_duplicate("default", "The door code is 1234", NOW) is None  # keyed
        assert tx.find_duplicate("default", "Deploys on Tuesdays", NOW) is None  # other ns
        assert tx.find_duplicate("elsewhere", "Deploys on Tuesdays", NOW) is not None


def test_store_find_duplicate_keeps_to_what_the_caller_counts_the_same(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="march", content="im in", speaker="Tom", at=NOW - timedelta(days=9)))
        tx.insert(record(id="july", content="im in", speaker="Jess", at=NOW))
    with store.transaction() as tx:
        # The oldest whose time and speaker are the ones asked (the same instant in any zone).
        found = tx.find_duplicate("default", "im in", NOW, speaker="Jess")
        assert found is not None
        assert found.id == "july"
        local = NOW.astimezone(timezone(timedelta(hours=-7)))
        found = tx.find_duplicate("default", "im in", NOW, at=local, speaker="Jess")
        assert found is not None
        assert found.id == "july"
        found = tx.find_duplicate("default", "im in", NOW, at=NOW - timedelta(days=9))
        assert found is not None
        assert found.id == "march"
        assert tx.find_duplicate("default", "im in", NOW, at=NOW, speaker="Tom") is None
        assert tx.find_duplicate("default", "im in", NOW, speaker="tom") is None


def test_store_find_duplicate_follows_rewrites_and_expiry(store: Store) -> None:
    with store.transaction() as tx:
        written = tx.insert(record(id="r", content="old text"))
        tx.insert(record(id="gone", content="short lived", expires_at=NOW - timedelta(seconds=1)))
    with store.transaction() as tx:
        tx.replace(written.seq, record(id="r", content="new text"))
    with store.transaction() as tx:
        assert tx.find_duplicate("default", "old text", NOW) is None
        again = tx.find_duplicate("default", "new text", NOW)
        assert again is not None
        assert again.id == "r"
        assert tx.find_duplicate("default", "short lived", NOW) is None


def test_store_extend_expiry_only_lengthens_and_touches_nothing_else(store: Store) -> None:
    soon, later = NOW + timedelta(hours=1), NOW + timedelta(hours=2)
    with store.transaction() as tx:
        written = tx.insert(record(id="e", content="kept words", expires_at=soon))
        assert tx.extend_expiry(written.seq, later, NOW) is True
        assert tx.extend_expiry(written.seq, soon, NOW) is False  # never shortened
        extended = tx.find("default", id="e")
        assert extended is not None
        assert extended.expires_at == later
        assert extended.content == "kept words"
        assert tx.extend_expiry(written.seq, None, NOW) is True  # never expires now
        assert tx.extend_expiry(written.seq, None, NOW) is False
        forever = tx.find("default", id="e")
        assert forever is not None
        assert forever.expires_at is None
        assert tx.extend_expiry(written.seq + 1000, None, NOW) is False  # no such row


def test_store_by_source_in_conversation_order(store: Store) -> None:
    source = "recalld://conversation/chat-1"
    with store.transaction() as tx:
        tx.insert(record(id="t2", content="second", source=source, at=NOW + timedelta(minutes=1)))
        tx.insert(record(id="t1", content="first", source=source, at=NOW))
        tx.insert(record(id="t3", content="third", source=source, at=NOW + timedelta(minutes=1)))
        tx.insert(record(id="x", content="elsewhere", source="recalld://conversation/other"))
        tx.insert(record(id="ns", namespace="private", content="hidden", source=source, at=NOW))
    turns = store.by_source(scope(), source, limit=10)
    # Oldest ``at`` first; equal ``at`` in the order they were written.
    assert [memory.id for memory in turns] == ["t1", "t2", "t3"]
    assert [memory.id for memory in store.by_source(scope(), source, limit=2)] == ["t1", "t2"]
    assert store.by_source(scope(), "recalld://conversation/none", limit=10) == []


def test_store_source_turns_reads_what_by_source_reads(store: Store) -> None:
    # Adversarial pass a61: placing a message read every turn of its conversation as a
    # Memory (4 s and 550 MB to append one turn to 100,000); only what it needs now.
    source = "recalld://conversation/chat-1"
    with store.transaction() as tx:
        tx.insert(
            record(
                id="t2",
                content="second",
                source=source,
                speaker="Ada",
                at=NOW + timedelta(minutes=1),
                meta={"turn": 1, "message_id": "b"},
            )
        )
        tx.insert(record(id="t1", content="first", source=source, at=NOW, meta={"turn": 0}))
        tx.insert(record(id="x", content="elsewhere", source="recalld://conversation/other"))
        tx.insert(record(id="ns", namespace="private", content="hidden", source=source, at=NOW))
    turns = store.source_turns(scope(), source)
    assert [memory.id for memory in store.by_source(scope(), source, limit=10)] == ["t1", "t2"]
    assert [tuple(turn) for turn in turns] == [
        ("t1", None, "first", {"turn": 0}),
        ("t2", "Ada", "second", {"turn": 1, "message_id": "b"}),
    ]
    without_texts = store.source_turns(scope(), source, texts=False)
    assert [(turn.id, turn.content) for turn in without_texts] == [("t1", None), ("t2", None)]
    assert store.source_turns(scope(), "recalld://conversation/none") == []


def test_store_source_turns_equal_by_source_on_random_turns(store: Store) -> None:
    # Review of pass a61: placing reads source_turns where it read by_source; on random
    # sources, times (ties, offsets, none), kinds, namespaces and expiries both agree.
    rng = random.Random(61)
    sources = ["recalld://conversation/a", "recalld://conversation/b"]
    with store.transaction() as tx:
        for n in range(120):
            minutes = rng.choice([None, 0, 0, 1, 2, 3, -5])
            offset = timezone(timedelta(hours=rng.choice([0, 2, -7])))
            at = None if minutes is None else (NOW + timedelta(minutes=minutes)).astimezone(offset)
            tx.insert(
                record(
                    id=f"r{n}",
                    content=f"turn {n} ünïcode",
                    source=rng.choice(sources),
                    namespace=rng.choice(["default", "default", "other"]),
                    kind=rng.choice(["turn", "turn", "fact"]),
                    speaker=rng.choice([None, "Ada", "user"]),
                    at=at,
                    expires_at=rng.choice([None, None, NOW - timedelta(days=1)]),
                    meta={"turn": n, "nested": {"n": [n]}},
                )
            )
    scopes = [scope(), scope("default", "other"), scope(kind="turn"), scope("other", kind="turn")]
    for source, seen in itertools.product(sources, scopes):
        memories = store.by_source(seen, source, limit=2**62)
        assert memories, (source, seen)
        expected = [(m.id, m.speaker, m.content, m.meta) for m in memories]
        assert [tuple(turn) for turn in store.source_turns(seen, source)] == expected
        lean = [(m.id, m.speaker, None, m.meta) for m in memories]
        assert [tuple(turn) for turn in store.source_turns(seen, source, texts=False)] == lean


def test_store_scope_filters_by_speaker(store: Store) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="ada", content="I moved to Hobart", speaker="Ada"))
        tx.insert(record(id="bot", content="How is Hobart?", speaker="assistant"))
        tx.insert(record(id="none", content="Hobart notes"))
    assert [m.id for m in store.iterate(scope(speaker="Ada"))] == ["ada"]
    assert store.counts(scope(speaker="assistant")).count == 1
    found = store.search(scope(speaker="Ada"), "Hobart", ["hobart"], 10)
    assert [match.memory.id for match in found] == ["ada"]


def test_store_created_location_and_migration_progress(
    fresh_database: Path | str, store_kind: str
) -> None:
    calls: list[tuple[int, int]] = []
    first = open_store(_settings(fresh_database), on_migration=lambda d, t: calls.append((d, t)))
    try:
        assert first.created
        total = first.schema_version
        assert total >= 12
        # Told before each migration runs, then once when all are done.
        assert calls == [(done, total) for done in range(total + 1)]
        where = first.location()
        if store_kind == "postgres":
            assert where.startswith("postgresql://")
            assert "***" in where  # the test server's password is not shown
        else:
            assert where == str(Path(fresh_database).resolve())
    finally:
        first.close()
    again: list[tuple[int, int]] = []
    second = open_store(_settings(fresh_database), on_migration=lambda d, t: again.append((d, t)))
    try:
        assert not second.created
        assert again == []  # nothing pending: no progress to show
    finally:
        second.close()


def test_store_migration_12_hashes_existing_rows(
    fresh_database: Path | str, store_kind: str
) -> None:
    store = open_store(_settings(fresh_database))
    try:
        with store.transaction() as tx:
            tx.insert(record(id="old", content="Written  before\tthe hash existed"))
        # Back to schema 11, as a database written before issue 14 is.
        _execute(
            store,
            "DROP INDEX memories_content_hash",
            "ALTER TABLE memories DROP COLUMN content_hash",
            "DELETE FROM schema_migrations WHERE version = 12",
        )
    finally:
        store.close()
    upgraded = open_store(_settings(fresh_database))
    try:
        assert upgraded.schema_version >= 12
        with upgraded.transaction() as tx:
            found = tx.find_duplicate("default", "Written before the hash existed", NOW)
        assert found is not None
        assert found.id == "old"
    finally:
        upgraded.close()


def test_store_backup_copies_sqlite_and_points_postgres_to_pg_dump(
    store: Store, store_kind: str, tmp_path: Path, open_another: OpenStore
) -> None:
    with store.transaction() as tx:
        tx.insert(record(id="kept", content="kept in the copy"))
    destination = tmp_path / "copy.db"
    if store_kind == "postgres":
        with pytest.raises(StorageError, match="pg_dump"):
            store.backup(destination)
        assert not destination.exists()
        assert "password" not in str(store.location())
        return
    result = store.backup(destination)
    assert (result.destination, result.memories) == (destination, 1)
    copy = open_store(_settings(destination))
    try:
        assert copy.get(scope(), id="kept") is not None
    finally:
        copy.close()


def test_store_by_source_beside_a_turn_reads_its_neighbours_only(store: Store) -> None:
    source = "recalld://conversation/chat-2"
    with store.transaction() as tx:
        written = [
            tx.insert(record(id=f"t{n}", content=f"turn {n}", source=source, at=NOW))
            for n in range(6)
        ]
        # An offset other than UTC compares by its instant, as the stored at_utc does.
        later = NOW.astimezone(timezone(timedelta(hours=-5))) + timedelta(minutes=1)
        tx.insert(record(id="t6", content="turn 6", source=source, at=later))
    middle = (written[3].at, written[3].seq)
    assert middle[0] is not None
    point = (middle[0], middle[1])
    earlier = store.by_source(scope(), source, limit=2, beside=point, earlier=True)
    assert [memory.id for memory in earlier] == ["t2", "t1"]  # nearest first
    later_ones = store.by_source(scope(), source, limit=10, beside=point)
    assert [memory.id for memory in later_ones] == ["t4", "t5", "t6"]
    assert store.by_source(scope(), source, limit=0, beside=point) == []
