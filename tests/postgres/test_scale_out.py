"""Two `recalld serve` processes and two `recalld worker` processes on one PostgreSQL.

Writes through either server are recalled through the other (by keyword and by
vector, embedded by whichever worker claimed them), and an MCP subscriber on
one server is told of a core-memory change made through the other.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.server.subscriptions import ResourceUpdated

from tests.adapters.http_support import ServerProcess, server_environment
from tests.adapters.mcp_support import http

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ENVIRONMENT = {
    "RECALLD_EMBEDDER": "hashing",
    "RECALLD_GRAPH_EXTRACTOR": "rules",
    "RECALLD_WORKER_POLL_SECONDS": "0.2",
}
SETTLE_SECONDS = 90.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def cluster(postgres_url: str, tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    servers = [
        ServerProcess(
            postgres_url,
            log_path=tmp_path / f"server-{name}.log",
            arguments=("--mcp-dialect", "hermes,native"),
            **ENVIRONMENT,
        )
        for name in "ab"
    ]
    workers: list[subprocess.Popen[bytes]] = []
    try:
        for server in servers:
            server.start()
        for index in range(2):
            with (tmp_path / f"worker-{index}.log").open("ab") as log:
                workers.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "recalld", "--db", postgres_url, "worker"],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=server_environment(**ENVIRONMENT),
                    )
                )
        yield servers[0], servers[1]
    finally:
        for worker in workers:
            worker.terminate()
            worker.wait(timeout=30)
        for server in servers:
            server.stop()


def _settled(client: httpx.Client, workers: int) -> dict[str, Any]:
    """Wait (bounded) until the queue is empty and ``workers`` workers have reported;
    polling other processes' work (there is no event to wait on across processes)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        status: dict[str, Any] = client.get("/v1/status").json()
        idle = status["queue"]["queued"] == 0 and status["queue"]["running"] == 0
        if idle and len(status["workers"]) >= workers:
            return status
        assert time.monotonic() < deadline, f"the queue did not drain: {status['queue']}"
        time.sleep(0.2)


def test_two_servers_and_two_workers_share_one_database(
    cluster: tuple[ServerProcess, ServerProcess],
) -> None:
    first, second = cluster
    with (
        httpx.Client(base_url=first.base_url, timeout=30) as a,
        httpx.Client(base_url=second.base_url, timeout=30) as b,
    ):
        for index in range(12):
            writer = a if index % 2 == 0 else b
            response = writer.post(
                "/v1/memories",
                json={"content": f"Deploy note {index}: the canary runs in zone {index * 7}"},
            )
            assert response.status_code == 200, response.text
        written_by_a = a.post("/v1/memories", json={"content": "Léa's birthday is on the ninth"})
        assert written_by_a.status_code == 200
        # Two server threads and two worker processes share the queue.
        status = _settled(b, workers=4)
        assert sum(status["embeddings"].values()) == 13
        assert status["vector_backend"] == "database"
        assert len({worker["pid"] for worker in status["workers"]}) == 4
        hits = b.post("/v1/search", json={"query": "when is Léa's birthday?", "limit": 3}).json()
        assert hits[0]["memory"]["id"] == written_by_a.json()["id"]
        assert "vector" in hits[0]["backends"]
        assert "fts" in hits[0]["backends"]
        from_b = a.post("/v1/search", json={"query": "canary zone 77", "limit": 12}).json()
        assert any(hit["memory"]["content"].startswith("Deploy note 11") for hit in from_b)
        assert a.get("/v1/stats").json()["count"] == b.get("/v1/stats").json()["count"] == 13


@pytest.mark.anyio
async def test_subscriber_on_one_server_hears_a_change_made_on_the_other(
    cluster: tuple[ServerProcess, ServerProcess],
) -> None:
    first, second = cluster
    connect = http(f"{first.base_url}/mcp")
    async with (
        connect() as client,
        client.listen(resource_subscriptions=["memory://core"]) as subscription,
    ):
        async with httpx.AsyncClient(base_url=second.base_url, timeout=30) as other:
            response = await other.post(
                "/v1/core/memory", json={"action": "add", "content": "Changed on server B"}
            )
            assert response.status_code == 200, response.text
        with anyio.fail_after(20):
            event = await subscription.__anext__()
        assert isinstance(event, ResourceUpdated)
        assert event.uri == "memory://core"
        resource = await client.read_resource("memory://core")
        assert "Changed on server B" in resource.contents[0].text  # type: ignore[union-attr]
