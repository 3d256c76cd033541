"""``recalld migrate``: everything moves to PostgreSQL and back, idempotently."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.moving import copy_store
from recalld.service import MemoryService
from recalld.store.base import Scope
from recalld.store.factory import open_store
from recalld.tokens import TokenRegistry
from tests.conftest import FakeClock

pytestmark = pytest.mark.postgres


def _settings(db: Path | str) -> Settings:
    # recall_catch_up=0: the summary's search must observe the queue, not embed it.
    return Settings(
        db=db,
        synchronous="NORMAL",
        embedder="hashing",
        graph_extractor="rules",
        recall_catch_up=0,
    )


def _populate(db: Path, clock: FakeClock) -> dict[str, str]:
    """A database with something in every table a migrate copies."""
    with MemoryService.open(_settings(db), clock=clock) as memory:
        first = memory.remember(
            "Anna moved to Paris",
            key="anna.move",
            tags=["people"],
            at="2026-10-25T08:10:00-07:00",
            meta={"speaker": "Ana"},
        )
        # A TTL still running on the wall clock the CLI's migrate reads (an expired memory is
        # left out of the copy).
        memory.remember(
            "The staging DB is in Melbourne", namespace="infra", ttl_seconds=100 * 365 * 86_400
        )
        experience = memory.recollections.remember(
            "Croissant with Léa",
            place={"lat": 48.8642, "lon": 2.3475},
            at="2026-11-04T08:10:00+01:00",
            biometrics={"heart_rate": 120.0},
        )
        memory.new_worker().run_until_idle()
        memory.core.apply("user", [{"action": "add", "content": "Name: Ana"}])
        cue = memory.recollections.cue(
            text="Croissant with Léa", place={"lat": 48.8642, "lon": 2.3475}
        )
        fired = memory.recollections.sense(cue)
        assert [item.memory.id for item in fired] == [experience.id]
        memory.remind("ask Anna about the move", mention=["Anna"])
        memory.knowledge.create_entities(
            [{"name": "Bob", "entityType": "person", "observations": ["Bob plays jazz"]}]
        )
        token = TokenRegistry.for_store(memory.store).create("ci", {"*": "read+write"})
        queued = memory.remember("written after the worker ran")
    return {"first": first.id, "token": token.token, "queued": queued.id}


def _summary(db: Path | str, clock: FakeClock) -> dict[str, object]:
    with MemoryService.open(_settings(db), clock=clock) as memory:
        first = memory.get(key="anna.move")
        return {
            "memories": memory.stats(["default", "infra"]).count,
            "first": (first.id, first.at.isoformat() if first.at else None, first.tags, first.meta),
            "status": memory.status().embeddings,
            "queue": memory.status().queue["queued"],
            "core": memory.core.state("user").entries,
            "pending": [item.memory.content for item in memory.recollections.pending(drain=False)],
            "intentions": [i.action for i in memory.intentions()],
            "graph": sorted(e.name for e in memory.knowledge.read_graph().entities),
            "hit": memory.search("where did Anna move?", limit=1)[0].memory.id,
            "habituated": memory.store.context.counts("default"),
        }


def test_migrate_copies_everything_there_and_back(
    tmp_path: Path, postgres_url: str, clock: FakeClock
) -> None:
    source = tmp_path / "source.db"
    ids = _populate(source, clock)
    before = _summary(source, clock)
    runner = CliRunner()
    result = runner.invoke(cli, ["--db", str(source), "migrate", "--to", postgres_url, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["copied"]["memories"] == before["memories"]
    assert report["copied"]["vectors"] >= 3
    assert report["copied"]["tokens"] == 1
    assert report["copied"]["graph_entities"] >= 2
    assert _summary(postgres_url, clock) == before
    with TokenRegistry.open(_settings(postgres_url)) as tokens:
        assert tokens.authenticate(ids["token"]).all_namespaces
    again = runner.invoke(cli, ["--db", str(source), "migrate", "--to", postgres_url, "--json"])
    assert again.exit_code == 0, again.output
    second = json.loads(again.output.strip().splitlines()[-1])
    assert sum(second["copied"].values()) == 0  # idempotent: everything is skipped
    assert second["skipped"]["memories"] == report["copied"]["memories"]
    back = tmp_path / "back.db"
    result = runner.invoke(cli, ["migrate", "--from", postgres_url, "--to", str(back), "--json"])
    assert result.exit_code == 0, result.output
    assert _summary(back, clock) == before


def test_migrate_resumes_after_an_interruption(
    tmp_path: Path, postgres_url: str, clock: FakeClock
) -> None:
    source = tmp_path / "source.db"
    with MemoryService.open(_settings(source), clock=clock) as memory:
        memory.remember_many([{"content": f"memory {index}"} for index in range(1200)])
        clock.advance(1)

    class InterruptedCopyError(Exception):
        pass

    def stop_after_first_batch(table: str, done: int, total: int) -> None:
        if table == "memories" and 0 < done < total:
            raise InterruptedCopyError

    source_store = open_store(_settings(source))
    target_store = open_store(_settings(postgres_url))
    try:
        with pytest.raises(InterruptedCopyError):
            copy_store(source_store, target_store, progress=stop_after_first_batch)
        partial = target_store.counts(Scope(namespaces=("default",), now=clock())).count
        assert 0 < partial < 1200
        report = copy_store(source_store, target_store)
        assert report.copied["memories"] == 1200 - partial
        assert report.skipped["memories"] == partial
    finally:
        source_store.close()
        target_store.close()


def test_migrate_carries_content_hashes_both_ways(
    tmp_path: Path, postgres_url: str, clock: FakeClock
) -> None:
    """A copied memory is still found as a duplicate in the target (migration 12's column)."""
    source = tmp_path / "source.db"
    back = tmp_path / "back.db"
    with MemoryService.open(_settings(source), clock=clock) as memory:
        first = memory.remember("The gate code is 4821")
    for origin, destination in ((source, postgres_url), (postgres_url, back)):
        origin_store = open_store(_settings(origin))
        target_store = open_store(_settings(destination))
        try:
            copy_store(origin_store, target_store)
        finally:
            origin_store.close()
            target_store.close()
        with MemoryService.open(_settings(destination), clock=clock) as copied:
            again = copied.remember("The  gate code is 4821 ")
            assert (again.status, again.id) == ("duplicate", first.id)


def test_migrate_names_the_memory_postgresql_cannot_hold_and_copies_the_rest(
    tmp_path: Path, postgres_url: str, clock: FakeClock
) -> None:
    source = tmp_path / "source.db"
    with MemoryService.open(_settings(source), clock=clock) as memory:
        memory.remember_many([{"content": f"note {index}"} for index in range(6)])
        bad = memory.remember("scanned receipt", meta={"ocr": "TOTAL"}).id
    connection = apsw.Connection(str(source))  # an older version accepted a NUL in meta
    connection.execute(
        "UPDATE memories SET meta = ? WHERE id = ?", (json.dumps({"ocr": "TOTAL\x00 1"}), bad)
    )
    connection.close()
    runner = CliRunner()
    result = runner.invoke(cli, ["--db", str(source), "migrate", "--to", postgres_url, "--json"])
    assert result.exit_code == 1, result.output
    assert f"memory {bad!r} in 'default': meta.ocr: contains a NUL" in result.output
    with MemoryService.open(_settings(postgres_url), clock=clock) as memory:
        assert memory.stats().count == 6
    with MemoryService.open(_settings(source), clock=clock) as memory:
        memory.update(bad, meta={"ocr": "TOTAL 1"})
    again = runner.invoke(cli, ["--db", str(source), "migrate", "--to", postgres_url])
    assert again.exit_code == 0, again.output
    with MemoryService.open(_settings(postgres_url), clock=clock) as memory:
        assert memory.get(bad).meta == {"ocr": "TOTAL 1"}
        assert memory.stats().count == 7


def test_migrate_to_postgresql_again_removes_what_the_source_forgot(
    tmp_path: Path, postgres_url: str, clock: FakeClock
) -> None:
    source = tmp_path / "source.db"
    with MemoryService.open(_settings(source), clock=clock) as memory:
        memory.remember("A note that stays")
        secret = memory.put({"content": "My bank PIN is 4821"}, biometrics={"heart_rate": 9.0})
    runner = CliRunner()
    first = runner.invoke(cli, ["--db", str(source), "migrate", "--to", postgres_url])
    assert first.exit_code == 0, first.output
    with MemoryService.open(_settings(source), clock=clock) as memory:
        memory.forget(secret[1].id)
    result = runner.invoke(cli, ["--db", str(source), "migrate", "--to", postgres_url, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["removed"]["memories"] == 1
    assert report["scrub"] == "done"
    with MemoryService.open(_settings(postgres_url), clock=clock) as memory:
        assert [hit.memory.content for hit in memory.search("bank PIN")] == []
        assert memory.stats().count == 1


def test_migrate_to_postgresql_again_never_queues_again_what_it_delivered(
    tmp_path: Path, postgres_url: str, clock: FakeClock
) -> None:
    source = tmp_path / "source.db"
    with MemoryService.open(_settings(source), clock=clock) as memory:
        memory.remind("ask Anna about the move", mention=["Anna"])
        memory.recollections.remember("Croissant with Léa", place={"lat": 48.8642, "lon": 2.3475})
        cue = memory.recollections.cue(
            text="Croissant with Léa; Anna called", place={"lat": 48.8642, "lon": 2.3475}
        )
        assert len(memory.recollections.sense(cue)) == 2
    copy = ["--db", str(source), "migrate", "--to", postgres_url, "--json"]
    assert CliRunner().invoke(cli, copy).exit_code == 0
    with MemoryService.open(_settings(postgres_url), clock=clock) as memory:
        assert len(memory.recollections.pending()) == 2
    again = CliRunner().invoke(cli, copy)
    assert again.exit_code == 0, again.output
    assert json.loads(again.output.strip().splitlines()[-1])["copied"]["pending_recollections"] == 0
    with MemoryService.open(_settings(postgres_url), clock=clock) as memory:
        assert memory.recollections.pending() == []
