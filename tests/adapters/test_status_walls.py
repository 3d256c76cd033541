"""A caller confined to some namespaces learns nothing of another namespace's activity
from ``status`` and ``stats``: what counts the whole database or process (pending
scrubs, each worker's state and job counts, the loaded vector index, the file's size)
is null for it, in the library (``confined=True``), over REST and over MCP, on both
stores; a caller of every namespace still sees those figures move.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.service import MemoryService
from recalld.tokens import TokenRegistry
from recalld.worker import Worker
from tests.adapters.http_support import ServerProcess
from tests.conftest import FakeClock
from tests.scrub_support import old_snapshot


@pytest.fixture
def walled_settings(any_database: Path | str) -> Settings:
    # A real (hashing) embedder, so the worker has jobs to count and status an index.
    return Settings(
        db=any_database,
        synchronous="NORMAL",
        embedder="hashing",
        graph_extractor="rules",
        scrub_wait_seconds=0.2,
    )


@pytest.fixture
def walled(walled_settings: Settings, clock: FakeClock) -> Iterator[MemoryService]:
    with MemoryService.open(walled_settings, clock=clock) as service:
        yield service


def _alpha_at_rest(service: MemoryService) -> Worker:
    """Alpha's memory embedded by worker ``w1`` (kept: its counts grow with later runs)."""
    service.remember("alpha's own note about the garden", namespace="alpha")
    worker = service.new_worker(worker_id="w1")
    worker.run_until_idle()
    service.search("garden", namespace="alpha")  # the process loads its index
    return worker


@contextmanager
def _bob_busy(service: MemoryService, worker: Worker, database: Path | str) -> Iterator[None]:
    """Bob writes and forgets while an old snapshot keeps the scrub pending, and ``w1``
    embeds his memories; the block runs while the scrub is still pending."""
    receipts = [
        service.remember(f"bob's private note number {index}", namespace="bob")
        for index in range(3)
    ]
    assert worker.run_until_idle().processed == 4  # alpha's one, then bob's three
    with old_snapshot(database):
        assert service.forget(receipts[0].id, namespace="bob").scrub == "pending"
        yield


def test_library_confined_status_and_stats_do_not_move_with_another_namespace(
    walled: MemoryService, walled_settings: Settings
) -> None:
    worker = _alpha_at_rest(walled)
    status_before = walled.status(["alpha"], confined=True)
    stats_before = walled.stats(["alpha"], confined=True)
    admin_before = walled.status(["alpha"])
    assert (status_before.pending_scrubs, stats_before.pending_scrubs) == (None, None)
    assert stats_before.db_size_bytes is None
    assert [(w.state, w.processed, w.failed) for w in status_before.workers] == [(None, None, None)]
    assert status_before.index is not None
    assert (status_before.index.vectors, status_before.index.loaded) == (1, None)
    assert admin_before.pending_scrubs == 0
    assert [w.processed for w in admin_before.workers] == [1]

    with _bob_busy(walled, worker, walled_settings.db):
        assert walled.status(["alpha"], confined=True) == status_before
        assert walled.stats(["alpha"], confined=True) == stats_before
        # Everyone else's figures are still there for a caller of every namespace.
        admin = walled.status(["alpha"])
        assert admin.pending_scrubs == 1
        assert [w.processed for w in admin.workers] == [4]
        assert walled.stats(["alpha"]).pending_scrubs == 1


def _token(service: MemoryService, scopes: dict[str, Any]) -> dict[str, str]:
    issued = TokenRegistry.for_store(service.store).create("test", scopes)
    return {"Authorization": f"Bearer {issued.token}", "X-Recalld-Namespace": "alpha"}


