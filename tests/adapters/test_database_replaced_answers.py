"""A server whose SQLite file was replaced under it (a backup restored while it ran) says
so: over REST, with or without tokens (authentication reads the token store first, and
said "the token store is unavailable"), and as an MCP tool error, without the file's path
(review of pass c68)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.service import MemoryService
from recalld.tokens import TokenRegistry
from tests.adapters.conftest import LOOPBACK
from tests.adapters.mcp_support import call, in_process, text
from tests.restore_support import restore_under

SAID = "moved, deleted or replaced while this server had it open"


@pytest.mark.parametrize("with_token", [False, True], ids=["no token", "token"])
def test_rest_says_the_database_was_replaced_and_to_restart(
    tmp_path: Path, with_token: bool
) -> None:
    db = tmp_path / "live.db"
    settings = Settings(db=db, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.remember("before the restore")
        headers = {}
        if with_token:
            issued = TokenRegistry.for_store(service.store).create("agent", {"*": "read+write"})
            headers = {"Authorization": f"Bearer {issued.token}"}
        app = create_app(service, settings)
        with TestClient(app, client=LOOPBACK, base_url="http://127.0.0.1") as client:
            assert client.get("/v1/memories", headers=headers).status_code == 200
            restore_under(db)
            for response in (
                client.get("/v1/memories", headers=headers),
                client.post("/v1/search", json={"query": "restore"}, headers=headers),
            ):
                assert response.status_code == 503
                error = response.json()["error"]
                assert error["type"] == "storage_error", error
                assert SAID in error["message"], error
                assert "restart" in error["message"]
                assert str(tmp_path) not in response.text  # the path is the log's


@pytest.mark.anyio
async def test_an_mcp_tool_says_the_database_was_replaced_and_to_restart(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    async with in_process(db, "native")() as client:
        assert not (await call(client, "remember", {"content": "before the restore"})).is_error
        restore_under(db)
        result = await call(client, "recall", {"query": "restore"})
    assert result.is_error
    error = json.loads(text(result))["error"]
    assert error["type"] == "storage_error", error
    assert SAID in error["message"], error
    assert "restart" in error["message"]
    assert str(tmp_path) not in text(result)


@pytest.mark.anyio
async def test_the_resource_watcher_stops_once_the_database_was_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # It logged "could not check memory://core for changes ... replaced" every 0.25 s for
    # as long as the server ran (for ever over stdio, which does not exit on it).
    import anyio
    from mcp.server.subscriptions import InMemorySubscriptionBus

    from recalld.adapters.dialects.base import McpState, ResourceSpec
    from recalld.adapters.mcp_server import _watch
    from recalld.errors import DatabaseReplacedError

    def replaced(_service: MemoryService) -> int:
        raise DatabaseReplacedError("live.db was moved, deleted or replaced")

    spec = ResourceSpec("memory://core", "core", "core", lambda _service: "", replaced)
    settings = Settings(db=tmp_path / "m.db", embedder="none")
    with (
        MemoryService.open(settings) as service,
        caplog.at_level(logging.WARNING, logger="recalld"),
        anyio.fail_after(60),
    ):
        await _watch([spec], McpState(service), InMemorySubscriptionBus())
    said = [record for record in caplog.records if "moved, deleted or replaced" in record.message]
    assert [record.levelno for record in said] == [logging.ERROR]
