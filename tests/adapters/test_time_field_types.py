"""A time field given a number over REST and MCP names the field, as the library does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.adapters.mcp_support import call, in_process, structured, text

EXPECTED = "expected an ISO 8601 date-time as text, got int"


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/memories", {"content": "hi", "at": 1700000000}, "at"),
        (
            "/v1/conversations",
            {"messages": [{"role": "user", "content": "hi", "at": 1700000000}]},
            "messages[0].at",
        ),
    ],
)
def test_rest_time_given_a_number_names_the_field(
    client: TestClient, path: str, body: dict[str, Any], field: str
) -> None:
    # Review of e60: the library's fix left REST answering "at.datetime: Input should be
    # a valid datetime" (a field that does not exist, in pydantic's words).
    response = client.post(path, json=body)
    assert response.status_code == 422
    assert response.json()["error"] == {
        "type": "validation_error",
        "field": field,
        "message": EXPECTED,
    }
    assert client.get("/v1/memories").json()["memories"] == []


@pytest.mark.anyio
async def test_mcp_time_given_a_number_names_the_field(tmp_path: Path) -> None:
    async with in_process(tmp_path / "t.db", "native")() as client:
        messages = [{"role": "user", "content": "hi", "at": 1700000000}]
        result = await call(client, "remember_conversation", {"messages": messages})
        assert result.is_error
        assert EXPECTED in text(result)
        assert '"messages[0].at"' in text(result)
        assert (await structured(client, "stats", {}))["count"] == 0


# Review of pass f67: a native tool's time argument given a number (Unix seconds) or a
# boolean answered "Input should be a valid string", not what REST and the library say.
NATIVE_TIMES = [
    ("remember", {"content": "hi", "at": 1700000000}, "at", "int"),
    ("recall", {"query": "hi", "since": 1700000000}, "since", "int"),
    ("explain", {"query": "hi", "id": "x", "until": 1.5}, "until", "float"),
    ("list", {"until": True}, "until", "bool"),
    ("update", {"id": "x", "at": 1700000000}, "at", "int"),
    ("remember_conversation", {"messages": [], "at": 1700000000}, "at", "int"),
    ("remind", {"action": "call Ada", "at": 1700000000}, "at", "int"),
    ("remind", {"action": "call Ada", "at": "2030-01-01T09:00:00Z", "until": 5}, "until", "int"),
    ("remind", {"action": "call Ada", "mention": ["Ada"], "expires": 5}, "expires", "int"),
    ("sense", {"text": "hi", "at": 1700000000}, "at", "int"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "arguments", "field", "kind"), NATIVE_TIMES)
async def test_mcp_native_time_given_a_number_names_the_field(
    tmp_path: Path, tool: str, arguments: dict[str, Any], field: str, kind: str
) -> None:
    async with in_process(tmp_path / "t.db", "native")() as client:
        result = await call(client, tool, arguments)
        assert result.is_error
        assert result.structured_content == {
            "error": {
                "type": "validation_error",
                "field": field,
                "message": f"expected an ISO 8601 date-time as text, got {kind}",
            }
        }
        assert (await structured(client, "stats", {}))["count"] == 0
        assert (await structured(client, "intentions", {"state": "all"}))["intentions"] == []
