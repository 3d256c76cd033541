"""``recalld migrate`` leaves out the memories whose TTL has passed, with their rows
(SQLite → SQLite, and SQLite → PostgreSQL with ``--postgres``)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.model import Filters
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.moving_support import copy_between, moving_settings, target_database


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    return target_database(request, tmp_path)


def _everything(db: Path | str, clock: FakeClock) -> list[str]:
    with MemoryService.open(moving_settings(db), clock=clock) as memory:
        page = memory.list_memories(filters=Filters(include_expired=True), limit=100)
        return sorted(item.content for item in page.memories)


def test_migrate_leaves_out_an_expired_memory_and_its_rows(
    tmp_path: Path, target: Path | str, clock: FakeClock
) -> None:
    source = tmp_path / "source.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.remember("Anna's door code is 4711", ttl_seconds=60)
        memory.remember("Anna moved to Paris")
        memory.new_worker().run_until_idle()  # vectors, jobs, graph rows for both
    clock.advance(3600)
    report = copy_between(source, target, clock=clock)
    assert report.complete, report
    assert report.copied["memories"] == 1
    assert report.expired["memories"] == 1
    assert report.expired["vectors"] == 1
    assert _everything(target, clock) == ["Anna moved to Paris"]


def test_migrate_again_removes_a_memory_that_expired_since_the_first_run(
    tmp_path: Path, clock: FakeClock
) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.remember("Anna's door code is 4711", ttl_seconds=60)
        memory.remember("Anna moved to Paris")
    assert copy_between(source, target, clock=clock).copied["memories"] == 2
    clock.advance(3600)
    report = copy_between(source, target, clock=clock)
    assert report.complete, report
    assert report.expired["memories"] == 1
    assert report.removed["memories"] == 1
    assert _everything(target, clock) == ["Anna moved to Paris"]
    # The CLI (on the wall clock, past the fake clock's 2026-10-25) says so in --json.
    result = CliRunner().invoke(
        cli, ["--db", str(source), "migrate", "--to", str(target), "--json"]
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output.strip().splitlines()[-1])
    assert printed["expired"]["memories"] == 1
    assert printed["copied"]["memories"] == 0


def test_migrate_again_keeps_a_memory_whose_ttl_the_target_renewed(
    tmp_path: Path, target: Path | str, clock: FakeClock
) -> None:
    # Expired in the source, but renewed in the target (in use since the first run): the
    # target's edit stays, as every edit made there does; it is not removed as expired.
    source = tmp_path / "source.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        code = memory.remember("Anna's door code is 4711", ttl_seconds=60)
    assert copy_between(source, target, clock=clock).copied["memories"] == 1
    clock.advance(30)
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        memory.update(code.id, ttl_seconds=86_400)
    clock.advance(3600)
    report = copy_between(source, target, clock=clock)
    assert report.complete, report
    assert report.removed["memories"] == 0
    assert report.expired["memories"] == 0
    assert report.skipped["memories"] == 1
    assert _everything(target, clock) == ["Anna's door code is 4711"]
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert memory.get(code.id).expires_at == clock.now - timedelta(seconds=3600 - 86_400)
