"""Transports: stdio and HTTP servers share one database; stdio stdout is protocol only."""

from __future__ import annotations

import json
import math
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import apsw
import httpx
import pytest

from tests.adapters.http_support import ServerProcess
from tests.adapters.mcp_support import (
    INITIALIZE,
    call,
    http,
    json_text,
    start_http_server,
    stdio,
    stop,
    structured,
)

pytestmark = pytest.mark.anyio


async def test_mcp_stdio_and_http_servers_see_each_others_writes(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    process, url = start_http_server(db, "chaoscore")
    try:
        async with stdio(db, "chaoscore")() as over_stdio, http(url)() as over_http:
            await call(over_stdio, "chaoscore_remember", {"key": "from.stdio", "value": "one"})
            seen = await json_text(
                over_http, "chaoscore_recall", {"key": "from.stdio", "response_format": "json"}
            )
            assert [record["value"] for record in seen] == ["one"]
            await call(over_http, "chaoscore_remember", {"key": "from.http", "value": "two"})
            back = await json_text(
                over_stdio, "chaoscore_recall", {"key": "from.http", "response_format": "json"}
            )
            assert [record["value"] for record in back] == ["two"]
            await call(over_http, "chaoscore_remember", {"key": "from.stdio", "value": "three"})
            updated = await json_text(
                over_stdio, "chaoscore_recall", {"key": "from.stdio", "response_format": "json"}
            )
            assert [record["value"] for record in updated] == ["three"]
    finally:
        stop(process)


def test_mcp_stdio_stdout_carries_only_protocol(tmp_path: Path) -> None:
    messages = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"content": "stdout stays clean"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"content": 12}},
        },
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
    ]
    # RECALLD_FTS=false makes the store log a warning at start: it must reach stderr only.
    environment = {
        **os.environ,
        "RECALLD_FTS": "false",
        "RECALLD_SYNCHRONOUS": "NORMAL",
        "RECALLD_EMBEDDER": "none",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "recalld", "--db", str(tmp_path / "io.db"), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write("".join(json.dumps(message) + "\n" for message in messages))
    process.stdin.flush()
    said = b""
    replies: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    while len([r for r in replies if "id" in r]) < 4 and time.monotonic() < deadline:
        # Read the pipe itself: a buffered readline could take two answers at once and
        # leave the second where select no longer sees it.
        ready, _, _ = select.select([process.stdout], [], [], 1.0)
        if ready:
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break
            *lines, said = (said + chunk).split(b"\n")
            replies += [json.loads(line) for line in lines]  # every stdout line is JSON-RPC
    _, error_output = process.communicate(timeout=30)
    assert all(reply["jsonrpc"] == "2.0" for reply in replies)
    by_id = {reply["id"]: reply for reply in replies if "id" in reply}
    assert set(by_id) == {1, 2, 3, 4}
    assert by_id[2]["result"]["isError"] is False
    bad = by_id[3]
    assert ("error" in bad) or bad["result"]["isError"] is True
    assert "LIKE" in error_output


@pytest.mark.model
async def test_mcp_server_embeds_in_the_background_with_the_real_model(tmp_path: Path) -> None:
    # A pure paraphrase (no shared word) is weak evidence and scores under the default
    # RECALLD_MIN_SCORE; this test is about the background embedding, so it lowers the bar
    # the way an operator of the exact-schema dialects would.
    server = stdio(
        tmp_path / "embed.db", "batbox", embedder="minilm", environment={"RECALLD_MIN_SCORE": "0"}
    )
    async with server() as client:
        receipt = await structured(client, "MemoryRemember", {"content": "The kettle is broken"})
        assert receipt["receipt"]["state"] == "queued"  # durable enqueue, not indexed yet
        with anyio.fail_after(120):
            while True:
                status = await structured(client, "MemoryStatus", {})
                if status["embeddings"]["count"] >= 1:
                    break
                await anyio.sleep(0.2)
        assert status["queue"]["done"] >= 1
        assert status["embeddings"]["model"] is not None
        found = await structured(
            client, "MemoryRecall", {"query": "the water boiler stopped working"}
        )
        assert found["results"][0]["id"] == receipt["id"]
        assert "vector" in found["results"][0]["backend"]


def _wal_bytes(db: Path) -> int:
    wal = Path(f"{db}-wal")
    return wal.stat().st_size if wal.exists() else 0


def _rpc(process: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert process.stdin is not None
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


def _stdio_server(db: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "recalld", "--db", str(db), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "RECALLD_EMBEDDER": "none"},
    )


@pytest.mark.slow
def test_mcp_stdio_sigterm_stops_cleanly_and_checkpoints(tmp_path: Path) -> None:
    db = tmp_path / "term.db"
    process = _stdio_server(db)
    assert process.stdout is not None
    _rpc(process, INITIALIZE)
    assert b'"id":1' in process.stdout.readline()
    _rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    for index in range(5):
        call = {"name": "remember", "arguments": {"content": f"before the stop {index}"}}
        _rpc(process, {"jsonrpc": "2.0", "id": 10 + index, "method": "tools/call", "params": call})
        assert b'"result"' in process.stdout.readline()
    bystander = apsw.Connection(str(db))  # not the last connection: SQLite will not clean up
    bystander.execute("SELECT count(*) FROM memories").fetchall()
    assert _wal_bytes(db) > 0
    process.send_signal(signal.SIGTERM)  # the client is still connected, stdin still open
    _, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors.decode()
    assert b"Traceback" not in errors
    assert _wal_bytes(db) == 0
    bystander.close()


@pytest.mark.slow
def test_mcp_stdio_client_hanging_up_first_is_quiet(tmp_path: Path) -> None:
    process = _stdio_server(tmp_path / "pipe.db")
    assert process.stdout is not None
    process.stdout.close()  # the client stops reading before it is answered
    _rpc(process, INITIALIZE)
    _rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _rpc(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert process.stdin is not None
    process.stdin.close()
    assert process.stderr is not None
    errors = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=30) == 0, errors
    assert "Traceback" not in errors
    assert "BrokenPipeError" not in errors


@pytest.mark.slow
def test_mcp_stdio_answers_a_line_that_is_no_message(tmp_path: Path) -> None:
    db = tmp_path / "garbled.db"
    process = _initialized_stdio_server(db)
    assert process.stdout is not None
    assert process.stdin is not None
    process.stdin.write(b"{not json\n")
    process.stdin.flush()
    parse = json.loads(process.stdout.readline())
    assert (parse["id"], parse["error"]["code"]) == (None, -32700)
    # Valid JSON text the SDK cannot read (a lone surrogate escape, JSON nested past its
    # limit): refused with the request's own id, so the client is not left waiting.
    surrogate = '{"content": "a \\ud800 b"}'
    deep = '{"content": "d", "meta": ' + '{"a": ' * 200 + "1" + "}" * 201
    for number, arguments in ((7, surrogate), (8, deep)):
        line = (
            f'{{"jsonrpc": "2.0", "id": {number}, "method": "tools/call",'
            f' "params": {{"name": "remember", "arguments": {arguments}}}}}\n'
        )
        process.stdin.write(line.encode())
        process.stdin.flush()
        refused = json.loads(process.stdout.readline())
        assert (refused["id"], refused["error"]["code"]) == (number, -32600), refused
    # The server still answers, and stored nothing from the refused lines.
    _stored_only_what_followed(process, db)


@pytest.mark.slow
def test_mcp_stdio_refuses_a_line_that_is_not_utf8(tmp_path: Path) -> None:
    db = tmp_path / "bytes.db"
    process = _initialized_stdio_server(db)
    assert process.stdout is not None
    assert process.stdin is not None
    # JSON text must be UTF-8 (RFC 8259 8.1), as the HTTP transport enforces: a stray
    # byte, or a surrogate encoded in UTF-8, is refused, not stored as U+FFFD.
    for number, content in ((7, b"bad \xff\xfe bytes"), (8, b"a \xed\xa0\x80 surrogate")):
        process.stdin.write(
            b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name":'
            b' "remember", "arguments": {"content": "%s"}}}\n' % (number, content)
        )
        process.stdin.flush()
        refused = json.loads(process.stdout.readline())
        assert (refused["id"], refused["error"]["code"]) == (None, -32700), refused
        assert "UTF-8" in refused["error"]["message"]
    _stored_only_what_followed(process, db)


@pytest.mark.slow
def test_mcp_stdio_answers_a_request_whose_id_is_no_string_or_integer(tmp_path: Path) -> None:
    process = _initialized_stdio_server(tmp_path / "ids.db")
    assert process.stdout is not None
    assert process.stdin is not None
    # MCP ids are strings or integers, never null. The SDK read these as notifications
    # (which get no answer), so the client waited forever for its reply.
    for identifier in ("true", "1.5", "2.0", "null", "[7]"):
        line = f'{{"jsonrpc": "2.0", "id": {identifier}, "method": "tools/list"}}\n'
        process.stdin.write(line.encode())
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 20)
        assert ready, f"no answer to a request with id {identifier}"
        refused = json.loads(process.stdout.readline())
        assert (refused["id"], refused["error"]["code"]) == (None, -32600), refused
        assert "id" in refused["error"]["message"]
    # A real notification still gets no answer: the next line out answers the ping.
    _rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _rpc(process, {"jsonrpc": "2.0", "id": 9, "method": "ping"})
    assert json.loads(process.stdout.readline()) == {"jsonrpc": "2.0", "id": 9, "result": {}}
    _exits_cleanly(process)


