"""batbox's transcript is per caller: at ``recalld serve``'s ``/mcp`` two tokens are two
sessions even when they run the same client from the same address (the sessionless
2026-07-28 protocol keys the transcript by client identity), as an ``Mcp-Session-Id``
answers only the token that opened it.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.tokens import TokenRegistry
from tests.adapters.http_support import ServerProcess
from tests.adapters.mcp_support import structured


async def _remember(url: str, token: str, content: str) -> None:
    import httpx2  # the MCP SDK's HTTP client library
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http_client,
        Client(streamable_http_client(url, http_client=http_client)) as mcp,
    ):
        await structured(mcp, "MemoryRemember", {"content": content})


def test_two_tokens_of_one_client_and_address_get_two_transcripts(tmp_path: Path) -> None:
    settings = Settings(db=tmp_path / "t.db", embedder="none", graph_extractor="rules")
    with MemoryService.open(settings) as service:
        registry = TokenRegistry.for_store(service.store)
        first = registry.create("first agent", {"alpha": "read+write"}).token
        second = registry.create("second agent", {"alpha": "read+write"}).token
    running = ServerProcess(
        settings.db,
        log_path=tmp_path / "server.log",
        arguments=("--mcp-dialect", "batbox"),
        RECALLD_NAMESPACE="alpha",
    ).start()
    try:
        url = f"{running.base_url}/mcp"
        anyio.run(_remember, url, first, "the first agent's own note")
        anyio.run(_remember, url, first, "the first agent's second note")
        anyio.run(_remember, url, second, "the second agent's own note")
    finally:
        running.stop()
    with MemoryService.open(settings) as service:
        sources = {
            memory.content: memory.source
            for memory in service.list_memories(namespace="alpha").memories
        }
    assert len(sources) == 3
    # One caller keeps its transcript (the same client, address and token)...
    assert sources["the first agent's own note"] == sources["the first agent's second note"]
    # ...and another token's writes are not filed in it.
    assert sources["the second agent's own note"] != sources["the first agent's own note"]
    assert all(str(source).startswith("recalld://transcript/") for source in sources.values())