def test_rest_status_and_stats_of_a_namespace_token_do_not_move_with_another_namespace(
    walled: MemoryService, walled_settings: Settings
) -> None:
    worker = _alpha_at_rest(walled)
    alpha = _token(walled, {"alpha": "read+write"})
    admin = _token(walled, {"*": "read"})
    with TestClient(
        create_app(walled, walled_settings),
        client=("127.0.0.1", 40000),
        base_url="http://127.0.0.1",
    ) as client:

        def read(path: str, headers: dict[str, str]) -> Any:
            response = client.get(path, headers=headers)
            assert response.status_code == 200, response.text
            return response.json()

        status_before = read("/v1/status", alpha)
        stats_before = read("/v1/stats", alpha)
        assert status_before["pending_scrubs"] is None
        assert stats_before["pending_scrubs"] is None
        assert stats_before["db_size_bytes"] is None
        assert [w["processed"] for w in status_before["workers"]] == [None]
        assert read("/v1/status", admin)["pending_scrubs"] == 0

        with _bob_busy(walled, worker, walled_settings.db):
            assert read("/v1/status", alpha) == status_before
            assert read("/v1/stats", alpha) == stats_before
            seen = read("/v1/status", admin)
            assert seen["pending_scrubs"] == 1
            assert [w["processed"] for w in seen["workers"]] == [4]
            assert read("/v1/stats", admin)["pending_scrubs"] == 1
            assert read("/v1/stats", admin)["db_size_bytes"] > 0


async def _mcp_figures(url: str, token: str) -> tuple[Any, Any]:
    import httpx2  # the MCP SDK's HTTP client library
    from mcp.client.streamable_http import streamable_http_client

    from tests.adapters.mcp_support import structured

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http_client,
        Client(streamable_http_client(url, http_client=http_client)) as mcp,
    ):
        stats = await structured(mcp, "stats", {})
        status = await structured(mcp, "MemoryStatus", {})
    # The server's own worker thread beats on the wall clock (the test's worker on the test's
    # clock): their ages, and so their order, are time, not activity.
    for worker in status["workers"]:
        worker.pop("age_seconds")
    status["workers"].sort(key=lambda worker: worker["id"])
    return stats, status


def test_mcp_stats_and_status_of_a_namespace_token_do_not_move_with_another_namespace(
    walled_settings: Settings, tmp_path: Path
) -> None:
    # On the wall clock: the server's worker thread prunes heartbeats older than a day.
    with MemoryService.open(walled_settings) as service:
        worker = _alpha_at_rest(service)
        registry = TokenRegistry.for_store(service.store)
        alpha = registry.create("alpha", {"alpha": "read+write"}).token
        admin = registry.create("admin", {"*": "read+write"}).token
        running = ServerProcess(
            walled_settings.db,
            log_path=tmp_path / "server.log",
            arguments=("--mcp-dialect", "native", "--mcp-dialect", "batbox"),
            RECALLD_NAMESPACE="alpha",
        ).start()
        try:
            url = f"{running.base_url}/mcp"
            stats_before, status_before = anyio.run(_mcp_figures, url, alpha)
            assert "pending_scrubs" not in stats_before  # null: left out of the compact answer
            assert status_before["pending_scrubs"] is None
            assert "w1" in [item["id"] for item in status_before["workers"]]
            _, admin_status = anyio.run(_mcp_figures, url, admin)
            assert admin_status["pending_scrubs"] == 0
            with _bob_busy(service, worker, walled_settings.db):
                assert anyio.run(_mcp_figures, url, alpha) == (stats_before, status_before)
                admin_stats, admin_status = anyio.run(_mcp_figures, url, admin)
                assert admin_stats["pending_scrubs"] == 1
                assert admin_status["pending_scrubs"] == 1
        finally:
            running.stop()


def test_a_confined_status_does_not_say_whether_another_namespace_searched(
    walled: MemoryService,
) -> None:
    # The index's dimension is read from the loaded index: it appeared with bob's first
    # vector recall (review 53a).
    walled.remember("alpha's own note about the garden", namespace="alpha")
    walled.remember("bob's note about the boat", namespace="bob")
    walled.new_worker(worker_id="w1").run_until_idle()
    before = walled.status(["alpha"], confined=True)
    unconfined = walled.status(["alpha"]).index
    walled.search("boat", namespace="bob", mode="vector")
    if walled.store.vector_search is None:  # SQLite: this process loaded its index
        assert walled.status(["alpha"]).index != unconfined
    assert walled.status(["alpha"], confined=True) == before
