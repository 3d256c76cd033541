"""A JSON-RPC message one of whose objects gives a key twice is refused, naming the key,
on stdio and at ``/mcp``: the SDK's parser kept the last value silently (adversarial pass
c65)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import apsw
import httpx
import pytest

from recalld.adapters.mcp_requests import unreadable
from tests.adapters.http_support import ServerProcess
from tests.adapters.mcp_support import INITIALIZE

pytestmark = pytest.mark.slow

# A remember whose content is given twice: which one would be stored?
TWICE = (
    '{"jsonrpc": "2.0", "id": "twice", "method": "tools/call", "params": {"name": "remember",'
    ' "arguments": {"content": "what a proxy checked", "content": "what was stored"}}}'
)
REFUSED = "Invalid request: the key 'content' is given twice in one object: give each key once"


def _memories(db: Path) -> int:
    connection = apsw.Connection(str(db))
    try:
        counted = connection.execute("SELECT count(*) FROM memories").fetchall()
    finally:
        connection.close()
    (found,) = counted[0]
    assert isinstance(found, int)
    return found


def test_stdio_refuses_a_key_given_twice(tmp_path: Path) -> None:
    db = tmp_path / "twice.db"
    lines = [
        json.dumps(INITIALIZE),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        TWICE,
        json.dumps({"jsonrpc": "2.0", "id": "ping", "method": "ping"}),
    ]
    process = subprocess.run(
        [sys.executable, "-m", "recalld", "--db", str(db), "mcp"],
        input="".join(line + "\n" for line in lines).encode(),
        capture_output=True,
        env={**os.environ, "RECALLD_EMBEDDER": "none"},
        timeout=120,
        check=True,
    )
    answers = {answer["id"]: answer for answer in map(json.loads, process.stdout.splitlines())}
    assert answers["twice"]["error"] == {"code": -32600, "message": REFUSED}
    assert answers["ping"]["result"] == {}  # the session goes on
    assert _memories(db) == 0


def test_http_mcp_refuses_a_key_given_twice(tmp_path: Path) -> None:
    db = tmp_path / "twice.db"
    running = ServerProcess(db).start()
    try:
        url = f"{running.base_url}/mcp"
        accept = {"Accept": "application/json, text/event-stream"}
        with httpx.Client(timeout=30) as client:
            opened = client.post(url, json=INITIALIZE, headers=accept)
            assert opened.status_code == 200, opened.text
            session = {
                **accept,
                "Mcp-Session-Id": opened.headers["mcp-session-id"],
                "Mcp-Protocol-Version": "2025-06-18",
                "Content-Type": "application/json",
            }
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert client.post(url, json=initialized, headers=session).status_code == 202
            refused = client.post(url, content=TWICE.encode(), headers=session)
        assert refused.status_code == 400, refused.text
        assert refused.json() == {
            "jsonrpc": "2.0",
            "id": "twice",
            "error": {"code": -32600, "message": REFUSED},
        }
    finally:
        running.stop()
    assert _memories(db) == 0


def test_stdio_refuses_only_the_message_of_a_batch_that_gives_a_key_twice(
    tmp_path: Path,
) -> None:
    # The whole batch line was refused with id null: its other requests were never
    # answered (review of pass c65).
    db = tmp_path / "batch.db"
    opening = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": "2025-03-26"}}
    batch = (
        '[{"jsonrpc": "2.0", "id": "ping", "method": "ping"}, '
        + TWICE
        + ', {"jsonrpc": "2.0", "id": "kept", "method": "tools/call", "params": {"name":'
        ' "remember", "arguments": {"content": "stored once"}}}]'
    )
    lines = [
        json.dumps(opening),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        batch,
    ]
    process = subprocess.run(
        [sys.executable, "-m", "recalld", "--db", str(db), "mcp"],
        input="".join(line + "\n" for line in lines).encode(),
        capture_output=True,
        env={**os.environ, "RECALLD_EMBEDDER": "none"},
        timeout=120,
        check=True,
    )
    [_opened, answered] = map(json.loads, process.stdout.splitlines())
    answers = {answer["id"]: answer for answer in answered}
    assert answers["twice"]["error"] == {"code": -32600, "message": REFUSED}
    assert answers["ping"]["result"] == {}
    assert "result" in answers["kept"], answers["kept"]
    assert _memories(db) == 1


def test_a_key_given_twice_is_found_however_it_is_escaped() -> None:
    escaped = TWICE.replace('"content": "what was stored"', '"cont\\u0065nt": "what was stored"')
    assert escaped != TWICE
    refused = unreadable(escaped.encode())
    assert refused is not None
    assert refused.error.message == REFUSED


def test_an_id_given_twice_is_answered_with_id_null() -> None:
    # Which of the two ids the client waits on is unknown: JSON-RPC answers a request
    # whose id cannot be read with null (the last one was echoed) (review of pass c65).
    refused = unreadable(b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}')
    assert refused is not None
    assert refused.id is None
    assert refused.error.message == REFUSED.replace("'content'", "'id'")
