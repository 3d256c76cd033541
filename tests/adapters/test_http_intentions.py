"""REST for prospective memory over a real server: /v1/intentions, reminders from /v1/sense."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.adapters.http_support import ServerProcess

pytestmark = pytest.mark.slow

PHARMACY = {"lat": 48.853, "lon": 2.349}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory: Path = tmp_path_factory.mktemp("http_intentions")
    running = ServerProcess(directory / "intentions.db").start()
    yield running
    running.stop()


@pytest.fixture
def client(server: ServerProcess) -> Iterator[httpx.Client]:
    namespace = f"int-{uuid.uuid4().hex[:12]}"
    with httpx.Client(
        base_url=server.base_url, headers={"X-Recalld-Namespace": namespace}, timeout=30
    ) as opened:
        yield opened


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def test_http_intentions_create_list_get_cancel(client: httpx.Client) -> None:
    created = _ok(
        client.post(
            "/v1/intentions",
            json={"action": "send the report", "at": "next Friday 9:00", "zone": "Europe/Paris"},
        ),
        201,
    )
    assert created["resolved"][0]["field"] == "at"
    assert created["resolved"][0]["text"] == "next Friday 9:00"
    assert created["resolved"][0]["instant"].endswith(("+01:00", "+02:00"))
    assert created["next_due"] == created["resolved"][0]["instant"]
    listed = _ok(client.get("/v1/intentions"))["intentions"]
    assert [item["id"] for item in listed] == [created["id"]]
    assert _ok(client.get(f"/v1/intentions/{created['id']}"))["action"] == "send the report"
    cancelled = _ok(client.delete(f"/v1/intentions/{created['id']}"))
    assert cancelled["state"] == "cancelled"
    assert _ok(client.get("/v1/intentions"))["intentions"] == []
    assert len(_ok(client.get("/v1/intentions", params={"state": "all"}))["intentions"]) == 1
    missing = client.get("/v1/intentions/01NOSUCHINTENTION")
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found"
    memories = _ok(client.get("/v1/memories"))["memories"]
    assert [(item["id"], item["kind"]) for item in memories] == [(created["id"], "intention")]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action": "x"}, "triggers"),
        ({"action": "x", "place": PHARMACY, "radius_m": 0}, "radius_m"),
        ({"action": "x", "place": PHARMACY, "radius_m": 50_001}, "radius_m"),
        ({"action": "x", "at": "2020-01-01T00:00Z"}, "at"),
        ({"action": "x", "at": "09:00", "every": "now and then"}, "every"),
        ({"action": "x", "at": "the day after never"}, "at"),
        ({"action": "x", "mention": ["Anna"], "repeat": "twice"}, "repeat"),
    ],
)
def test_http_intentions_bad_input_is_422_naming_the_field(
    client: httpx.Client, body: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/intentions", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field
    assert _ok(client.get("/v1/intentions", params={"state": "all"}))["intentions"] == []


def test_http_sense_fires_reminders_into_the_pending_queue(client: httpx.Client) -> None:
    pharmacy = _ok(
        client.post(
            "/v1/intentions", json={"action": "pick up the prescription", "place": PHARMACY}
        ),
        201,
    )
    stretch = _ok(
        client.post(
            "/v1/intentions",
            json={"action": "stretch", "tags": ["desk"], "repeat": "every_time"},
        ),
        201,
    )
    fired = _ok(client.post("/v1/sense", json={"lat": 48.8533, "lon": 2.3491}))
    assert [(item["kind"], item["memory"]["id"]) for item in fired] == [
        ("reminder", pharmacy["id"])
    ]
    assert fired[0]["reminder"]["matched"][0]["trigger"] == "place"
    tagged = _ok(client.post("/v1/sense", json={"tags": ["desk"]}))
    assert [item["memory"]["id"] for item in tagged] == [stretch["id"]]
    delivered = _ok(client.get("/v1/recollections/pending"))
    assert [item["reminder"]["action"] for item in delivered] == [
        "pick up the prescription",
        "stretch",
    ]
    assert _ok(client.get("/v1/recollections/pending")) == []
