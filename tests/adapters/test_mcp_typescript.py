"""Interop: the official TypeScript MCP SDK client against recalld, over stdio and HTTP.

Needs Node.js and `npm ci --prefix tests/js` (``make test`` and ``.ci/run`` do
both). A missing Node fails the test instead of skipping it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.mcp_support import start_http_server, stop

SCRIPT = Path(__file__).resolve().parents[1] / "js" / "mcp_client.mjs"

# Per dialect: a remember call, a recall call that must find it, and how to read the hit.
CALLS: dict[str, list[dict[str, Any]]] = {
    "native": [
        {"name": "remember", "arguments": {"content": "Typescript clients can write here"}},
        {"name": "recall", "arguments": {"query": "typescript clients"}},
    ],
    "batbox": [
        {"name": "MemoryRemember", "arguments": {"content": "Typescript interop finding"}},
        {"name": "MemoryRecall", "arguments": {"query": "typescript interop", "limit": 3}},
    ],
    "chaoscore": [
        {
            "name": "chaoscore_remember",
            "arguments": {"key": "ts.key", "value": "typescript value", "tags": ["ts"]},
        },
        {
            "name": "chaoscore_recall",
            "arguments": {"query": "typescript", "response_format": "json"},
        },
    ],
    "rover": [
        {
            "name": "rover_memory",
            "arguments": {
                "action": "remember",
                "title": "ts",
                "content": "typescript rover memory",
                "tags": "ts,interop",
                "importance": 3,
            },
        },
        {"name": "rover_memory", "arguments": {"action": "recall", "query": "typescript rover"}},
    ],
}


def _node() -> str:
    node = shutil.which("node")
    assert node is not None, "Node.js is required for the TypeScript interop test (see .ci/run)"
    assert (SCRIPT.parent / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir(), (
        "run `npm ci --prefix tests/js` (make test does)"
    )
    return node


def _run(config: dict[str, Any]) -> dict[str, Any]:
    completed = subprocess.run(
        [_node(), str(SCRIPT), json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def _check(dialect: str, output: dict[str, Any]) -> None:
    tools = {tool["name"]: tool["inputSchema"] for tool in output["tools"]}
    results = output["results"]
    assert all(not result.get("isError") for result in results), results
    found = json.dumps(results[1])
    if dialect == "native":
        assert set(tools) == _names("native")
        assert tools["remember"]["required"] == ["content"]
        assert "Typescript clients" in results[1]["structuredContent"]["hits"][0]["prompt_line"]
    elif dialect == "batbox":
        assert tools["MemoryRecall"]["properties"]["limit"]["maximum"] == 10
        assert "kind" not in tools["MemoryRemember"]["properties"]
        assert tools["MemoryStatus"]["properties"] == {}
        hit = results[1]["structuredContent"]["results"][0]
        assert hit["content"] == "Typescript interop finding"
        assert hit["kind"] == "generated_observation"
    elif dialect == "chaoscore":
        assert tools["chaoscore_remember"]["properties"]["key"]["maxLength"] == 200
        assert tools["chaoscore_remember"]["required"] == ["key", "value"]
        records = json.loads(results[1]["content"][0]["text"])
        assert "ts.key" in [record["key"] for record in records]
    else:
        assert tools["rover_memory"]["properties"]["action"]["default"] == "list"
        envelope = json.loads(results[1]["content"][0]["text"])
        assert envelope["status"] == "success"
        assert "typescript rover memory" in found


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("ts") / "http.db"
    process, url = start_http_server(db)
    try:
        yield url
    finally:
        stop(process)


@pytest.mark.parametrize("dialect", sorted(CALLS))
def test_typescript_client_over_stdio(dialect: str, tmp_path: Path) -> None:
    output = _run(
        {
            "transport": "stdio",
            "command": sys.executable,
            "args": ["-m", "recalld", "--db", str(tmp_path / "ts.db"), "mcp", "--dialect", dialect],
            "env": {
                "RECALLD_SYNCHRONOUS": "NORMAL",
                "RECALLD_EMBEDDER": "none",
                "RECALLD_GRAPH_EXTRACTOR": "rules",
            },
            "calls": CALLS[dialect],
        }
    )
    _check(dialect, output)


@pytest.mark.parametrize("dialect", sorted(CALLS))
def test_typescript_client_over_http(dialect: str, http_url: str) -> None:
    output = _run({"transport": "http", "url": http_url, "calls": CALLS[dialect]})
    tools = {tool["name"] for tool in output["tools"]}
    assert {"remember", "MemoryRemember", "chaoscore_remember", "rover_memory"} <= tools
    own = [tool for tool in output["tools"] if tool["name"] in _names(dialect)]
    _check(dialect, {**output, "tools": own})


def _names(dialect: str) -> set[str]:
    return {
        "native": {
            "remember",
            "recall",
            "explain",
            "get",
            "update",
            "forget",
            "list",
            "stats",
            "remind",
            "intentions",
            "cancel_intention",
            "sense",
            "pending_recollections",
            "entities",
            "neighbourhood",
            "core_memory",
            "remember_conversation",
        },
        "batbox": {"MemoryRemember", "MemoryRecall", "MemoryStatus"},
        "chaoscore": {"chaoscore_remember", "chaoscore_recall", "chaoscore_forget"},
        "rover": {"rover_memory"},
    }[dialect]


def test_typescript_client_knowledge_dialect_over_stdio(tmp_path: Path) -> None:
    """A client of the MCP reference memory server switches by changing the command line."""
    calls = [
        {
            "name": "create_entities",
            "arguments": {
                "entities": [
                    {
                        "name": "Ts_User",
                        "entityType": "person",
                        "observations": ["Writes TypeScript"],
                    }
                ]
            },
        },
        {"name": "open_nodes", "arguments": {"names": ["Ts_User"]}},
        {"name": "read_graph", "arguments": {}},
    ]
    output = _run(
        {
            "transport": "stdio",
            "command": sys.executable,
            "args": [
                "-m",
                "recalld",
                "--db",
                str(tmp_path / "ts.db"),
                "mcp",
                "--dialect",
                "knowledge",
            ],
            "env": {
                "RECALLD_SYNCHRONOUS": "NORMAL",
                "RECALLD_EMBEDDER": "none",
                "RECALLD_GRAPH_EXTRACTOR": "rules",
            },
            "calls": calls,
        }
    )
    tools = {tool["name"]: tool["inputSchema"] for tool in output["tools"]}
    assert len(tools) == 9
    assert tools["create_entities"]["required"] == ["entities"]
    created, opened, graph = output["results"]
    assert not any(result.get("isError") for result in output["results"]), output["results"]
    assert created["structuredContent"]["entities"][0]["name"] == "Ts_User"
    [entity] = opened["structuredContent"]["entities"]
    assert entity["observations"][0] == "Writes TypeScript"
    assert "Ts_User" in [e["name"] for e in graph["structuredContent"]["entities"]]
