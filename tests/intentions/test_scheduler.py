"""The clock-driven scheduler: it wakes at the next due time, and two processes never
deliver one firing twice."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import apsw
import httpx
import pytest

from recalld.config import Settings
from recalld.recollection import Recollection
from recalld.service import MemoryService
from tests.adapters.http_support import ServerProcess
from tests.conftest import FakeClock


@pytest.fixture
def scheduled(db_path: Path, clock: FakeClock) -> Iterator[MemoryService]:
    # A long poll: the thread must wake because of the due time or wake(), not by polling.
    settings = Settings(
        db=db_path, synchronous="NORMAL", embedder="none", zone="UTC", scheduler_poll_seconds=3600
    )
    with MemoryService.open(settings, clock=clock) as service:
        yield service


def test_scheduler_waits_until_the_next_due_time_bounded_by_the_poll(
    scheduled: MemoryService, clock: FakeClock
) -> None:
    scheduler = scheduled.intentions.start_scheduler()
    assert scheduler.wait_seconds(clock.now) == 3600  # nothing due: the poll bound
    scheduled.remind("stand up", at=(clock.now + timedelta(seconds=90)).isoformat())
    assert scheduler.wait_seconds(clock.now) == 90
    scheduled.remind("stretch", at=(clock.now + timedelta(seconds=30)).isoformat())
    assert scheduler.wait_seconds(clock.now) == 30
    assert scheduler.wait_seconds(clock.now + timedelta(seconds=45)) == 0  # overdue


def test_scheduler_thread_fires_when_the_clock_reaches_the_due_time(
    scheduled: MemoryService, clock: FakeClock
) -> None:
    fired: list[Recollection] = []
    done = threading.Event()

    def heard(batch: list[Recollection]) -> None:
        fired.extend(batch)
        done.set()

    scheduler = scheduled.intentions.start_scheduler(on_fired=heard)
    assert scheduler.running
    scheduled.remind("send the report", at=(clock.now + timedelta(minutes=5)).isoformat())
    assert not done.wait(0.2)  # not yet due on the test's clock
    clock.advance(5 * 60)
    scheduler.wake()
    assert done.wait(10)
    assert [item.memory.content for item in fired] == ["send the report"]
    assert [item.kind for item in scheduled.recollections.pending()] == ["reminder"]
    scheduled.intentions.close()
    assert not scheduler.running


def test_scheduler_thread_is_started_by_the_setting_and_stopped_on_close(
    db_path: Path, clock: FakeClock
) -> None:
    settings = Settings(db=db_path, synchronous="NORMAL", embedder="none", scheduler_thread=True)
    service = MemoryService.open(settings, clock=clock)
    scheduler = service.intentions.scheduler
    assert scheduler is not None
    assert scheduler.running
    service.close()
    assert not scheduler.running


def _wait_for(condition: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.1)  # polling other processes' database: there is no event to wait on


@pytest.mark.slow
def test_two_server_processes_deliver_each_firing_exactly_once(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    servers = [
        # One occurrence a second makes several within the test (60 s is the default gap).
        ServerProcess(
            db, RECALLD_SYNCHRONOUS="NORMAL", RECALLD_INTENTION_MIN_RECURRENCE_SECONDS="1"
        ).start()
        for _ in range(2)
    ]
    try:
        with (
            httpx.Client(base_url=servers[0].base_url, timeout=30) as first,
            httpx.Client(base_url=servers[1].base_url, timeout=30) as second,
        ):
            _exactly_once(first, second, servers)
    finally:
        for server in servers:
            server.stop()


def _exactly_once(first: httpx.Client, second: httpx.Client, servers: list[ServerProcess]) -> None:
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)
    once_ids = []
    for index in range(8):
        response = first.post(
            "/v1/intentions",
            json={"action": f"once {index}", "at": start.isoformat(), "zone": "Europe/Paris"},
        )
        assert response.status_code == 201, response.text
        once_ids.append(response.json()["id"])
    every_second = second.post(
        "/v1/intentions",
        json={
            "action": "every second",
            "at": start.isoformat(),
            "every": "FREQ=SECONDLY;INTERVAL=1",
            "expires": (start + timedelta(seconds=5)).isoformat(),
        },
    )
    assert every_second.status_code == 201, every_second.text
    recurring = every_second.json()["id"]
    assert every_second.json()["next_due"] == start.isoformat().replace("+00:00", "Z")

    def all_done() -> bool:
        active = first.get("/v1/intentions").json()["intentions"]
        return not active

    _wait_for(all_done, 60)
    queued = second.get("/v1/recollections/pending", params={"drain": "false", "limit": 1000})
    items = queued.json()
    assert all(item["kind"] == "reminder" for item in items)
    by_intention: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_intention.setdefault(item["memory"]["id"], []).append(item)
    for intention_id in once_ids:
        assert len(by_intention[intention_id]) == 1, by_intention[intention_id]
    occurrences = [item["reminder"]["due_at"] for item in by_intention[recurring]]
    assert 1 <= len(occurrences) <= 5
    assert len(occurrences) == len(set(occurrences)), occurrences  # no occurrence twice
    stored = first.get(f"/v1/intentions/{recurring}").json()
    assert stored["fire_count"] == len(occurrences)
    assert stored["state"] == "done"
    logs = "".join(server.log() for server in servers)
    assert "Traceback" not in logs


def test_a_step_with_nothing_due_takes_no_write_lock(
    scheduled: MemoryService, clock: FakeClock, db_path: Path
) -> None:
    # Review of pass a64: every poll fired in a write transaction, due or not, so with
    # another process holding the write lock (a long import) each poll waited out
    # RECALLD_LOCK_RETRY_SECONDS and logged "intention scheduler step failed".
    scheduled.remind("stand up", at=(clock.now + timedelta(minutes=5)).isoformat())
    scheduler = scheduled.intentions.start_scheduler()
    other = apsw.Connection(str(db_path))  # another process, in the middle of a write
    other.execute("BEGIN IMMEDIATE")
    stepped: list[list[Recollection]] = []
    ended = threading.Event()

    def step() -> None:
        try:
            stepped.append(scheduler.step())
        finally:
            ended.set()

    try:
        threading.Thread(target=step, daemon=True).start()
        # A lock wait is busy_timeout (5 s) plus RECALLD_LOCK_RETRY_SECONDS (30 s) here.
        assert ended.wait(timeout=120), "the step waited for the write lock"
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert stepped == [[]]
    clock.advance(5 * 60)  # now due: fired as before
    assert [item.memory.content for item in scheduler.step()] == ["stand up"]
