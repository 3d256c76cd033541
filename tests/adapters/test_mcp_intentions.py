"""MCP: the native tools remind / intentions / cancel_intention, and reminders delivered
by the madeleine dialect in its own pending_recollections shape."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from mcp.shared.subscriptions import ResourceUpdated

from tests.adapters.mcp_support import call, in_process, structured, text

pytestmark = pytest.mark.anyio

PHARMACY = {"lat": 48.853, "lon": 2.349}
# The madeleine seed's pending item: the memory, its score, the channels, a prompt_line
# (and when it fired); a reminder must come in exactly this shape.
MADELEINE_ITEM = {"memory", "score", "channels", "prompt_line", "fired_at"}


async def test_mcp_native_remind_list_and_cancel(tmp_path: Path) -> None:
    async with in_process(tmp_path / "n.db", "native")() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"remind", "intentions", "cancel_intention"} <= set(tools)
        assert tools["remind"].input_schema["required"] == ["action"]
        assert tools["intentions"].annotations is not None
        assert tools["intentions"].annotations.read_only_hint is True
        created = await structured(
            client,
            "remind",
            {"action": "send the report", "at": "tomorrow at 9", "zone": "Europe/Paris"},
        )
        assert created["resolved"][0]["text"] == "tomorrow at 9"
        assert created["next_due"] == created["resolved"][0]["instant"]
        signal = await structured(
            client,
            "remind",
            {"action": "slow down", "signals": ["heart_rate>150"], "readings": 3},
        )
        assert signal["triggers"][0] == {
            "type": "signal",
            "signal": "heart_rate",
            "above": 150.0,
            "readings": 3,
        }
        listed = await structured(client, "intentions", {})
        assert [item["action"] for item in listed["intentions"]] == ["slow down", "send the report"]
        cancelled = await structured(client, "cancel_intention", {"id": created["id"]})
        assert cancelled["state"] == "cancelled"
        remaining = await structured(client, "intentions", {})
        assert [item["action"] for item in remaining["intentions"]] == ["slow down"]
        bad = await call(client, "remind", {"action": "x", "place": PHARMACY, "radius_m": 0})
        assert bad.is_error
        nothing = await call(client, "remind", {"action": "no trigger"})
        assert nothing.is_error
        assert "triggers" in text(nothing)


async def test_mcp_madeleine_delivers_reminders_in_its_pending_shape(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    async with in_process(db, "native")() as native, in_process(db, "madeleine")() as madeleine:
        intention = await structured(
            native, "remind", {"action": "pick up the prescription", "place": PHARMACY}
        )
        fired = (await structured(madeleine, "sense", {"lat": 48.8533, "lon": 2.3491}))["result"]
        assert [set(item) for item in fired] == [MADELEINE_ITEM]
        pending = (await structured(madeleine, "pending_recollections", {}))["result"]
        assert [set(item) for item in pending] == [MADELEINE_ITEM]
        item = pending[0]
        assert item["memory"]["id"] == intention["id"]
        assert item["memory"]["kind"] == "intention"
        assert item["channels"] == {"place": 1.0}
        assert item["prompt_line"].startswith("[reminder] pick up the prescription")
        assert (await structured(madeleine, "pending_recollections", {}))["result"] == []


def _sense_a_tag_from_another_process(db: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "recalld", "--db", str(db), "sense", "--tag", "desk"],
        check=True,
        capture_output=True,
        timeout=60,
        env={**os.environ, "RECALLD_EMBEDDER": "none"},
    )


async def test_mcp_pending_resource_notifies_when_a_reminder_fires_elsewhere(
    tmp_path: Path,
) -> None:
    db = tmp_path / "notify.db"
    async with in_process(db, "native")() as native, in_process(db, "madeleine")() as madeleine:
        await structured(native, "remind", {"action": "stretch", "tags": ["desk"]})
        async with madeleine.listen(resource_subscriptions=["recollections://pending"]) as events:
            await anyio.to_thread.run_sync(_sense_a_tag_from_another_process, db)
            with anyio.fail_after(20):
                event = await events.__anext__()
            assert isinstance(event, ResourceUpdated)
        pending = (await structured(madeleine, "pending_recollections", {}))["result"]
        assert [item["memory"]["content"] for item in pending] == ["stretch"]


async def test_mcp_native_alone_fires_and_delivers_its_reminders(tmp_path: Path) -> None:
    # A client that enables only native (as the README recommends) gets what it asked for:
    # sense fires the reminder, pending_recollections delivers it once, compact.
    async with in_process(tmp_path / "alone.db", "native")() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"sense", "pending_recollections"} <= set(tools)
        assert set(tools["sense"].input_schema["properties"]) >= {"text", "place", "tags"}
        resources = [str(item.uri) for item in (await client.list_resources()).resources]
        assert "recollections://pending" in resources
        intention = await structured(
            client, "remind", {"action": "pick up the prescription", "place": PHARMACY}
        )
        fired = await structured(client, "sense", {"place": {"lat": 48.8533, "lon": 2.3491}})
        [item] = fired["recollections"]
        assert (item["id"], item["kind"]) == (intention["id"], "reminder")
        assert item["prompt_line"].startswith("[reminder] pick up the prescription")
        assert set(item) == {"id", "score", "prompt_line", "fired_at", "kind"}
        peeked = await structured(client, "pending_recollections", {"drain": False})
        assert peeked == fired
        waiting = await client.read_resource("recollections://pending")
        assert "pick up the prescription" in waiting.contents[0].text  # type: ignore[union-attr]
        full = await structured(client, "pending_recollections", {"verbose": True})
        [delivered] = full["recollections"]
        assert delivered["memory"]["kind"] == "intention"
        assert delivered["reminder"]["intention_id"] == intention["id"]
        assert await structured(client, "pending_recollections", {}) == {"recollections": []}
        nothing = await call(client, "sense", {"at": "2026-11-05T08:05:00+01:00"})
        assert nothing.is_error  # time alone is no cue


async def test_mcp_native_alone_is_told_when_a_timed_reminder_fires(tmp_path: Path) -> None:
    # A time-only reminder fires from the scheduler, not from a call: a native-only client
    # hears it through recollections://pending and collects it with pending_recollections.
    connect = in_process(tmp_path / "timed.db", "native", scheduler_thread=True)
    async with connect() as client:
        soon = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
        await structured(client, "remind", {"action": "stretch your legs", "at": soon})
        async with client.listen(resource_subscriptions=["recollections://pending"]) as events:
            with anyio.fail_after(20):
                event = await events.__anext__()
            assert isinstance(event, ResourceUpdated)
        [item] = (await structured(client, "pending_recollections", {}))["recollections"]
        assert item["prompt_line"].startswith("[reminder] stretch your legs (it is due at")
        assert item["due_at"].startswith(soon[:19])


async def test_mcp_native_remind_mention_needs_every_name_as_described(tmp_path: Path) -> None:
    async with in_process(tmp_path / "mention.db", "native")() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        described = tools["remind"].input_schema["properties"]["mention"]["description"]
        assert "all" in described
        assert "one of" not in described  # it used to say both
        await structured(
            client, "remind", {"action": "ask about the move", "mention": ["Anna", "Bob"]}
        )
        for heard in ("Anna called", "Bob called"):
            assert await structured(client, "sense", {"text": heard}) == {"recollections": []}
        fired = await structured(client, "sense", {"text": "Anna and Bob called"})
        assert [item["kind"] for item in fired["recollections"]] == ["reminder"]
