"""update, forget (no trace left on disk), TTL expiry and purge, namespaces as walls."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import NotFoundError, ValidationError
from recalld.model import Filters
from recalld.service import MemoryService
from tests.conftest import FakeClock


def test_update_changes_only_given_fields(service: MemoryService, clock: FakeClock) -> None:
    receipt = service.remember(
        "original", title="t", tags=["a"], category="fact", salience=0.5, place={"geohash": "u09tv"}
    )
    clock.advance(10)
    updated = service.update(receipt.id, content="changed", salience=0.9)
    assert updated.content == "changed"
    assert updated.salience == 0.9
    assert (updated.title, updated.tags, updated.category) == ("t", ["a"], "fact")
    assert updated.place is not None
    assert updated.place.geohash == "u09tv"
    assert updated.updated_at == clock.now
    assert updated.created_at == clock.now - timedelta(seconds=10)
    assert service.search("changed")[0].memory.id == receipt.id
    assert service.search("original") == []


def test_update_none_clears_optional_field(service: MemoryService) -> None:
    receipt = service.remember("x", title="t", category="fact")
    updated = service.update(receipt.id, title=None)
    assert updated.title is None
    assert updated.category == "fact"


def test_a_cleared_time_stays_cleared_through_later_updates(
    service: MemoryService, clock: FakeClock
) -> None:
    receipt = service.remember("the launch slipped", at="2024-01-02T03:04:05Z")
    assert service.update(receipt.id, at=None).at is None
    clock.advance(60)
    # Any other edit used to stamp the time of that edit on it.
    assert service.update(receipt.id, title="launch").at is None
    assert service.update(receipt.id, meta=None).at is None
    assert service.get(receipt.id).at is None


def test_update_rejects_bad_input_and_changes_nothing(service: MemoryService) -> None:
    receipt = service.remember("x", salience=0.2)
    with pytest.raises(ValidationError) as caught:
        service.update(receipt.id, salience=3)
    assert caught.value.field == "salience"
    with pytest.raises(ValidationError) as unknown:
        service.update(receipt.id, colour="red")
    assert unknown.value.field == "colour"
    with pytest.raises(ValidationError):
        service.update(receipt.id)
    with pytest.raises(ValidationError):
        service.update(receipt.id, content="")
    assert service.get(receipt.id).salience == 0.2
    with pytest.raises(NotFoundError):
        service.update("missing", content="y")


def test_update_ttl_restarts_and_clears_expiry(service: MemoryService, clock: FakeClock) -> None:
    receipt = service.remember("x", ttl_seconds=10)
    assert service.update(receipt.id, ttl_seconds=100).expires_at == clock.now + timedelta(
        seconds=100
    )
    assert service.update(receipt.id, ttl_seconds=None).expires_at is None


def _database_bytes(db_path: Path) -> bytes:
    data = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        candidate = Path(f"{db_path}{suffix}")
        if candidate.exists():
            data += candidate.read_bytes()
    return data


def test_forget_leaves_no_trace_in_database_files(service: MemoryService, db_path: Path) -> None:
    marker = "zqxmarker7741"
    for index in range(50):
        service.remember(f"unrelated filler memory number {index}", tags=["filler"])
    # The graph's entities, mentions and relations hold the marker too (issue 12).
    entity = "Zqxmarkerperson"
    receipt = service.remember(
        f"the secret is {marker} and {marker}tail. {entity}'s zqxmarkerpet is here.",
        title=f"title {marker}",
        tags=[f"tag{marker}"],
        meta={"note": marker},
        key=f"key{marker}",
    )
    service.new_worker().run_until_idle()
    graph_names = {e.name for e in service.graph.entities(query="zqxmarker").entities}
    assert {entity, "zqxmarkerpet", f"tag{marker}"} <= graph_names
    assert service.graph.relations(entity=entity).relations
    service.recall(marker)
    service.store.compact_after_forget()
    assert marker.encode() in _database_bytes(db_path)
    assert b"zqxmarkerpet" in _database_bytes(db_path)

    assert service.forget(receipt.id).deleted is True
    service.store.compact_after_forget()
    assert marker.encode() not in _database_bytes(db_path)
    assert b"zqxmarker" not in _database_bytes(db_path).lower()
    assert service.graph.entities(query="zqxmarker").entities == []
    assert service.search(marker) == []
    assert service.stats().count == 50
    assert service.forget(receipt.id).deleted is False


def test_forget_of_an_intention_leaves_no_trace_in_database_files(
    service: MemoryService, db_path: Path
) -> None:
    marker = "zqxintent5513"
    for index in range(20):
        service.remember(f"unrelated filler memory number {index}")
    intention = service.remind(
        f"call {marker} about the lease",
        mention=[f"{marker}name"],
        tags=[f"tag{marker}"],
        place={"lat": 48.85, "lon": 2.35},
        signals=["heart_rate>100"],
    )
    cue = service.recollections.cue(
        text=f"{marker}name called",
        tags=[f"tag{marker}"],
        place={"lat": 48.8501, "lon": 2.3501},
        biometrics={"heart_rate": 120},
    )
    fired = service.recollections.sense(cue)
    assert [item.kind for item in fired] == ["reminder"]
    assert marker in service.recollections.pending(drain=False)[0].prompt_line
    service.store.compact_after_forget()
    assert marker.encode() in _database_bytes(db_path)

    assert service.forget(intention.id).deleted is True
    service.store.compact_after_forget()
    assert marker.encode() not in _database_bytes(db_path)
    assert service.recollections.pending() == []
    assert service.intentions(state="all") == []


def test_forget_is_namespace_scoped(service: MemoryService) -> None:
    receipt = service.remember("mine", namespace="alice")
    assert service.forget(receipt.id, namespace="bob").deleted is False
    assert service.get(receipt.id, namespace="alice").content == "mine"


def test_ttl_expiry_hides_then_purges(service: MemoryService, clock: FakeClock) -> None:
    short = service.remember("ephemeral fact", ttl_seconds=60, key="eph")
    service.remember("permanent fact")
    assert service.get(short.id).content == "ephemeral fact"
    clock.advance(61)
    with pytest.raises(NotFoundError):
        service.get(short.id)
    with pytest.raises(NotFoundError):
        service.get(key="eph")
    assert [hit.memory.content for hit in service.search("fact")] == ["permanent fact"]
    assert [hit.memory.content for hit in service.recall("ephemeral")] == []
    assert [m.content for m in service.list_memories().memories] == ["permanent fact"]
    assert [m.content for m in service.recent().memories] == ["permanent fact"]
    assert service.stats().count == 1
    assert service.stats().expired_pending_purge == 1
    admin = service.list_memories(filters=Filters(include_expired=True)).memories
    assert {m.content for m in admin} == {"ephemeral fact", "permanent fact"}
    assert all("ephemeral" not in line for line in service.export())

    assert service.purge_expired() == 1
    assert service.stats().expired_pending_purge == 0
    assert service.list_memories(filters=Filters(include_expired=True)).memories[0].content == (
        "permanent fact"
    )


def test_ttl_expired_key_is_written_fresh(service: MemoryService, clock: FakeClock) -> None:
    first = service.remember("old", key="k", ttl_seconds=5)
    clock.advance(6)
    second = service.remember("new", key="k")
    assert second.status == "created"
    assert second.id != first.id
    assert service.get(key="k").created_at == clock.now


def test_ttl_purge_runs_on_open(db_path: Path, clock: FakeClock) -> None:
    with MemoryService.open(Settings(db=db_path), clock=clock) as service:
        service.remember("gone soon", ttl_seconds=1)
    clock.advance(2)
    with MemoryService.open(Settings(db=db_path), clock=clock) as reopened:
        rows = reopened.list_memories(filters=Filters(include_expired=True)).memories
        assert rows == []


def test_namespaces_are_walls(service: MemoryService) -> None:
    alice = service.remember("alice's kitchen secret", key="secret", namespace="alice")
    service.remember("bob's kitchen note", namespace="bob")
    assert [h.memory.content for h in service.search("kitchen", namespace="bob")] == [
        "bob's kitchen note"
    ]
    with pytest.raises(NotFoundError):
        service.get(alice.id, namespace="bob")
    with pytest.raises(NotFoundError):
        service.get(key="secret", namespace="bob")
    with pytest.raises(NotFoundError):
        service.update(alice.id, content="hijack", namespace="bob")
    assert [m.content for m in service.list_memories(namespace="bob").memories] == [
        "bob's kitchen note"
    ]
    assert service.stats(["bob"]).count == 1
    assert service.stats(["bob"]).by_namespace == {"bob": 1}
    assert all("alice" not in line for line in service.export(["bob"]))
    both = service.stats(["alice", "bob"])
    assert both.by_namespace == {"alice": 1, "bob": 1}
    assert service.get(alice.id, namespace="alice").content == "alice's kitchen secret"
