"""The REST side of issue 14: conversations, imports by format, the speaker filter, duplicates."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.adapters.http_support import ServerProcess

pytestmark = pytest.mark.slow
FIXTURES = Path(__file__).parent.parent / "fixtures" / "imports"


@pytest.fixture(
    scope="module",
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ],
)
def server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[ServerProcess]:
    """One `recalld serve` per store: a SQLite file, and (pytest --postgres) PostgreSQL."""
    directory: Path = tmp_path_factory.mktemp("http_first_run")
    if request.param == "postgres":
        make_database: Callable[[], str] = request.getfixturevalue("postgres_database")
        running = ServerProcess(make_database(), log_path=directory / "server.log").start()
    else:
        running = ServerProcess(directory / "first.db").start()
    yield running
    running.stop()


@pytest.fixture
def client(server: ServerProcess) -> Iterator[httpx.Client]:
    namespace = f"test-{uuid.uuid4().hex[:12]}"
    with httpx.Client(
        base_url=server.base_url, headers={"X-Recalld-Namespace": namespace}, timeout=30
    ) as opened:
        yield opened


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def test_http_conversation_ingestion_and_speaker_filter(client: httpx.Client) -> None:
    body = {
        "conversation": "chat-9",
        "messages": [
            {"speaker": "Ada", "content": "I keep bees on the roof.", "id": "a"},
            {"role": "assistant", "content": "How many hives do you have?", "id": "b"},
            {"role": "tool", "content": "{}", "id": "c"},
            {"speaker": "Ada", "content": "Two hives, since May.", "id": "d"},
        ],
    }
    report = _ok(client.post("/v1/conversations", json=body))
    assert (report["created"], report["skipped"]) == (3, 1)
    again = _ok(client.post("/v1/conversations", json=body))
    assert (again["created"], again["unchanged"]) == (0, 3)
    ada = _ok(client.get("/v1/memories", params={"speaker": "Ada"}))["memories"]
    assert sorted(memory["content"] for memory in ada) == [
        "I keep bees on the roof.",
        "Two hives, since May.",
    ]
    assert {memory["source"] for memory in ada} == {"recalld://conversation/chat-9"}
    hits = _ok(
        client.post(
            "/v1/search",
            json={"query": "hives", "filters": {"speaker": "assistant"}, "min_score": 0},
        )
    )
    assert [hit["memory"]["speaker"] for hit in hits] == ["assistant"]


def test_http_conversation_refuses_a_repeated_message_id(client: httpx.Client) -> None:
    messages = [
        {"id": "a", "speaker": "Ana", "content": "My flight is on Friday at 9am"},
        {"id": "a", "speaker": "Ana", "content": "ok"},
    ]
    response = client.post("/v1/conversations", json={"conversation": "d1", "messages": messages})
    assert response.status_code == 422, response.text
    assert "messages[1].id" in response.text
    assert "messages[0].id" in response.text
    assert _ok(client.get("/v1/stats"))["count"] == 0


def test_http_conversation_name_beside_speaker_says_to_give_one(client: httpx.Client) -> None:
    # It said "messages[1].name: Extra inputs are not permitted", as if name were unknown.
    messages = [
        {"role": "user", "content": "My flight is on Friday"},
        {"role": "user", "name": "Al", "speaker": "Bo", "content": "hello there"},
    ]
    response = client.post("/v1/conversations", json={"conversation": "n1", "messages": messages})
    assert response.status_code == 422, response.text
    assert response.json()["error"] == {
        "type": "validation_error",
        "field": "messages[1].name",
        "message": 'give "name" or "speaker", not both',
    }
    assert _ok(client.get("/v1/stats"))["count"] == 0


def test_http_import_by_format(client: httpx.Client) -> None:
    upload = (FIXTURES / "claude_conversations.json").read_bytes()
    report = _ok(client.post("/v1/import", params={"format": "claude"}, content=upload))
    assert report["format"] == "claude"
    assert report["created"] == 2
    assert [error["item"] for error in report["errors"]] == [2]
    hermes = (FIXTURES / "USER.md").read_bytes()
    report = _ok(client.post("/v1/import", params={"name": "USER.md"}, content=hermes))
    assert report["format"] == "hermes"
    assert _ok(client.get("/v1/core"))["user"]["entries"] == [
        "Name: Sam; prefers short answers",
        "Works in UTC+10",
    ]


def test_http_duplicate_receipt(client: httpx.Client) -> None:
    first = _ok(client.post("/v1/memories", json={"content": "The boiler is serviced in May"}))
    again = _ok(client.post("/v1/memories", json={"content": "The boiler is serviced  in May"}))
    assert (again["id"], again["status"]) == (first["id"], "duplicate")
