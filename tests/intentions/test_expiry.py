"""An intention past its expiry reads ``expired`` on every surface, whatever has touched it.

Only a sense that finds it or the scheduler's step moves its row; listings, counts,
``get`` and the state filters read the state as of the clock, on both stores and
from every process sharing the database.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from recalld.adapters.cli import cli
from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.errors import NotFoundError
from recalld.service import MemoryService
from tests.adapters.mcp_support import in_process, structured
from tests.conftest import FakeClock
from tests.intentions.conftest import PHARMACY

# The intentions conftest's clock starts on 22 October 2026, 08:00 in Paris.
LATER = datetime(2026, 10, 22, 10, 30, tzinfo=UTC)  # 12:30 in Paris


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def shared(shared_settings: Settings, clock: FakeClock) -> Iterator[MemoryService]:
    """A service on each store (SQLite, then PostgreSQL with ``--postgres``)."""
    with MemoryService.open(shared_settings, clock=clock) as service:
        yield service


def _expiring(memory: MemoryService) -> tuple[str, str]:
    """A sensed intention and a daily one, both expiring at noon in Paris."""
    sensed = memory.remind("call Bob", mention=["Bob"], expires="2026-10-22T12:00")
    daily = memory.remind(
        "water the plants", at="2026-10-22T11:00", every="daily", expires="2026-10-22T12:00"
    )
    return sensed.id, daily.id


def test_intentions_past_expiry_read_expired_though_nothing_touched_them(
    shared: MemoryService, clock: FakeClock
) -> None:
    sensed, daily = _expiring(shared)
    kept = shared.remind("pick up the prescription", place=PHARMACY).id
    later = shared.remind("call Anna", mention=["Anna"], expires="2026-10-23T12:00").id
    assert shared.intentions.counts() == {"active": 4}
    clock.now = LATER  # no sense, no run_due since
    assert [item.id for item in shared.intentions()] == [later, kept]
    assert [item.id for item in shared.intentions(state="expired")] == [daily, sensed]
    assert [item.state for item in shared.intentions(state="all")] == [
        "active",
        "active",
        "expired",
        "expired",
    ]
    assert shared.intentions(state="done") == []
    assert shared.intentions.counts() == {"active": 2, "expired": 2}
    assert shared.intentions.get(sensed).state == "expired"
    assert shared.intentions.get(daily).state == "expired"
    # Cancelling one that already expired leaves it expired.
    assert shared.cancel(sensed).state == "expired"
    # A sense or the scheduler that then touches them changes nothing anyone reads.
    assert shared.intentions.run_due() == []
    assert shared.intentions.counts() == {"active": 2, "expired": 2}


def test_an_intention_whose_memory_ttl_passed_is_gone_everywhere(
    shared: MemoryService, clock: FakeClock
) -> None:
    # Its memory answered NotFound, but the intention was listed, counted, returned and
    # fired with the memory's text until the purge.
    sensed = shared.remind("call Xyloquent about the vault", mention=["Anna"]).id
    daily = shared.remind("water the plants", at="2026-10-22T11:00", every="daily").id
    kept = shared.remind("call Bob", mention=["Bob"]).id
    shared.update(sensed, ttl_seconds=60)
    shared.update(daily, ttl_seconds=60)
    clock.advance(61)
    assert [item.id for item in shared.intentions(state="all")] == [kept]
    assert shared.intentions.counts() == {"active": 1}
    for gone in (sensed, daily):
        with pytest.raises(NotFoundError):
            shared.intentions.get(gone)
        with pytest.raises(NotFoundError):
            shared.cancel(gone)
    clock.now = LATER  # the daily one is due: it does not fire
    assert shared.intentions.run_due() == []
    fired = shared.recollections.sense(shared.recollections.cue(text="Anna and Bob called"))
    assert [item.memory.id for item in fired if item.kind == "reminder"] == [kept]


def test_intentions_expiry_is_read_alike_by_every_process_sharing_the_database(
    shared: MemoryService, shared_settings: Settings
) -> None:
    sensed, _ = _expiring(shared)
    with MemoryService.open(shared_settings, clock=FakeClock(LATER)) as other:
        assert other.intentions() == []
        assert other.intentions.counts() == {"expired": 2}
        assert other.intentions.get(sensed).state == "expired"
    # The first process's clock is still before noon: to it they are active.
    assert shared.intentions.counts() == {"active": 2}
    assert shared.intentions.get(sensed).state == "active"


def _expired_on_the_real_clock(db: Path) -> str:
    """An intention created two hours ago that expired an hour ago (real clock)."""
    now = datetime.now(UTC).replace(microsecond=0)
    settings = Settings(db=db, synchronous="NORMAL", embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=FakeClock(now - timedelta(hours=2))) as memory:
        return memory.remind(
            "call Bob", mention=["Bob"], expires=(now - timedelta(hours=1)).isoformat()
        ).id


def test_intentions_expired_over_rest(tmp_path: Path) -> None:
    intention = _expired_on_the_real_clock(tmp_path / "rest.db")
    settings = Settings(
        db=tmp_path / "rest.db", synchronous="NORMAL", embedder="none", graph_extractor="rules"
    )
    with (
        MemoryService.open(settings) as service,
        TestClient(
            create_app(service, settings), client=("127.0.0.1", 40000), base_url="http://127.0.0.1"
        ) as client,
    ):
        assert client.get("/v1/intentions").json() == {"intentions": []}
        expired = client.get("/v1/intentions", params={"state": "expired"}).json()
        assert [item["id"] for item in expired["intentions"]] == [intention]
        assert client.get(f"/v1/intentions/{intention}").json()["state"] == "expired"


def test_intentions_expired_in_the_cli(tmp_path: Path) -> None:
    intention = _expired_on_the_real_clock(tmp_path / "cli.db")
    runner = CliRunner()
    db = str(tmp_path / "cli.db")
    active = runner.invoke(cli, ["--db", db, "intentions", "--json"], catch_exceptions=False)
    assert active.exit_code == 0, active.output
    assert json.loads(active.stdout) == {"intentions": []}
    expired = runner.invoke(
        cli, ["--db", db, "intentions", "--state", "expired", "--json"], catch_exceptions=False
    )
    assert expired.exit_code == 0, expired.output
    listed = json.loads(expired.stdout)["intentions"]
    assert [(item["id"], item["state"]) for item in listed] == [(intention, "expired")]


@pytest.mark.anyio
async def test_intentions_expired_over_mcp(tmp_path: Path) -> None:
    intention = _expired_on_the_real_clock(tmp_path / "mcp.db")
    async with in_process(tmp_path / "mcp.db", "native")() as client:
        assert (await structured(client, "intentions", {}))["intentions"] == []
        expired = await structured(client, "intentions", {"state": "expired"})
        assert [(item["id"], item["state"]) for item in expired["intentions"]] == [
            (intention, "expired")
        ]


@pytest.mark.parametrize("gone", ["expired", "forgotten"])
def test_a_queued_reminder_never_names_a_memory_that_expired_or_was_forgotten(
    shared: MemoryService, clock: FakeClock, gone: str
) -> None:
    # A reminder fired because a memory surfaced in the same sense is queued with the
    # reason it fired; once that memory expires (or is forgotten) while the reminder
    # waits, the reminder is still delivered, but nothing in it points at the memory.
    surfaced = shared.remember(
        "Ginger tea with Bob at the pharmacy counter",
        place=PHARMACY,
        tags=["errand"],
        ttl_seconds=3600,
    )
    shared.remind("ask Bob about the tea", mention=["Bob"])
    shared.remind("buy plasters", tags=["errand"])
    fired = shared.recollections.sense(shared.recollections.cue(place=PHARMACY))
    assert sorted(item.kind for item in fired) == ["recollection", "reminder", "reminder"]
    if gone == "expired":
        clock.advance(3600)
    else:
        shared.forget(surfaced.id)
    queued = shared.recollections.pending(drain=False)
    assert sorted(item.memory.content for item in queued) == [
        "ask Bob about the tea",
        "buy plasters",
    ]
    for item in queued:
        assert surfaced.id not in item.model_dump_json()
