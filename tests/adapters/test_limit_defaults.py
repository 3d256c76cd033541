"""RECALLD_MAX_LIMIT below a surface's default limit: on the CLI, REST and every MCP
dialect a call without a limit gets the default held to the cap, and a limit given above
the cap is still refused, naming ``limit`` and the cap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from recalld.adapters.cli import cli
from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.service import MemoryService
from tests.adapters.conftest import LOOPBACK
from tests.adapters.mcp_support import call, in_process, text

CAP = 3
REFUSED = f"must be between 1 and {CAP}, got {CAP + 1}"


def _fill(service: MemoryService) -> str:
    """Five memories and five entities (more than the cap); the id of one memory."""
    for index in range(CAP + 2):
        service.remember(f"Alice met Bob in Paris, visit {index}", key=f"visit-{index}")
    service.knowledge.create_entities(
        [{"name": f"place {index}", "entityType": "place"} for index in range(CAP + 2)]
    )
    return service.list_memories(limit=1).memories[0].id


@pytest.fixture
def capped_settings(db_path: Path) -> Settings:
    return Settings(
        db=db_path, synchronous="NORMAL", embedder="none", graph_extractor="rules", max_limit=CAP
    )


@pytest.fixture
def capped_client(capped_settings: Settings) -> Iterator[tuple[TestClient, str]]:
    with MemoryService.open(capped_settings) as service:
        memory_id = _fill(service)
        app = create_app(service, capped_settings)
        with TestClient(app, client=LOOPBACK, base_url="http://127.0.0.1") as client:
            yield client, memory_id


def _count(answer: Any) -> int:
    if isinstance(answer, list):
        return len(answer)
    for name in ("memories", "entities", "relations"):
        if name in answer:
            return len(answer[name])
    raise AssertionError(answer)


def test_limit_default_rest_held_to_a_lower_cap(capped_client: tuple[TestClient, str]) -> None:
    client, memory_id = capped_client
    expected = {
        ("GET", "/v1/memories"): CAP,
        ("GET", "/v1/memories?order=updated"): CAP,
        ("POST", "/v1/search"): CAP,
        ("POST", "/v1/recall"): CAP,
        ("POST", "/recall"): CAP,
        ("POST", "/v1/context/recall"): CAP,
        ("GET", "/v1/graph/entities"): CAP,
        ("GET", "/v1/graph/relations"): 0,
        ("GET", "/v1/recollections/pending"): 0,
        ("POST", "/v1/recollections/drain"): 0,
    }
    for (method, path), count in expected.items():
        body = {"query": "Alice"} if method == "POST" and "recollections" not in path else None
        response = client.request(method, path, json=body)
        assert response.status_code == 200, (path, response.text)
        assert _count(response.json()) == count, path
    for path in ("/v1/graph/entities/place%200", "/v1/graph/neighbourhood?entity=place%200"):
        assert client.get(path).status_code == 200, path
    explained = client.post("/v1/explain", json={"query": "Alice", "id": memory_id})
    assert explained.status_code == 200, explained.text
    assert client.get(f"/v1/memories/{memory_id}/turns").status_code == 200


def test_limit_rest_above_a_lower_cap_refused(capped_client: tuple[TestClient, str]) -> None:
    client, _ = capped_client
    for method, path, body in [
        ("GET", f"/v1/memories?limit={CAP + 1}", None),
        ("GET", f"/v1/graph/relations?limit={CAP + 1}", None),
        ("GET", f"/v1/recollections/pending?limit={CAP + 1}", None),
        ("POST", "/v1/search", {"query": "Alice", "limit": CAP + 1}),
        ("POST", "/recall", {"query": "Alice", "limit": CAP + 1}),
    ]:
        response = client.request(method, path, json=body)
        assert response.status_code == 422, path
        error = response.json()["error"]
        assert (error["field"], error["message"]) == ("limit", REFUSED), path


def test_limit_default_rest_openapi_says_the_cap(capped_client: tuple[TestClient, str]) -> None:
    client, _ = capped_client
    document = client.get("/openapi.json").json()
    limit = document["components"]["schemas"]["QueryRequest"]["properties"]["limit"]
    assert (limit["type"], limit["maximum"], limit["default"]) == ("integer", CAP, CAP)
    listing = next(
        parameter
        for parameter in document["paths"]["/v1/memories"]["get"]["parameters"]
        if parameter["name"] == "limit"
    )
    assert (listing["schema"]["type"], listing["schema"]["maximum"]) == ("integer", CAP)


def test_limit_default_rest_openapi_caps_context_recall_k(
    capped_client: tuple[TestClient, str], client: TestClient
) -> None:
    # k is capped as limit is: the default the server uses is the one published.
    capped, _ = capped_client
    k = capped.get("/openapi.json").json()["components"]["schemas"]["ContextRecall"]
    assert (k["properties"]["k"]["maximum"], k["properties"]["k"]["default"]) == (CAP, CAP)
    # Under the default cap (1000), k's own maximum (100) is the lower, and stays.
    k = client.get("/openapi.json").json()["components"]["schemas"]["ContextRecall"]
    assert (k["properties"]["k"]["maximum"], k["properties"]["k"]["default"]) == (100, 5)


def test_limit_session_tells_the_browser_the_cap(capped_client: tuple[TestClient, str]) -> None:
    # The memory browser holds its own page sizes (25, 50, 100) to it.
    client, _ = capped_client
    response = client.get("/v1/session")
    assert response.status_code == 200, response.text
    assert response.json()["max_limit"] == CAP


def test_limit_default_cli_held_to_a_lower_cap(db_path: Path, capped_settings: Settings) -> None:
    with MemoryService.open(capped_settings) as service:
        _fill(service)
    runner = CliRunner()

    def invoke(*arguments: str) -> Any:
        result = runner.invoke(
            cli, ["--db", str(db_path), *arguments], env={"RECALLD_MAX_LIMIT": str(CAP)}
        )
        return result

    for command in (["list"], ["recent"], ["search", "Alice"], ["recall", "Alice"]):
        result = invoke(*command, "--json")
        assert result.exit_code == 0, (command, result.output)
        assert _count(json.loads(result.stdout)) == CAP, command
    for command in (["pending"], ["graph", "entities"], ["graph", "relations"]):
        result = invoke(*command, "--json")
        assert result.exit_code == 0, (command, result.output)
    refused = subprocess.run(
        [sys.executable, "-m", "recalld", "--db", str(db_path), "list", "--limit", str(CAP + 1)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "RECALLD_MAX_LIMIT": str(CAP)},
    )
    assert refused.returncode == 1
    assert f"limit: {REFUSED}" in refused.stderr
    assert "RECALLD_MAX_LIMIT" in invoke("list", "--help").output


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("dialect", "tool", "arguments", "count"),
    [
        ("native", "recall", {"query": "Alice"}, "limit"),
        ("native", "list", {}, "limit"),
        ("native", "entities", {}, "limit"),
        ("batbox", "MemoryRecall", {"query": "Alice"}, "limit"),
        ("chaoscore", "chaoscore_recall", {}, "limit"),
        ("chaoscore", "chaoscore_recall", {"query": "Alice"}, "limit"),
        ("rover", "rover_memory", {"action": "list"}, "limit"),
        ("rover", "rover_memory", {"action": "search", "query": "Alice"}, "limit"),
        ("madeleine", "recall", {"query": "Alice"}, "k"),
        ("knowledge", "read_graph", {}, "limit"),
    ],
)
async def test_limit_default_mcp_held_to_a_lower_cap(
    capped_settings: Settings, dialect: str, tool: str, arguments: dict[str, Any], count: str
) -> None:
    with MemoryService.open(capped_settings) as service:
        _fill(service)
    connect = in_process(capped_settings.db, dialect, max_limit=CAP)
    async with connect() as client:
        result = await call(client, tool, arguments)
        refused = await call(client, tool, {**arguments, count: CAP + 1})
    assert not result.is_error, text(result)
    assert "between 1 and" not in text(result)
    assert REFUSED in text(refused)
    assert count in text(refused)


NOT_AN_INTEGER = "Input should be a valid integer"


def test_limit_rest_null_refused_naming_the_field(capped_client: tuple[TestClient, str]) -> None:
    # Left out, a count is the default; null is no integer, as /openapi.json says.
    client, _ = capped_client
    for path, count in [
        ("/v1/search", "limit"),
        ("/v1/recall", "limit"),
        ("/recall", "limit"),
        ("/v1/context/recall", "k"),
    ]:
        response = client.post(path, json={"query": "Alice", count: None})
        assert response.status_code == 422, (path, response.text)
        error = response.json()["error"]
        assert (error["field"], error["message"]) == (count, NOT_AN_INTEGER), path


def test_limit_rest_text_refused_without_pydantics_prefix(
    capped_client: tuple[TestClient, str],
) -> None:
    # Review of pass f67: REST answered "Value error, must be an integer" (pydantic's
    # prefix for a validator's ValueError), where MCP and the CLI say "must be an integer".
    client, _ = capped_client
    for path, count in [("/v1/search", "limit"), ("/v1/context/recall", "k")]:
        response = client.post(path, json={"query": "Alice", count: "5"})
        assert response.status_code == 422, (path, response.text)
        error = response.json()["error"]
        assert (error["field"], error["message"]) == (count, "must be an integer"), path


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments", "items"),
    [
        ("recall", {"query": "Alice"}, "hits"),
        ("list", {}, "memories"),
        ("entities", {}, "entities"),
    ],
)
async def test_limit_mcp_native_null_is_the_default_held_to_the_cap(
    capped_settings: Settings, tool: str, arguments: dict[str, Any], items: str
) -> None:
    # A native tool reads an optional argument sent as null as left out (models send
    # null for what they do not use): the default, held to RECALLD_MAX_LIMIT.
    with MemoryService.open(capped_settings) as service:
        _fill(service)
    connect = in_process(capped_settings.db, "native", max_limit=CAP)
    async with connect() as client:
        answered = await call(client, tool, {**arguments, "limit": None})
    assert not answered.is_error, text(answered)
    assert answered.structured_content is not None
    assert len(answered.structured_content[items]) == CAP


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("dialect", "tool", "arguments", "count"),
    [
        ("batbox", "MemoryRecall", {"query": "Alice"}, "limit"),
        ("chaoscore", "chaoscore_recall", {"query": "Alice"}, "limit"),
        ("rover", "rover_memory", {"action": "list"}, "limit"),
        ("madeleine", "recall", {"query": "Alice"}, "k"),
    ],
)
async def test_limit_mcp_null_refused_naming_the_argument(
    capped_settings: Settings, dialect: str, tool: str, arguments: dict[str, Any], count: str
) -> None:
    with MemoryService.open(capped_settings) as service:
        _fill(service)
    connect = in_process(capped_settings.db, dialect, max_limit=CAP)
    async with connect() as client:
        schema = next(
            listed for listed in (await client.list_tools()).tools if listed.name == tool
        ).input_schema["properties"][count]
        refused = await call(client, tool, {**arguments, count: None})
    assert schema["type"] == "integer"
    assert "anyOf" not in schema
    assert refused.is_error
    assert NOT_AN_INTEGER in text(refused)
    assert count in text(refused)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (
            "recall",
            {"query": "Alice", "limit": "5"},
            "must be an integer from 1 to 100, got '5': send 5 as a JSON number, without quotes",
        ),
        ("list", {"limit": True}, "must be an integer from 1 to 100, got True"),
        (
            "entities",
            {"limit": "20"},
            "must be an integer from 1 to 100, got '20': send 20 as a JSON number, without quotes",
        ),
        (
            "neighbourhood",
            {"entity": "Alice", "depth": "2"},
            "must be an integer from 1 to 3, got '2': send 2 as a JSON number, without quotes",
        ),
    ],
)
async def test_limit_mcp_native_count_as_text_names_the_range(
    tmp_path: Path, tool: str, arguments: dict[str, Any], message: str
) -> None:
    # Review of pass f67: "limit": "5" answered "must be an integer", without the range.
    async with in_process(tmp_path / "m.db", "native")() as client:
        refused = await call(client, tool, arguments)
    assert refused.is_error
    assert refused.structured_content is not None
    field = "depth" if tool == "neighbourhood" else "limit"
    assert refused.structured_content["error"]["field"] == field
    assert refused.structured_content["error"]["message"] == message
