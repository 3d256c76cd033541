"""Fixtures for the adapter tests: the anyio backend, MCP servers on every transport, and the
REST app in process."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.service import MemoryService
from tests.adapters.mcp_support import (
    Connect,
    http,
    in_process,
    start_http_server,
    stdio,
    stop,
)

OpenTransport = Callable[[str], tuple[Connect, Path | str]]
# Every dialect's MCP tests also run on PostgreSQL (pytest --postgres): in-process, and
# the `recalld mcp --transport http` server on a postgresql:// URL.
TRANSPORTS = [
    "in_process",
    "stdio",
    "http",
    pytest.param("postgres-in_process", marks=pytest.mark.postgres),
    pytest.param("postgres-http", marks=pytest.mark.postgres),
]


# Where an in-process request comes from: this machine, as a tokenless server trusts.
LOOPBACK = ("127.0.0.1", 40000)


@pytest.fixture
def client(service: MemoryService, settings: Settings) -> Iterator[TestClient]:
    """The REST app in process (Starlette's test client), called from loopback and addressed
    to 127.0.0.1. Test files that talk to a server process define their own ``client``."""
    with TestClient(
        create_app(service, settings), client=LOOPBACK, base_url="http://127.0.0.1"
    ) as opened:
        yield opened


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=TRANSPORTS)
def mcp_transport(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenTransport]:
    """Open the given dialects on one transport (in-process, stdio subprocess, HTTP server),
    over a SQLite file or a PostgreSQL database."""
    started: list[subprocess.Popen[bytes]] = []
    transport: str = request.param
    db: Path | str = tmp_path / "mcp.db"
    if transport.startswith("postgres-"):
        db = request.getfixturevalue("postgres_url")
        transport = transport.removeprefix("postgres-")

    def open_transport(dialects: str) -> tuple[Connect, Path | str]:
        if transport == "in_process":
            return in_process(db, dialects), db
        if transport == "stdio":
            return stdio(db, dialects), db
        process, url = start_http_server(db, dialects)
        started.append(process)
        return http(url), db

    yield open_transport
    for process in started:
        stop(process)
