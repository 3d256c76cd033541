"""The stdio transport's JSON-RPC batches at a stop signal, driven without a subprocess:
the signal must land between two messages of one batch, which only a direct drive of
the reader can place."""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.shared.message import SessionMessage

from recalld.adapters._stdio import BATCH_PROTOCOL, _StdinLines

pytestmark = pytest.mark.anyio


async def test_a_stop_signal_mid_batch_answers_its_unread_requests_in_the_array() -> None:
    # A stop signal left the rest of a batch unread, and its requests unanswered: the
    # array held the answers to the messages read before the stop and nothing for the
    # others, where JSON-RPC has it hold an answer to every request of the batch.
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
        {"jsonrpc": "2.0", "id": "three", "method": "tools/list"},
    ]
    reading, writing = os.pipe()
    os.write(writing, (json.dumps(batch) + "\n").encode())
    handle = os.fdopen(reading, "rb")
    lines = _StdinLines(handle)
    sent, written = anyio.create_memory_object_stream[SessionMessage](10)
    lines.refused = sent
    lines.negotiation.version = BATCH_PROTOCOL
    with sent, written, handle, anyio.fail_after(30):
        first = await lines.__anext__()
        assert json.loads(first)["id"] == 1
        lines.stop()  # a stop signal, before the rest of the batch is read
        answer = types.JSONRPCResponse(jsonrpc="2.0", id=1, result={})
        assert await lines.batches.hold(answer, sent.send)  # held for the array
        lines.unanswered.settle(1)
        with pytest.raises(StopAsyncIteration):
            await lines.__anext__()
        message: Any = (await written.receive()).message
        # The end of input, for the reader thread to end before the loop does.
        os.close(writing)
        with lines._send, lines._receive:
            assert await lines._receive.receive() is None
    answers = json.loads(message.model_dump_json(by_alias=True, exclude_unset=True))
    assert {answer["id"]: answer.get("error", {}).get("code") for answer in answers} == {
        1: None,
        2: -32600,
        "three": -32600,
    }
    (unread, *_) = (answer for answer in answers if answer["id"] == 2)
    assert unread["error"]["message"] == (
        "the server is stopping: this request of the batch was not run"
    )
