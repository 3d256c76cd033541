"""A search's ``min_score`` out of range is refused stating the range, on REST and over the
native MCP tools alike, whatever number was sent (review of pass c62).

An integer of 400 digits is valid JSON but no float: it was answered "Input should be a
valid number", as ``ttl_seconds`` was before c62.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from recalld.service import MemoryService
from tests.adapters.mcp_support import call, in_process, text

RULE = "must be a finite number from 0 to 1, got"


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("1" + "0" * 400, "1" + "0" * 28 + "..."),
        ("-1" + "0" * 400, "-1" + "0" * 27 + "..."),
        ("1.5", "1.5"),
    ],
)
def test_http_search_min_score_states_its_range(
    client: TestClient, service: MemoryService, sent: str, shown: str
) -> None:
    service.remember("a memory the refused search must not touch")
    refused = client.post(
        "/v1/search",
        content=f'{{"query": "memory", "min_score": {sent}}}',
        headers={"content-type": "application/json"},
    )
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"] == {
        "type": "validation_error",
        "field": "min_score",
        "message": f"{RULE} {shown}",
    }
    assert service.get(service.recent().memories[0].id).access_count == 0


@pytest.mark.anyio
async def test_native_search_min_score_states_its_range(tmp_path: Path) -> None:
    async with in_process(tmp_path / "s.db", "native")() as client:
        for tool, arguments in (("recall", {}), ("explain", {"id": "01M979E7PBA7KSG3722ZD2JB76"})):
            refused = await call(
                client, tool, {**arguments, "query": "memory", "min_score": 10**400}
            )
            assert refused.is_error
            assert text(refused).startswith("{"), (tool, text(refused))
            error = json.loads(text(refused))["error"]
            assert error["field"] == "min_score"
            assert error["message"] == f"{RULE} {'1' + '0' * 28}..."
