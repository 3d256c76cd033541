"""Fixtures for the adapter tests: the anyio backend and MCP servers on every transport."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.adapters.mcp_support import (
    Connect,
    http,
    in_process,
    start_http_server,
    stdio,
    stop,
)

OpenTransport = Callable[[str], tuple[Connect, Path]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["in_process", "stdio", "http"])
def mcp_transport(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenTransport]:
    """Open the given dialects on one transport (in-process, stdio subprocess, HTTP server)."""
    started: list[subprocess.Popen[bytes]] = []

    def open_transport(dialects: str) -> tuple[Connect, Path]:
        db = tmp_path / "mcp.db"
        if request.param == "in_process":
            return in_process(db, dialects), db
        if request.param == "stdio":
            return stdio(db, dialects), db
        process, url = start_http_server(db, dialects)
        started.append(process)
        return http(url), db

    yield open_transport
    for process in started:
        stop(process)
