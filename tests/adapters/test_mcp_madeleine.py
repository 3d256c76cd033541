"""The madeleine dialect over every transport: flat schemas, the five tools, and the
recollections://pending resource notifying subscribers when another process senses."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.subscriptions import ResourceUpdated
from mcp.types import ResourceUpdatedNotification

from tests.adapters.conftest import OpenTransport
from tests.adapters.mcp_support import (
    Connect,
    call,
    in_process,
    structured,
    text,
)
from tests.media import melody

pytestmark = pytest.mark.anyio

CAFE = {"lat": 48.8642, "lon": 2.3475}
PLACE_ARGUMENTS = {"geohash", "lat", "lon"}
SIGNAL_ARGUMENTS = {"image", "audio", "biometrics"}


@pytest.fixture
def madeleine(mcp_transport: OpenTransport) -> tuple[Connect, Path | str]:
    return mcp_transport("madeleine")


async def test_madeleine_schemas_are_flat_and_exact(tmp_path: Path) -> None:
    async with in_process(tmp_path / "s.db", "madeleine")() as client:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    assert set(tools) == {"remember", "recall", "sense", "pending_recollections", "forget"}
    properties = {name: set(schema["properties"]) for name, schema in tools.items()}
    assert (
        properties["remember"]
        == {"content", "at", "tags", "salience"} | PLACE_ARGUMENTS | SIGNAL_ARGUMENTS
    )
    assert properties["recall"] == {"query", "at", "tags", "k"} | PLACE_ARGUMENTS | SIGNAL_ARGUMENTS
    assert properties["sense"] == {"text", "at"} | PLACE_ARGUMENTS | SIGNAL_ARGUMENTS
    assert properties["pending_recollections"] == {"drain"}
    assert properties["forget"] == {"id"}
    assert tools["remember"]["required"] == ["content"]
    assert tools["forget"]["required"] == ["id"]
    for name in ("recall", "sense", "pending_recollections"):
        assert tools[name].get("required", []) == []
    assert tools["recall"]["properties"]["k"]["default"] == 5
    assert tools["pending_recollections"]["properties"]["drain"] == {
        "default": True,
        "description": tools["pending_recollections"]["properties"]["drain"]["description"],
        "type": "boolean",
    }
    assert tools["remember"]["properties"]["salience"]["maximum"] == 1
    assert tools["remember"]["properties"]["lat"]["minimum"] == -90
    assert tools["remember"]["properties"]["tags"]["type"] == "array"
    assert tools["sense"]["properties"]["biometrics"]["type"] == "object"
    assert tools["remember"]["properties"]["image"]["type"] == "string"


async def test_madeleine_tools(madeleine: tuple[Connect, Path]) -> None:
    connect, _ = madeleine
    async with connect() as client:
        stored = await structured(
            client,
            "remember",
            {
                "content": "Croissant with Léa at the corner café",
                **CAFE,
                "at": "2026-11-04T08:10:00+01:00",
                "tags": ["lea"],
                "salience": 0.8,
                "audio": base64.b64encode(melody(5)).decode(),
            },
        )
        memory_id = stored["id"]
        assert stored["place"]["geohash"].startswith("u09tv")
        assert stored["at"] == "2026-11-04T08:10:00+01:00"

        found = (await structured(client, "recall", {"query": "croissant", "geohash": "u09tvrmq"}))[
            "result"
        ]
        assert found[0]["memory"]["id"] == memory_id
        assert set(found[0]["channels"]) == {"text", "place"}
        assert (await structured(client, "pending_recollections", {"drain": False}))["result"] == []

        nothing = await call(client, "sense", {})
        assert nothing.is_error
        assert "at least one" in text(nothing)

        fired = (await structured(client, "sense", {**CAFE, "at": "2026-11-05T08:05:00+01:00"}))[
            "result"
        ]
        assert [item["memory"]["id"] for item in fired] == [memory_id]
        assert fired[0]["channels"]["place"] == 1.0
        assert fired[0]["prompt_line"].startswith("[2026-11-04")
        again = (await structured(client, "sense", {**CAFE, "at": "2026-11-05T08:06:00+01:00"}))[
            "result"
        ]
        assert again == []  # habituated

        peeked = (await structured(client, "pending_recollections", {"drain": False}))["result"]
        assert [item["memory"]["id"] for item in peeked] == [memory_id]
        drained = (await structured(client, "pending_recollections", {}))["result"]
        assert [item["memory"]["id"] for item in drained] == [memory_id]
        assert (await structured(client, "pending_recollections", {}))["result"] == []

        bad = await call(client, "recall", {"lat": 48.0})
        assert bad.is_error
        assert "lon" in text(bad)

        assert await structured(client, "forget", {"id": memory_id}) == {
            "deleted": True,
            "scrubbed": True,
            "scrub": "done",
        }
        assert await structured(client, "forget", {"id": memory_id}) == {
            "deleted": False,
            "scrubbed": True,
            "scrub": "none",
        }


def _sense_from_another_process(db: Path | str) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "recalld",
            "--db",
            str(db),
            "sense",
            "--place",
            f"{CAFE['lat']},{CAFE['lon']}",
            "--at",
            "2026-11-05T08:05:00+01:00",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )


async def _store_cafe(client: Any) -> None:
    await structured(
        client, "remember", {"content": "Café morning", **CAFE, "at": "2026-11-04T08:10:00+01:00"}
    )


async def test_madeleine_pending_resource_notifies_legacy_subscribers(
    madeleine: tuple[Connect, Path],
) -> None:
    connect, db = madeleine
    updated = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification) and (
            str(message.params.uri) == "recollections://pending"
        ):
            updated.set()

    async with connect(mode="legacy", message_handler=on_message) as client:
        await _store_cafe(client)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.subscribe_resource("recollections://pending")
        await anyio.to_thread.run_sync(_sense_from_another_process, db)
        with anyio.fail_after(20):
            await updated.wait()
        waiting = await client.read_resource("recollections://pending")
        assert "Café morning" in waiting.contents[0].text  # type: ignore[union-attr]
        delivered = (await structured(client, "pending_recollections", {}))["result"]
        assert [item["memory"]["content"] for item in delivered] == ["Café morning"]


async def test_madeleine_pending_resource_notifies_listen_streams(
    madeleine: tuple[Connect, Path],
) -> None:
    connect, db = madeleine
    async with connect() as client:
        await _store_cafe(client)
        async with client.listen(resource_subscriptions=["recollections://pending"]) as events:
            await anyio.to_thread.run_sync(_sense_from_another_process, db)
            with anyio.fail_after(20):
                event = await events.__anext__()
            assert isinstance(event, ResourceUpdated)
            assert event.uri == "recollections://pending"


async def _queue_mornings(client: Any, count: int) -> list[str]:
    """``count`` queued recollections: the ids in the order they were queued (oldest first).

    A sense weighs at most 50 place candidates, so the memories are stored in groups of 25,
    each group at its own place ~11 km from the others; a sense fires at most
    ``fire_limit`` (3) of them, the rest habituated ones make room for, so each group is
    sensed until every one of its memories has fired.
    """
    queued: list[str] = []
    for group in range(0, count, 25):
        place = {"lat": CAFE["lat"] + group / 250, "lon": CAFE["lon"]}
        size = min(group + 25, count) - group
        for number in range(group, group + size):
            await structured(
                client,
                "remember",
                {"content": f"Morning {number}", **place, "at": "2026-11-04T08:10:00+01:00"},
            )
        fired_here: list[str] = []
        while len(fired_here) < size:
            cue = {**place, "at": "2026-11-05T08:05:00+01:00"}
            fired = [
                item["memory"]["id"] for item in (await structured(client, "sense", cue))["result"]
            ]
            assert 0 < len(fired) <= 3
            fired_here += fired
        queued += fired_here
    assert len(queued) == len(set(queued)) == count
    return queued


async def test_madeleine_pending_delivers_every_waiting_item(tmp_path: Path) -> None:
    # Its seed answers a bare list, with no room to say more wait: a drain takes everything
    # (here in batches of RECALLD_MAX_LIMIT), a peek the oldest RECALLD_MAX_LIMIT.
    async with in_process(tmp_path / "m.db", "madeleine", max_limit=40)() as client:
        ids = await _queue_mornings(client, 90)
        peeked = (await structured(client, "pending_recollections", {"drain": False}))["result"]
        assert [item["memory"]["id"] for item in peeked] == ids[:40]
        waiting = await client.read_resource("recollections://pending")
        assert len(json.loads(waiting.contents[0].text)) == 40  # type: ignore[union-attr]
        drained = (await structured(client, "pending_recollections", {}))["result"]
        assert [item["memory"]["id"] for item in drained] == ids
        assert (await structured(client, "pending_recollections", {}))["result"] == []


async def test_pending_recollections_say_how_many_more_wait(
    mcp_transport: OpenTransport,
) -> None:
    async with mcp_transport("madeleine")[0]() as madeleine:
        ids = await _queue_mornings(madeleine, 130)
        # More than the 50 it used to stop at, with the default limits.
        peeked = (await structured(madeleine, "pending_recollections", {"drain": False}))["result"]
        assert [item["memory"]["id"] for item in peeked] == ids
    async with mcp_transport("native")[0]() as native:
        # native answers an object: 100 items a call at most, and how many more wait.
        peeked = await structured(native, "pending_recollections", {"drain": False})
        assert [item["id"] for item in peeked["recollections"]] == ids[:100]
        assert peeked["remaining"] == 30
        first = await structured(native, "pending_recollections", {})
        assert [item["id"] for item in first["recollections"]] == ids[:100]
        assert first["remaining"] == 30
        rest = await structured(native, "pending_recollections", {})
        assert [item["id"] for item in rest["recollections"]] == ids[100:]
        assert "remaining" not in rest  # nothing more: the field is left out
        assert await structured(native, "pending_recollections", {}) == {"recollections": []}
