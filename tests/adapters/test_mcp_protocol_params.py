"""MCP request params the SDK cannot read, requests before initialize, and a second
initialize are refused naming what is wrong, on stdio as a raw client sends them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import apsw
import pytest

from tests.adapters.mcp_support import INITIALIZE


def _answers(db: Path, messages: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Each answer of a stdio server on ``db`` to ``messages``, piped whole, by id."""
    process = subprocess.run(
        [sys.executable, "-m", "recalld", "--db", str(db), "mcp"],
        input="".join(json.dumps(message) + "\n" for message in messages).encode(),
        capture_output=True,
        env={**os.environ, "RECALLD_EMBEDDER": "none"},
        timeout=120,
        check=True,
    )
    return {answer["id"]: answer for answer in map(json.loads, process.stdout.splitlines())}


def _call(number: str, params: dict[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": number, "method": "tools/call"}
    if params is not None:
        message["params"] = params
    return message


@pytest.mark.slow
def test_mcp_refuses_unreadable_params_naming_the_parameter(tmp_path: Path) -> None:
    # The SDK answered each with "Invalid request parameters" and empty data.
    bad_version = {**INITIALIZE["params"], "protocolVersion": 5}
    answers = _answers(
        tmp_path / "params.db",
        [
            {"jsonrpc": "2.0", "id": "version", "method": "initialize", "params": bad_version},
            INITIALIZE,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            _call("none", None),
            _call("nameless", {"arguments": {"content": "never stored"}}),
            _call("number", {"name": 5, "arguments": {"content": "never stored"}}),
            _call("list", {"name": "remember", "arguments": ["never stored"]}),
            {"jsonrpc": "2.0", "id": "read", "method": "resources/read", "params": {}},
        ],
    )
    expected = {
        "version": ("params.protocolVersion", "Input should be a valid string"),
        "none": ("params", "Field required"),
        "nameless": ("params.name", "Field required"),
        "number": ("params.name", "Input should be a valid string"),
        "list": ("params.arguments", "Input should be a valid dictionary"),
        "read": ("params.uri", "Field required"),
    }
    for number, (field, why) in expected.items():
        error = answers[number]["error"]
        assert error["code"] == -32602, answers[number]
        assert error["message"] == f"Invalid request parameters: {field}: {why}"
        assert error["data"] == [{"field": field, "message": why}]
    assert "result" in answers[1]  # the refused initialize changed nothing
    connection = apsw.Connection(str(tmp_path / "params.db"))
    assert connection.execute("SELECT count(*) FROM memories").fetchall() == [(0,)]
    connection.close()


@pytest.mark.slow
def test_mcp_request_before_initialize_is_told_to_initialize(tmp_path: Path) -> None:
    # "Invalid request parameters" for a tools/list without params sent the client
    # looking at its params; ping needs no handshake and still answers.
    answers = _answers(
        tmp_path / "early.db",
        [
            {"jsonrpc": "2.0", "id": "early", "method": "tools/list"},
            _call("write", {"name": "remember", "arguments": {"content": "too early"}}),
            {"jsonrpc": "2.0", "id": "ping", "method": "ping"},
        ],
    )
    for number in ("early", "write"):
        error = answers[number]["error"]
        assert error["code"] == -32602
        assert "not initialized" in error["message"]
        assert "send initialize" in error["message"]
    assert answers["ping"]["result"] == {}
    connection = apsw.Connection(str(tmp_path / "early.db"))
    assert connection.execute("SELECT count(*) FROM memories").fetchall() == [(0,)]
    connection.close()


@pytest.mark.slow
def test_mcp_refuses_a_second_initialize_and_keeps_the_session(tmp_path: Path) -> None:
    # The SDK answered a second initialize again and switched the session's protocol
    # version mid-session (2025-06-18 to 2024-11-05).
    older = {**INITIALIZE["params"], "protocolVersion": "2024-11-05"}
    answers = _answers(
        tmp_path / "again.db",
        [
            INITIALIZE,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "again", "method": "initialize", "params": older},
            _call("after", {"name": "remember", "arguments": {"content": "still served"}}),
        ],
    )
    assert answers[1]["result"]["protocolVersion"] == "2025-06-18"
    error = answers["again"]["error"]
    assert error["code"] == -32600
    assert "already initialized (protocol 2025-06-18)" in error["message"]
    assert answers["after"]["result"]["isError"] is False
