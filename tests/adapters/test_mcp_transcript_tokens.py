"""batbox's transcript is per caller: at ``recalld serve``'s ``/mcp`` two tokens are two
sessions even when they run the same client from the same address (the sessionless
2026-07-28 protocol keys the transcript by client identity) or send the same
``Mcp-Session-Id`` header, as a session answers only the token that opened it.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
from mcp import Client

from recalld.adapters.dialects.base import TRANSCRIPT_SESSIONS_KEPT, TranscriptRegistry
from recalld.config import Settings
from recalld.service import MemoryService
from recalld.tokens import TokenRegistry
from tests.adapters.http_support import ServerProcess
from tests.adapters.mcp_support import structured


async def _remember(url: str, token: str, content: str, session_id: str | None = None) -> None:
    import httpx2  # the MCP SDK's HTTP client library
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"}
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    async with (
        httpx2.AsyncClient(headers=headers) as http_client,
        Client(streamable_http_client(url, http_client=http_client)) as mcp,
    ):
        await structured(mcp, "MemoryRemember", {"content": content})


def _served(tmp_path: Path, writes: list[tuple[str, str, str | None]]) -> dict[str, str | None]:
    """Each ``(token name, content, Mcp-Session-Id)`` written with batbox's MemoryRemember
    at ``/mcp`` by one of two tokens of namespace alpha; the source each content got."""
    settings = Settings(db=tmp_path / "t.db", embedder="none", graph_extractor="rules")
    with MemoryService.open(settings) as service:
        registry = TokenRegistry.for_store(service.store)
        tokens = {
            name: registry.create(name, {"alpha": "read+write"}).token
            for name in ("first", "second")
        }
    running = ServerProcess(
        settings.db,
        log_path=tmp_path / "server.log",
        arguments=("--mcp-dialect", "batbox"),
        RECALLD_NAMESPACE="alpha",
    ).start()
    try:
        url = f"{running.base_url}/mcp"
        for name, content, session_id in writes:
            anyio.run(_remember, url, tokens[name], content, session_id)
    finally:
        running.stop()
    with MemoryService.open(settings) as service:
        listed = service.list_memories(namespace="alpha").memories
    return {memory.content: memory.source for memory in listed}


def test_a_session_id_header_picks_no_other_tokens_transcript(tmp_path: Path) -> None:
    # The sessionless protocol has no session: the header is the client's own text, so a
    # token that sent another's (or any shared) value was filed in that one's transcript.
    sources = _served(
        tmp_path,
        [
            ("first", "the first agent's note", "shared-session"),
            ("first", "the first agent's next note", "shared-session"),
            ("second", "the second agent's note", "shared-session"),
        ],
    )
    assert sources["the first agent's note"] == sources["the first agent's next note"]
    assert sources["the second agent's note"] != sources["the first agent's note"]


def test_two_tokens_of_one_client_and_address_get_two_transcripts(tmp_path: Path) -> None:
    sources = _served(
        tmp_path,
        [
            ("first", "the first agent's own note", None),
            ("first", "the first agent's second note", None),
            ("second", "the second agent's own note", None),
        ],
    )
    assert len(sources) == 3
    # One caller keeps its transcript (the same client, address and token)...
    assert sources["the first agent's own note"] == sources["the first agent's second note"]
    # ...and another token's writes are not filed in it.
    assert sources["the second agent's own note"] != sources["the first agent's own note"]
    assert all(str(source).startswith("recalld://transcript/") for source in sources.values())


def _header_context(session_id: str) -> Any:
    """A request context as the registry reads it: an ``Mcp-Session-Id`` and no caller."""
    return SimpleNamespace(
        headers={"mcp-session-id": session_id},
        request_context=SimpleNamespace(request=None, session=None),
    )


def test_the_transcript_registry_keeps_a_bounded_number_of_sessions() -> None:
    # Every new Mcp-Session-Id (the client's own text) added an entry for the process's
    # life: a script sending a new one per request grew the server's memory without end
    # (review of pass c62). The sessions that wrote last are kept.
    registry = TranscriptRegistry()
    first = registry.uri_for(_header_context("session-0"))
    quiet = registry.uri_for(_header_context("session-1"))
    for number in range(2, TRANSCRIPT_SESSIONS_KEPT):
        registry.uri_for(_header_context(f"session-{number}"))
    assert registry.uri_for(_header_context("session-0")) == first  # kept, and now the newest
    last = registry.uri_for(_header_context(f"session-{TRANSCRIPT_SESSIONS_KEPT}"))
    # One past the cap: the session quiet longest (session-1) is let go, no other.
    assert registry.uri_for(_header_context("session-0")) == first
    assert registry.uri_for(_header_context(f"session-{TRANSCRIPT_SESSIONS_KEPT}")) == last
    renewed = registry.uri_for(_header_context("session-1"))
    assert renewed.startswith("recalld://transcript/")
    assert renewed not in {first, quiet, last}
    # A long header is one more session, as a short one is.
    long_one = registry.uri_for(_header_context("x" * 100_000))
    assert registry.uri_for(_header_context("x" * 100_000)) == long_one