@pytest.mark.slow
def test_mcp_stdio_refuses_a_ttl_that_is_not_a_finite_number(tmp_path: Path) -> None:
    # JSON-RPC over stdio reads NaN and Infinity (Python's JSON writes them): NaN was
    # refused as "greater than or equal to 0.000001", naming a bound it does not break.
    db = tmp_path / "ttl.db"
    process = _initialized_stdio_server(db)
    assert process.stdout is not None
    for number, ttl in ((7, math.nan), (8, math.inf), (9, -math.inf)):
        call = {"name": "remember", "arguments": {"content": "never", "ttl_seconds": ttl}}
        _rpc(process, {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": call})
        answered = json.loads(process.stdout.readline())
        assert answered["result"]["isError"] is True, answered
        error = answered["result"]["structuredContent"]["error"]
        assert error["field"] == "ttl_seconds"
        assert error["message"] == (
            f"must be a finite number of seconds from 1e-06 to 1e+10, got {ttl!r}"
        )
    _stored_only_what_followed(process, db)


def _initialized_stdio_server(db: Path) -> subprocess.Popen[bytes]:
    """A stdio server on ``db`` that has answered ``initialize`` and been told so."""
    process = _stdio_server(db)
    assert process.stdout is not None
    _rpc(process, INITIALIZE)
    assert b'"id":1' in process.stdout.readline()
    _rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return process


def _stored_only_what_followed(process: subprocess.Popen[bytes], db: Path) -> None:
    """After refused lines: the server still answers a write, exits cleanly when its input
    ends, and the file holds that write alone (nothing of the refused lines)."""
    assert process.stdout is not None
    call = {"name": "remember", "arguments": {"content": "after the refusals"}}
    _rpc(process, {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": call})
    answered = json.loads(process.stdout.readline())
    assert answered["id"] == 9
    assert answered["result"]["isError"] is False
    _exits_cleanly(process)
    connection = apsw.Connection(str(db))
    stored = connection.execute("SELECT content FROM memories").fetchall()
    connection.close()
    assert stored == [("after the refusals",)]


def _exits_cleanly(process: subprocess.Popen[bytes]) -> None:
    """Close the server's input: it exits 0 with no traceback on stderr."""
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdin.close()
    errors = process.stderr.read().decode()
    process.stderr.close()
    process.stdout.close()
    assert process.wait(timeout=30) == 0, errors
    assert "Traceback" not in errors


@pytest.mark.slow
@pytest.mark.parametrize("served_by", ["mcp --transport http", "serve /mcp"])
def test_mcp_http_answers_a_request_whose_id_is_no_string_or_integer(
    tmp_path: Path, served_by: str
) -> None:
    # The SDK read these as notifications and answered 202 Accepted, with no body: the
    # client never got an answer to its request. stdio refuses them already (above).
    db = tmp_path / "ids.db"
    with _http_endpoint(db, served_by) as url:
        accept = {"Accept": "application/json, text/event-stream"}
        opened = httpx.post(url, json=INITIALIZE, headers=accept, timeout=30)
        assert opened.status_code == 200, opened.text
        session = opened.headers.get("mcp-session-id")
        headers = {**accept, "Content-Type": "application/json", "mcp-session-id": session or ""}
        remember = '"method": "tools/call", "params": {"name": "remember", "arguments":'
        for identifier in ("null", "1.5", "true", "2.0", "[7]"):
            for method in ('"method": "tools/list"', remember + ' {"content": "never"}}'):
                body = f'{{"jsonrpc": "2.0", "id": {identifier}, {method}}}'
                refused = httpx.post(url, content=body, headers=headers, timeout=30)
                assert refused.status_code == 400, (identifier, refused.text)
                answer = refused.json()
                assert (answer["id"], answer["error"]["code"]) == (None, -32600), answer
                assert "id must be a string or an integer" in answer["error"]["message"]
        # A real notification is still accepted, and a real request answered.
        notified = httpx.post(
            url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=headers,
            timeout=30,
        )
        assert notified.status_code == 202
        pinged = httpx.post(
            url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=headers, timeout=30
        )
        assert pinged.status_code == 200
        assert '"id":9' in pinged.text
    connection = apsw.Connection(str(db))
    stored = connection.execute("SELECT count(*) FROM memories").fetchall()
    connection.close()
    assert stored == [(0,)]


@pytest.mark.slow
@pytest.mark.parametrize("served_by", ["mcp --transport http", "serve /mcp"])
def test_mcp_http_checks_host_origin_type_and_session_before_the_id(
    tmp_path: Path, served_by: str
) -> None:
    # The SDK takes a request with a bad id for a notification: whatever it answers a
    # notification with (421 Host, 403 Origin, 400 Content-Type, 404 unknown session,
    # 400 no session) it answers that with too; only where it would accept (202) is the
    # answer -32600.
    db = tmp_path / "order.db"
    with _http_endpoint(db, served_by) as url:
        accept = {"Accept": "application/json, text/event-stream"}
        opened = httpx.post(url, json=INITIALIZE, headers=accept, timeout=30)
        assert opened.status_code == 200, opened.text
        headers = {
            **accept,
            "Content-Type": "application/json",
            "mcp-session-id": opened.headers.get("mcp-session-id") or "",
        }
        notification = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
        bad_id = b'{"jsonrpc": "2.0", "id": null, "method": "ping"}'
        variants: dict[str, dict[str, str]] = {
            "Host": {**headers, "Host": "evil.example"},
            "Origin": {**headers, "Origin": "http://evil.example"},
            "Content-Type": {**headers, "Content-Type": "text/plain"},
            "unknown session": {**headers, "mcp-session-id": "nope"},
            "no session": {key: value for key, value in headers.items() if key != "mcp-session-id"},
        }
        for problem, sent in variants.items():
            expected = httpx.post(url, content=notification, headers=sent, timeout=30)
            assert expected.status_code >= 400, (problem, expected.status_code)
            answered = httpx.post(url, content=bad_id, headers=sent, timeout=30)
            assert (answered.status_code, answered.text) == (
                expected.status_code,
                expected.text,
            ), problem
        refused = httpx.post(url, content=bad_id, headers=headers, timeout=30)
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == -32600
        # A first initialize needs no session: with a bad id it is told why, not that a
        # session is missing (which a notification, and so the SDK, would say).
        bad_initialize = {**INITIALIZE, "id": None}
        for sent in (accept, variants["no session"]):
            first = httpx.post(url, json=bad_initialize, headers=sent, timeout=30)
            assert first.status_code == 400, first.text
            assert "a request id must be a string or an integer" in first.json()["error"]["message"]
        # A foreign Host is still answered as for a valid initialize (421, or serve's 401).
        valid = httpx.post(url, json=INITIALIZE, headers=variants["Host"], timeout=30)
        foreign = httpx.post(url, json=bad_initialize, headers=variants["Host"], timeout=30)
        assert valid.status_code in (401, 421), valid.text
        assert foreign.status_code == valid.status_code, foreign.text


@pytest.mark.slow
@pytest.mark.parametrize("served_by", ["mcp --transport http", "serve /mcp"])
def test_mcp_http_refuses_a_body_that_is_no_message_without_echoing_it(
    tmp_path: Path, served_by: str
) -> None:
    # The SDK answered JSON that is no JSON-RPC message (a batch among it: 2025-06-18
    # removed batches) with -32602 and pydantic's whole report, the body's values in it;
    # stdio answers such a line -32600 saying only what is wrong and where.
    db = tmp_path / "echo.db"
    secret = "my bank PIN is 4321"
    call = {"name": "remember", "arguments": {"content": secret}}
    bodies = {
        "method": ({"jsonrpc": "2.0", "id": 7, "method": 5, "params": call}, 7),
        "batch": ([{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": call}], None),
        "string": (secret, None),
    }
    with _http_endpoint(db, served_by) as url:
        accept = {"Accept": "application/json, text/event-stream"}
        opened = httpx.post(url, json=INITIALIZE, headers=accept, timeout=30)
        assert opened.status_code == 200, opened.text
        session = opened.headers.get("mcp-session-id") or ""
        headers = {**accept, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        for name, (body, request_id) in bodies.items():
            refused = httpx.post(url, json=body, headers=headers, timeout=30)
            assert refused.status_code == 400, (name, refused.text)
            assert "4321" not in refused.text, name
            answer = refused.json()
            assert answer["id"] == request_id, answer
            assert answer["error"]["code"] == -32600, answer
        batch = httpx.post(url, json=bodies["batch"][0], headers=headers, timeout=30)
        assert "protocol 2025-06-18 removed batches" in batch.json()["error"]["message"]
    connection = apsw.Connection(str(db))
    assert connection.execute("SELECT count(*) FROM memories").fetchall() == [(0,)]
    connection.close()


@contextmanager
def _http_endpoint(db: Path, served_by: str) -> Iterator[str]:
    """The URL of a streamable-HTTP MCP endpoint on ``db``: ``recalld serve``'s ``/mcp``,
    or ``recalld mcp --transport http``; stopped when the block ends."""
    if served_by == "serve /mcp":
        running = ServerProcess(db).start()
        try:
            yield f"{running.base_url}/mcp"
        finally:
            running.stop()
        return
    process, url = start_http_server(db)
    try:
        yield url
    finally:
        stop(process)
