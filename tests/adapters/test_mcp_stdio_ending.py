"""MCP over stdio at the stream's edges: what a client asked before it hung up, or before a
stop signal, is answered; a batch is read as its messages; a byte order mark before the
first line is ignored; a refused line is logged without its text."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import apsw
import pytest

from recalld.adapters._stdio import MAX_LINE_BYTES
from recalld.context.signals import MAX_MEDIA_BYTES
from tests.adapters.mcp_support import INITIALIZE

# Enough messages that storing them outlasts the requests written after them.
CONVERSATION = [
    {"role": "user", "content": f"message {index} about the trip"} for index in range(2000)
]


def _stdio_server(db: Path, *options: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "recalld", "--db", str(db), "mcp", *options],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "RECALLD_EMBEDDER": "none"},
    )


def _line(message: dict[str, Any] | list[dict[str, Any]]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def _call(number: int, name: str, arguments: dict[str, Any]) -> bytes:
    params = {"name": name, "arguments": arguments}
    return _line({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})


def _stored(db: Path) -> int:
    connection = apsw.Connection(str(db))
    (count,) = connection.execute("SELECT count(*) FROM memories").fetchone() or (0,)
    connection.close()
    return int(count)


@pytest.mark.slow
def test_mcp_stdio_answers_every_request_written_before_its_input_ends(tmp_path: Path) -> None:
    # A script that pipes its requests (printf ... | recalld mcp) closes stdin after the
    # last one. The SDK cancelled the calls in flight at the end of input: each write was
    # committed, but only the initialize was answered.
    db = tmp_path / "piped.db"
    script = [
        _line(INITIALIZE),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _call(2, "remember_conversation", {"messages": CONVERSATION}),
        *(_call(10 + index, "remember", {"content": f"piped note {index}"}) for index in range(8)),
        _line({"jsonrpc": "2.0", "id": "last", "method": "ping"}),
    ]
    process = _stdio_server(db)
    output, errors = process.communicate(b"".join(script), timeout=120)
    assert process.returncode == 0, errors.decode()
    answers = {answer["id"]: answer for answer in map(json.loads, output.splitlines())}
    assert set(answers) == {1, 2, "last", *range(10, 18)}
    assert answers[2]["result"]["structuredContent"]["created"] == len(CONVERSATION)
    assert all(answers[number]["result"]["isError"] is False for number in range(10, 18))
    assert _stored(db) == len(CONVERSATION) + 8


@pytest.mark.slow
def test_mcp_stdio_end_of_input_does_not_wait_for_a_cancelled_request(tmp_path: Path) -> None:
    # A request the client cancelled is never answered (MCP): the end of input must not
    # wait for its answer, only for the others'.
    script = [
        _line(INITIALIZE),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _call(2, "remember_conversation", {"messages": CONVERSATION}),
        _line(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 2, "reason": "changed my mind"},
            }
        ),
        _line({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
    ]
    db = tmp_path / "cancelled.db"
    process = _stdio_server(db)
    output, errors = process.communicate(b"".join(script), timeout=60)
    assert process.returncode == 0, errors.decode()
    answered = [json.loads(line)["id"] for line in output.splitlines()]
    assert answered == [1, 3]
    assert b"without answering" not in errors
    # A cancel cannot stop the tool's thread: the write is whole or absent, never half,
    # and the operator is told that the call went unanswered (nothing was said before).
    assert _stored(db) in (0, len(CONVERSATION))
    said = " ".join(errors.decode().split())  # (the log handler wraps long lines)
    assert "'remember_conversation'" in said
    assert "2) was cancelled by the client and is not answered" in said


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_mcp_stdio_stop_signal_answers_the_call_in_flight_first(
    tmp_path: Path, stop: signal.Signals
) -> None:
    # The HTTP transport's stop answers the calls in flight; stdio's ended them unanswered,
    # though their writes were committed. SIGINT (Ctrl-C, what a host may send) ended the
    # server through KeyboardInterrupt ("aborted", exit 130) with the answer never written.
    db = tmp_path / "term.db"
    process = _stdio_server(db)
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(_line(INITIALIZE))
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    process.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    process.stdin.write(_call(2, "remember_conversation", {"messages": CONVERSATION}))
    process.stdin.write(_line({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
    process.stdin.flush()
    # The ping's answer means both lines were read: the conversation is in flight, or done.
    first = json.loads(process.stdout.readline())
    process.send_signal(stop)
    # stdin stays open until the server exits: the client has not hung up (communicate()
    # would close it at once, and a SIGTERM after the end of input stops at once).
    assert process.stderr is not None
    rest, errors = process.stdout.read(), process.stderr.read()  # until it exits
    process.wait(timeout=60)
    process.stdin.close()
    process.stdout.close()
    process.stderr.close()
    assert process.returncode == 0, errors.decode()
    answers = {answer["id"]: answer for answer in [first, *map(json.loads, rest.splitlines())]}
    assert set(answers) == {2, 3}
    assert answers[2]["result"]["structuredContent"]["created"] == len(CONVERSATION)
    assert _stored(db) == len(CONVERSATION)
    assert b"Traceback" not in errors


@pytest.mark.slow
def test_mcp_stdio_end_of_input_does_not_wait_for_an_open_listen(tmp_path: Path) -> None:
    # A 2026-07-28 subscriptions/listen is answered only when the client leaves: the end
    # of input must end it, not wait out the grace for its answer.
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    listen = {"_meta": meta, "notifications": {"resourceSubscriptions": ["memory://core"]}}
    script = [
        _line({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": listen}),
        _line({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}),
    ]
    process = _stdio_server(tmp_path / "listen.db")
    output, errors = process.communicate(b"".join(script), timeout=60)
    assert process.returncode == 0, errors.decode()
    messages = [json.loads(line) for line in output.splitlines()]
    assert "tools" in next(message for message in messages if message.get("id") == 2)["result"]
    assert b"without answering" not in errors


@pytest.mark.slow
def test_mcp_stdio_reads_a_first_line_after_a_byte_order_mark(tmp_path: Path) -> None:
    # .NET's UTF-8 writers start a stream with a byte order mark, which RFC 8259 lets a
    # reader ignore; the initialize behind it was refused as not JSON (-32700).
    script = [
        b"\xef\xbb\xbf" + _line(INITIALIZE),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _call(2, "remember", {"content": "after the mark"}),
    ]
    db = tmp_path / "mark.db"
    process = _stdio_server(db)
    output, errors = process.communicate(b"".join(script), timeout=60)
    assert process.returncode == 0, errors.decode()
    answers = {answer["id"]: answer for answer in map(json.loads, output.splitlines())}
    assert set(answers) == {1, 2}
    assert answers[1]["result"]["serverInfo"]["name"] == "recalld"
    assert answers[2]["result"]["isError"] is False
    assert _stored(db) == 1


@pytest.mark.slow
def test_mcp_stdio_log_of_a_refused_line_does_not_repeat_it(tmp_path: Path) -> None:
    # The warning for a refused line quoted pydantic's whole report, with the line's own
    # text in it (what the client meant to store), over a dozen lines of stderr.
    line = (
        b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "remember",'
        b' "arguments": {"content": "a \\ud800 b, my bank PIN is 4321"}}}\n'
    )
    process = _stdio_server(tmp_path / "quiet.db")
    output, errors = process.communicate(line, timeout=60)
    assert process.returncode == 0, errors.decode()
    refused = json.loads(output)
    assert (refused["id"], refused["error"]["code"]) == (7, -32600)
    assert b"refused a line" in errors
    assert b"4321" not in errors
    assert b"bank" not in errors


@pytest.mark.slow
def test_mcp_stdio_reads_a_batch_as_its_messages(tmp_path: Path) -> None:
    # Protocol 2025-03-26, which the server negotiates, has every server receive JSON-RPC
    # batches; the SDK refused the whole array (-32600, id null) and ran none of it.
    version = {**INITIALIZE["params"], "protocolVersion": "2025-03-26"}
    batch = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"content": "sent in a batch"}},
        },
        {"jsonrpc": "2.0", "id": "ping", "method": "ping"},
        [{"jsonrpc": "2.0", "id": 9, "method": "ping"}],  # a batch inside a batch is no message
    ]
    script = [
        _line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": version}),
        (json.dumps(batch) + "\n").encode(),
        b"[]\n",  # an empty batch is an invalid request
    ]
    db = tmp_path / "batch.db"
    process = _stdio_server(db)
    output, errors = process.communicate(b"".join(script), timeout=60)
    assert process.returncode == 0, errors.decode()
    # JSON-RPC answers a batch with one array of its answers (each was a line of its own).
    answers = [json.loads(line) for line in output.splitlines()]
    assert len(answers) == 3
    (batched,) = (answer for answer in answers if isinstance(answer, list))
    initialized, empty = (answer for answer in answers if isinstance(answer, dict))
    assert initialized["result"]["protocolVersion"] == "2025-03-26"
    by_id = {answer["id"]: answer for answer in batched}
    assert set(by_id) == {2, "ping", None}
    assert by_id[2]["result"]["isError"] is False
    assert by_id["ping"]["result"] == {}
    assert by_id[None]["error"]["code"] == -32600  # the array inside, answered in the array
    assert empty["id"] is None
    assert empty["error"]["code"] == -32600
    assert _stored(db) == 1


@pytest.mark.slow
def test_mcp_stdio_answers_a_batch_of_notifications_with_nothing(tmp_path: Path) -> None:
    # JSON-RPC: a batch of notifications only gets no answer at all (not an empty array);
    # a batch whose one request the client cancels is left unanswered, as that request.
    version = {**INITIALIZE["params"], "protocolVersion": "2025-03-26"}
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": "long", "reason": "changed my mind"},
    }
    remembering = {
        "jsonrpc": "2.0",
        "id": "long",
        "method": "tools/call",
        "params": {"name": "remember_conversation", "arguments": {"messages": CONVERSATION}},
    }
    script = [
        _line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": version}),
        _line([{"jsonrpc": "2.0", "method": "notifications/initialized"}]),
        _line([remembering, cancel]),
        _line([{"jsonrpc": "2.0", "id": 3, "method": "ping"}]),
    ]
    process = _stdio_server(tmp_path / "notifications.db")
    output, errors = process.communicate(b"".join(script), timeout=60)
    assert process.returncode == 0, errors.decode()
    answers = [json.loads(line) for line in output.splitlines()]
    assert [answer["id"] if isinstance(answer, dict) else answer for answer in answers] == [
        1,
        [{"jsonrpc": "2.0", "id": 3, "result": {}}],
    ]


@pytest.mark.slow
def test_mcp_stdio_refuses_a_batch_on_a_session_without_batches(tmp_path: Path) -> None:
    # Protocol 2025-06-18 removed JSON-RPC batches: a batch on a 2025-06-18 session (the
    # version most clients ask for), or before initialize, was run anyway.
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "remember", "arguments": {"content": "sent in a batch"}},
    }
    batch = (json.dumps([call, {"jsonrpc": "2.0", "id": "ping", "method": "ping"}]) + "\n").encode()
    script = [
        batch,  # before initialize: no protocol negotiated yet
        _line(INITIALIZE),  # 2025-06-18, written right before the batch
        batch,
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        batch,
        _line({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
    ]
    db = tmp_path / "no-batch.db"
    process = _stdio_server(db)
    output, errors = process.communicate(b"".join(script), timeout=60)
    assert process.returncode == 0, errors.decode()
    answers = [json.loads(line) for line in output.splitlines()]
    assert sorted(str(answer["id"]) for answer in answers if answer["id"] is not None) == ["1", "3"]
    refused = [answer["error"] for answer in answers if answer["id"] is None]
    assert [error["code"] for error in refused] == [-32600] * 3
    assert "not on a session not initialized" in refused[0]["message"]
    assert all("not on protocol 2025-06-18" in error["message"] for error in refused[1:])
    assert _stored(db) == 0


@pytest.mark.slow
def test_mcp_stdio_sigterm_after_the_input_ended_stops_at_once(tmp_path: Path) -> None:
    # An MCP client closes stdin, waits (the Python SDK: 2 s), sends SIGTERM, and kills the
    # server 2 s later. A SIGTERM after the end of input still waited for the answers
    # owed (up to 30 s), so the kill came first and the lifespan never closed the service.
    db = tmp_path / "gave-up.db"
    settings = {"RECALLD_BUSY_TIMEOUT_MS": "3000", "RECALLD_LOCK_RETRY_SECONDS": "0.1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "recalld", "--db", str(db), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "RECALLD_EMBEDDER": "none", **settings},
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(_line(INITIALIZE))
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    blocker = apsw.Connection(str(db))
    blocker.setbusytimeout(60_000)
    blocker.execute("BEGIN IMMEDIATE")  # the call below waits for this write lock, then fails
    try:
        process.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        process.stdin.write(_call(2, "remember", {"content": "never answered"}))
        process.stdin.write(_line({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        process.stdin.flush()
        # The ping's answer means the call was read: it waits for the lock.
        assert json.loads(process.stdout.readline())["id"] == 3
        process.stdin.close()
        process.send_signal(signal.SIGTERM)
        assert process.stderr is not None
        output, errors = process.stdout.read(), process.stderr.read()  # until it exits
        process.wait(timeout=120)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        process.kill()  # (already gone unless an assert failed)
        process.wait(timeout=60)
        process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()
    assert process.returncode == 0, errors.decode()
    # Stopped at the signal: the call waiting for the lock was not waited for and its
    # "database is locked" answer never written.
    assert output == b"", output
    assert _stored(db) == 0


@pytest.mark.slow
def test_mcp_stdio_refuses_a_line_over_the_limit_without_holding_it(tmp_path: Path) -> None:
    # A line of any length was read whole into memory before anything looked at it (a
    # 200 MB line took 200 MB, and more to parse it). One over the limit is refused, read
    # past in chunks, and the session goes on; one just under it is read as before.
    start = b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "remember", '
    huge = start + b'"arguments": {"content": "' + b"x" * MAX_LINE_BYTES + b'"}}}\n'
    under = {"content": "y" * 60_000}
    script = [
        _line(INITIALIZE),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        huge,
        _call(3, "remember", under),
        _line({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
    ]
    db = tmp_path / "long.db"
    process = _stdio_server(db)
    output, errors = process.communicate(b"".join(script), timeout=120)
    assert process.returncode == 0, errors.decode()
    answers = [json.loads(line) for line in output.splitlines()]
    assert sorted(answer["id"] or 0 for answer in answers) == [0, 1, 3, 4]
    (refused,) = (answer["error"] for answer in answers if answer["id"] is None)
    assert refused["code"] == -32600
    assert refused["message"] == (
        f"Invalid request: the line is {len(huge) - 1} bytes, over the limit of "
        f"{MAX_LINE_BYTES} bytes for one message on stdio; nothing in it was read"
    )
    (stored,) = (answer["result"] for answer in answers if answer["id"] == 3)
    assert stored["isError"] is False
    assert _stored(db) == 1
    assert b"xxxx" not in errors


@pytest.mark.slow
def test_mcp_stdio_reads_a_line_with_the_largest_media_a_tool_takes(tmp_path: Path) -> None:
    # madeleine's remember takes an image and an audio clip inline, each up to
    # MAX_MEDIA_BYTES once decoded; a line cap of 16 MiB refused a 13 MiB image as an
    # invalid request ("nothing in it was read") that the tool itself accepts.
    media = base64.b64encode(b"\x00" * MAX_MEDIA_BYTES).decode()
    arguments = {"content": "the beach at dusk", "image": media, "audio": media}
    script = [
        _line(INITIALIZE),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _call(2, "remember", arguments),
    ]
    process = _stdio_server(tmp_path / "media.db", "--dialect", "madeleine")
    output, errors = process.communicate(b"".join(script), timeout=120)
    assert process.returncode == 0, errors.decode()
    (answered,) = (json.loads(line) for line in output.splitlines()[1:])
    assert answered["id"] == 2  # read and given to the tool, which names the image
    assert answered["result"]["isError"] is True
    assert answered["result"]["structuredContent"]["error"]["field"] == "image"


@pytest.mark.slow
def test_mcp_stdio_refuses_a_request_reusing_an_id_a_batch_waits_on(tmp_path: Path) -> None:
    # An answer carries only its request's id: a request outside a batch reusing the id
    # of one the batch waits on (MCP forbids reusing an id in a session) had its answer
    # put in the batch's array, and the batch's own answer written alone on a line.
    version = {**INITIALIZE["params"], "protocolVersion": "2025-03-26"}
    remembering = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "remember_conversation", "arguments": {"messages": CONVERSATION}},
    }
    script = [
        _line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": version}),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line([remembering, {"jsonrpc": "2.0", "id": 6, "method": "ping"}]),
        _line({"jsonrpc": "2.0", "id": 5, "method": "ping"}),  # the batch's id, reused
        _line([{"jsonrpc": "2.0", "id": 5, "method": "ping"}]),  # and in another batch
    ]
    db = tmp_path / "reused.db"
    process = _stdio_server(db)
    output, errors = process.communicate(b"".join(script), timeout=60)
    assert process.returncode == 0, errors.decode()
    answers = [json.loads(line) for line in output.splitlines()[1:]]
    lone = [answer for answer in answers if isinstance(answer, dict)]
    arrays = [answer for answer in answers if isinstance(answer, list)]
    assert [answer["id"] for answer in lone] == [5]
    assert lone[0]["error"]["code"] == -32600
    assert "id 5 is the id of a request not answered yet" in lone[0]["error"]["message"]
    assert lone[0]["error"]["data"] == {"field": "id"}
    batch, other = sorted(arrays, key=len, reverse=True)
    assert {answer["id"]: "result" in answer for answer in batch} == {5: True, 6: True}
    assert batch[[answer["id"] for answer in batch].index(5)]["result"]["isError"] is False
    assert [answer["error"]["code"] for answer in other] == [-32600]
    assert _stored(db) == len(CONVERSATION)


@pytest.mark.slow
def test_mcp_stdio_answers_each_request_sharing_an_id_outside_batches(tmp_path: Path) -> None:
    # Outside batches an answer has one place to go: two requests in flight with one id
    # (which MCP forbids) are each answered, as before batches were answered as arrays.
    script = [
        _line(INITIALIZE),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _call(5, "remember_conversation", {"messages": CONVERSATION}),
        _line({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
    ]
    process = _stdio_server(tmp_path / "shared.db")
    output, errors = process.communicate(b"".join(script), timeout=60)
    assert process.returncode == 0, errors.decode()
    answers = [json.loads(line) for line in output.splitlines()[1:]]
    assert [answer["id"] for answer in answers] == [5, 5]
    assert all("result" in answer for answer in answers), answers


@pytest.mark.slow
@pytest.mark.parametrize("ignored", [signal.SIGINT, signal.SIGHUP], ids=["SIGINT", "SIGHUP"])
def test_mcp_stdio_a_stop_signal_started_ignored_stays_ignored(
    tmp_path: Path, ignored: signal.Signals
) -> None:
    # nohup starts a process with SIGHUP ignored, a shell its background jobs with SIGINT
    # ignored, so that a hang-up or a Ctrl-C meant for others leaves them running; the
    # server's stop-signal receiver undid that, and stopped reading at such a signal.
    command = [sys.executable, "-m", "recalld", "--db", str(tmp_path / "kept.db"), "mcp"]
    ignoring = (
        "import os, signal, sys; "
        f"signal.signal({int(ignored)}, signal.SIG_IGN); "
        "os.execv(sys.executable, sys.argv[1:])"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", ignoring, *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "RECALLD_EMBEDDER": "none"},
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(_line(INITIALIZE))
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1  # serving, its receiver set
    process.send_signal(ignored)
    output, errors = process.communicate(
        _line({"jsonrpc": "2.0", "id": 2, "method": "ping"}), timeout=60
    )
    assert process.returncode == 0, errors.decode()
    assert [json.loads(line)["id"] for line in output.splitlines()] == [2]


@pytest.mark.slow
def test_mcp_stdio_answers_a_listen_of_a_batch_in_its_array(tmp_path: Path) -> None:
    # A subscriptions/listen is not waited for (it lasts until the client leaves), so
    # its answer was not held for the batch: on the 2025-03-26 session a batch needs,
    # the 2026-07-28 listen is refused at once, and that answer went out alone.
    version = {**INITIALIZE["params"], "protocolVersion": "2025-03-26"}
    listen = {"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen", "params": {}}
    script = [
        _line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": version}),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line([listen, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]),
    ]
    process = _stdio_server(tmp_path / "listen.db")
    output, errors = process.communicate(b"".join(script), timeout=60)
    assert process.returncode == 0, errors.decode()
    (batched,) = (json.loads(line) for line in output.splitlines()[1:])
    assert {answer["id"]: answer.get("error", {}).get("code") for answer in batched} == {
        "listen": -32601,
        2: None,
    }
