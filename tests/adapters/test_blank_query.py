"""A blank query is refused naming ``query`` on every surface that searches by text
(library, REST, CLI), as the MCP search tools refuse one: it matches nothing, and no
hits read as "nothing stored about that" (review of pass e69). chaoscore's recall, which
lists the newest records for a blank query, still does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from recalld.adapters.cli import cli
from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.service import MemoryService
from tests.adapters.conftest import LOOPBACK
from tests.adapters.mcp_support import call, in_process, text

BLANKS = ["", "   ", "\t\n"]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[MemoryService]:
    settings = Settings(db=tmp_path / "b.db", embedder="none", graph_extractor="rules")
    with MemoryService.open(settings) as opened:
        opened.remember("the cat likes fish")
        yield opened


@pytest.mark.parametrize("query", BLANKS)
def test_blank_query_library_search_recall_and_explain_refuse_it(
    service: MemoryService, query: str
) -> None:
    memory_id = service.list_memories(limit=1).memories[0].id
    for attempt in (
        lambda: service.search(query),
        lambda: service.recall(query),
        lambda: service.explain(query, memory_id),
    ):
        with pytest.raises(ValidationError) as refused:
            attempt()
        assert refused.value.field == "query"
        assert "blank" in str(refused.value)
    assert service.search("cat")


@pytest.mark.parametrize("query", BLANKS)
def test_blank_query_rest_refuses_it(service: MemoryService, query: str) -> None:
    memory_id = service.list_memories(limit=1).memories[0].id
    app = create_app(service, service.settings)
    with TestClient(app, client=LOOPBACK, base_url="http://127.0.0.1") as client:
        for path, body in [
            ("/v1/search", {"query": query}),
            ("/v1/recall", {"query": query}),
            ("/v1/explain", {"query": query, "id": memory_id}),
            ("/recall", {"query": query}),
        ]:
            answer = client.post(path, json=body)
            assert answer.status_code == 422, (path, answer.text)
            assert "query" in answer.text, (path, answer.text)
        found = client.post("/v1/search", json={"query": "cat"})
    assert found.status_code == 200
    accesses = service.list_memories(limit=1).memories[0].access_count
    assert accesses == 0  # a refused recall counted no access


def test_blank_query_cli_refuses_it(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    runner = CliRunner()
    assert runner.invoke(cli, ["--db", str(db), "remember", "the cat likes fish"]).exit_code == 0
    for command in ("recall", "search"):
        result = runner.invoke(cli, ["--db", str(db), command, " ", "--json"])
        assert result.exit_code != 0, (command, result.output)
        assert "query" in result.output, (command, result.output)
        assert "blank" in result.output, (command, result.output)


@pytest.mark.anyio
async def test_blank_query_chaoscore_recall_still_lists_the_newest(tmp_path: Path) -> None:
    async with in_process(tmp_path / "c.db", "chaoscore")() as client:
        await call(client, "chaoscore_remember", {"key": "cat", "value": "likes fish"})
        listed = await call(client, "chaoscore_recall", {"query": " ", "response_format": "json"})
    assert not listed.is_error, text(listed)
    assert [record["key"] for record in json.loads(text(listed))] == ["cat"]


def test_blank_query_openapi_says_a_query_is_not_blank(service: MemoryService) -> None:
    app = create_app(service, service.settings)
    with TestClient(app, client=LOOPBACK, base_url="http://127.0.0.1") as client:
        schemas = client.get("/openapi.json").json()["components"]["schemas"]
    for name in ("QueryRequest", "ExplainRequest", "BatboxRecall"):
        assert schemas[name]["properties"]["query"]["pattern"] == "\\S", name


def test_blank_query_only_ecma_white_space_is_blank(service: MemoryService) -> None:
    # The published pattern's \S is ECMA-262's: U+0085 is no white space there.
    assert service.search("\x85") == []
    with pytest.raises(ValidationError):
        service.search("\u3000\ufeff")


@pytest.mark.anyio
@pytest.mark.parametrize("blank", ["\ufeff", " \ufeff\u3000", "\x1c"])
async def test_blank_query_chaoscore_lists_the_newest_for_what_search_calls_blank(
    tmp_path: Path, blank: str
) -> None:
    # Integration read, stop 69: chaoscore asked str.strip() whether a query was blank and
    # the service asks ECMAScript's spaces, so a BOM was "not blank" to chaoscore, which then
    # searched it and answered the service's "query is blank" instead of the newest records.
    async with in_process(tmp_path / "c.db", "chaoscore")() as client:
        await call(client, "chaoscore_remember", {"key": "cat", "value": "likes fish"})
        listed = await call(client, "chaoscore_recall", {"query": blank, "response_format": "json"})
    assert not listed.is_error, text(listed)
    assert [record["key"] for record in json.loads(text(listed))] == ["cat"]
