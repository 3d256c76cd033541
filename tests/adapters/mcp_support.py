"""Helpers for the MCP tests: connect a real SDK client in-process, over stdio or HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from recalld.adapters.mcp_server import build_server
from recalld.config import Settings
from recalld.service import MemoryService

ALL_DIALECTS = "native,batbox,chaoscore,rover"
# A raw JSON-RPC initialize request, for tests that speak the protocol without the SDK.
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
Connect = Callable[..., AbstractAsyncContextManager[Client]]


def in_process(db: Path | str, dialects: str = ALL_DIALECTS, **overrides: Any) -> Connect:
    """A connector that runs the server inside this process (lifespan included)."""
    settings = Settings(
        db=db, synchronous="NORMAL", embedder="none", graph_extractor="rules", **overrides
    )
    server = build_server(lambda: MemoryService.open(settings), dialects.split(","))

    @asynccontextmanager
    async def connect(mode: str = "auto", **options: Any) -> AsyncIterator[Client]:
        async with Client(server, mode=mode, **options) as client:
            yield client

    return connect


def stdio(
    db: Path | str,
    dialects: str = ALL_DIALECTS,
    embedder: str = "none",
    environment: dict[str, str] | None = None,
) -> Connect:
    """A connector that launches `python -m recalld mcp` and talks over its stdin/stdout.

    The SDK passes the child only a few variables; ``PYTHONPATH`` is added (made
    absolute) so that a checkout tested as ``PYTHONPATH=src pytest`` serves its own
    code over stdio too, not the installed package's.
    """
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "recalld", "--db", str(db), "mcp", "--dialect", dialects],
        env={
            **_python_path(),
            "RECALLD_SYNCHRONOUS": "NORMAL",
            "RECALLD_EMBEDDER": embedder,
            "RECALLD_GRAPH_EXTRACTOR": "rules",
            **(environment or {}),
        },
    )

    @asynccontextmanager
    async def connect(mode: str = "auto", **options: Any) -> AsyncIterator[Client]:
        async with Client(parameters, mode=mode, **options) as client:
            yield client

    return connect


def _python_path() -> dict[str, str]:
    given = os.environ.get("PYTHONPATH")
    if not given:
        return {}
    paths = [str(Path(path).resolve()) for path in given.split(os.pathsep) if path]
    return {"PYTHONPATH": os.pathsep.join(paths)}


def http(url: str) -> Connect:
    """A connector to a running streamable-HTTP server.

    ``mode="legacy"`` forces the 2025 initialize handshake (with ``Mcp-Session-Id``
    sessions over HTTP); ``"auto"`` speaks 2026-07-28 when the server does.
    """

    @asynccontextmanager
    async def connect(mode: str = "auto", **options: Any) -> AsyncIterator[Client]:
        async with Client(url, mode=mode, **options) as client:
            yield client

    return connect


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_http_server(
    db: Path | str, dialects: str = ALL_DIALECTS
) -> tuple[subprocess.Popen[bytes], str]:
    """Start `recalld mcp --transport http` and wait (bounded) until it accepts connections."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "recalld",
            "--db",
            str(db),
            "mcp",
            "--transport",
            "http",
            "--port",
            str(port),
            "--dialect",
            dialects,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={
            **os.environ,
            "RECALLD_EMBEDDER": "none",
            "RECALLD_SYNCHRONOUS": "NORMAL",
            "RECALLD_GRAPH_EXTRACTOR": "rules",
        },
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"server exited: {process.stderr.read() if process.stderr else ''!r}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.05)
    stop(process)
    raise RuntimeError("the MCP HTTP server did not start within 30 s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server process and wait for it."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stderr is not None:
        process.stderr.close()


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    """Call a tool and return the raw result."""
    result = await client.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    return result


def text(result: CallToolResult) -> str:
    """The first text block of a result."""
    block = result.content[0]
    assert block.type == "text"
    return block.text


async def structured(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    """Call a tool that must succeed and return its structured content."""
    result = await call(client, tool, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


async def json_text(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    """Call a tool that must succeed and parse its text as JSON."""
    result = await call(client, tool, arguments)
    assert not result.is_error, text(result)
    return json.loads(text(result))
