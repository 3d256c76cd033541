"""The MCP server's own protocol surface: subscriptions and prompts, as clients use them."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from mcp import MCPError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import INVALID_PARAMS

from tests.adapters.mcp_support import in_process

pytestmark = pytest.mark.anyio


async def test_mcp_server_refuses_a_subscription_to_no_resource(tmp_path: Path) -> None:
    # A subscription to a URI the server does not serve would never be notified (the
    # client waits forever) and was kept for the life of the server, whatever its size.
    async with in_process(tmp_path / "subscribe.db", "native")(mode="legacy") as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            for request in (client.subscribe_resource, client.unsubscribe_resource):
                with pytest.raises(MCPError) as raised:
                    await request("memory://no-such-resource")
                assert raised.value.code == INVALID_PARAMS
                assert "memory://no-such-resource" in raised.value.error.message
                assert "memory://core" in raised.value.error.message  # what it may subscribe to
            await client.subscribe_resource("memory://core")
            await client.unsubscribe_resource("memory://core")


async def test_mcp_server_refuses_a_listen_for_no_resource(tmp_path: Path) -> None:
    # The 2026-07-28 listen acknowledged any URI and then never said anything about it:
    # a client waited for ever on a typo, where resources/subscribe refuses it.
    async with in_process(tmp_path / "listen.db", "native")() as client:
        with pytest.raises(MCPError) as raised:
            async with client.listen(resource_subscriptions=["memory://core", "memory://cor"]):
                pass  # pragma: no cover - refused before the stream opens
        assert raised.value.code == INVALID_PARAMS
        assert raised.value.error.message.startswith("uri: 'memory://cor' is not a resource")
        async with client.listen(resource_subscriptions=["memory://core"]) as subscription:
            assert subscription is not None


async def test_mcp_server_without_resources_refuses_a_listen(tmp_path: Path) -> None:
    # A batbox-only server has no resource, yet serves listen: it acknowledged
    # memory://core and the client waited for a change that could never come.
    async with in_process(tmp_path / "batbox.db", "batbox")() as client:
        with pytest.raises(MCPError) as raised:
            async with client.listen(resource_subscriptions=["memory://core"]):
                pass  # pragma: no cover - refused before the stream opens
        assert raised.value.code == INVALID_PARAMS
        assert raised.value.error.message == (
            "uri: 'memory://core' is not a resource of this server (it has none)"
        )


async def test_mcp_server_repeats_a_huge_subscription_uri_cut(tmp_path: Path) -> None:
    huge = "memory://" + "x" * 100_000
    async with in_process(tmp_path / "huge.db", "native")(mode="legacy") as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            with pytest.raises(MCPError) as raised:
                await client.subscribe_resource(huge)
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.error.message.startswith("uri: 'memory://xxxx")
    assert "(100009 characters) is not a resource" in raised.value.error.message
    assert len(raised.value.error.message) < 300
    assert len(str(raised.value.error.data)) < 300


async def test_mcp_server_refuses_a_read_of_no_resource_naming_it_cut(tmp_path: Path) -> None:
    # The SDK answered "Unknown resource: <the whole URI>" (a megabyte one twice, in the
    # message and its data); a read is refused as a subscription is, listing what there is.
    huge = "memory://" + "x" * 100_000
    async with in_process(tmp_path / "read.db", "native")() as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(huge)
        assert raised.value.code == INVALID_PARAMS
        message = raised.value.error.message
        assert "(100009 characters) is not a resource of this server (memory://core" in message
        assert len(message) + len(str(raised.value.error.data)) < 600
        for near in ("memory://core/", "memory://CORE", "memory://core?namespace=other"):
            with pytest.raises(MCPError) as raised:
                await client.read_resource(near)
            assert raised.value.code == INVALID_PARAMS
        assert "MEMORY [" in (await client.read_resource("memory://core")).contents[0].text  # type: ignore[union-attr]


async def test_mcp_server_refuses_an_unknown_prompt_as_the_clients_error(tmp_path: Path) -> None:
    # The SDK raised it inside the handler: code -32603 "Internal server error", and the
    # server logged a crash, for a client's typo.
    huge = "p" * 5_000
    for dialects, listed in (("native", "(core_memory)"), ("batbox", "(it has none)")):
        async with in_process(tmp_path / f"{dialects}.db", dialects)() as client:
            for name in ("core-memory", huge):
                with pytest.raises(MCPError) as raised:
                    await client.get_prompt(name)
                assert raised.value.code == INVALID_PARAMS
                message = raised.value.error.message
                assert message.startswith("name: 'p" if name == huge else "name: 'core-memory'")
                assert message.endswith(f"is not a prompt of this server {listed}")
                assert len(message) < 300
    async with in_process(tmp_path / "argument.db", "native")() as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("core_memory", {huge: "x"})  # an argument's name, cut
        assert raised.value.code == INVALID_PARAMS
        assert "... (5000 characters)" in raised.value.error.message
        assert len(raised.value.error.message) < 300


async def test_mcp_server_names_the_argument_a_prompt_does_not_take(tmp_path: Path) -> None:
    # The prompts take no arguments; one given used to fail as code 0 "Error rendering
    # prompt core_memory", which says neither what was wrong nor that it was the client.
    connect = in_process(tmp_path / "prompt.db", "native")
    for mode in ("auto", "legacy"):
        async with connect(mode=mode) as client:
            with pytest.raises(MCPError) as raised:
                await client.get_prompt("core_memory", {"topic": "travel"})
            assert raised.value.code == INVALID_PARAMS, mode
            assert "topic" in raised.value.error.message
            assert "takes no arguments" in raised.value.error.message
            rendered = await client.get_prompt("core_memory")
        assert "MEMORY" in rendered.messages[0].content.text  # type: ignore[union-attr]


async def test_mcp_server_refuses_an_unknown_tool_as_a_protocol_error(tmp_path: Path) -> None:
    # MCP (2024-11-05 to 2026-07-28) lists unknown tools among the protocol errors, its
    # example -32602 "Unknown tool: ..."; the SDK answered a tool result with isError.
    huge = "t" * 5_000
    async with in_process(tmp_path / "tools.db", "native")() as client:
        for name in ("rememberr", huge):
            with pytest.raises(MCPError) as raised:
                await client.call_tool(name, {"content": "never stored"})
            assert raised.value.code == INVALID_PARAMS
            message = raised.value.error.message
            assert message.startswith(f"Unknown tool: {name[:10]!r}"[:24])
            assert "params.name" in message
            assert len(message) < 300
        assert (await client.call_tool("remember", {"content": "stored"})).is_error is False


async def test_mcp_server_refuses_a_cursor_it_never_gave(tmp_path: Path) -> None:
    # MCP: "Invalid cursors SHOULD result in an error with code -32602". Every list is one
    # whole page (no nextCursor), so any cursor is invalid; the SDK ignored it and answered
    # the first page again, as if the cursor had been read.
    async with in_process(tmp_path / "cursor.db", "native")() as client:
        listings = (
            client.list_tools,
            client.list_resources,
            client.list_resource_templates,
            client.list_prompts,
        )
        for listing in listings:
            with pytest.raises(MCPError) as raised:
                await listing(cursor="stale-" + "c" * 5_000)
            assert raised.value.code == INVALID_PARAMS
            message = raised.value.error.message
            assert "params.cursor: 'stale-" in message
            assert "in one page" in message
            assert len(message) < 300
        tools = await client.list_tools()
        assert tools.next_cursor is None
        assert any(tool.name == "remember" for tool in tools.tools)
