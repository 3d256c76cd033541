"""The /v1/graph routes over a real server: entities, one entity, relations, neighbourhood,
batbox /status with the real graph, and the token scopes that guard them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.sqlite import SQLiteStore
from recalld.tokens import TokenRegistry
from tests.adapters.http_support import ServerProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    db = tmp_path_factory.mktemp("http_graph") / "graph.db"
    settings = Settings(db=db, synchronous="NORMAL", embedder="none", graph_extractor="rules")
    with MemoryService.open(settings) as service:
        service.remember("Kate: my sister Anna moved to Porto.", namespace="alpha")
        service.remember("Anna's bakery is in Porto.", namespace="alpha")
        service.remember("Bruno went to Oslo.", namespace="beta")
        service.new_worker().run_until_idle()
    running = ServerProcess(db).start()
    yield running, db
    running.stop()


def _get(server: ServerProcess, path: str, namespace: str = "alpha", **params: Any) -> Any:
    response = httpx.get(
        server.base_url + path,
        params=params,
        headers={"X-Recalld-Namespace": namespace},
        timeout=30,
    )
    return response


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def test_http_graph_entities_detail_relations_and_neighbourhood(
    server: tuple[ServerProcess, Path],
) -> None:
    running, _ = server
    listed = _ok(_get(running, "/v1/graph/entities"))
    names = [entity["name"] for entity in listed["entities"]]
    assert {"Kate", "Anna", "Porto", "bakery"} <= set(names)
    assert "Bruno" not in names  # another namespace
    paged = _ok(_get(running, "/v1/graph/entities", limit=2))
    assert len(paged["entities"]) == 2
    assert paged["next_cursor"]
    following = _ok(_get(running, "/v1/graph/entities", limit=2, cursor=paged["next_cursor"]))
    assert following["entities"][0]["name"] not in [e["name"] for e in paged["entities"]]
    assert [
        e["name"] for e in _ok(_get(running, "/v1/graph/entities", query="port"))["entities"]
    ] == ["Porto"]
    detail = _ok(_get(running, "/v1/graph/entities/anna"))
    assert detail["entity"]["name"] == "Anna"
    assert len(detail["mentions"]) == 2
    assert {(r["subject"], r["predicate"], r["object"]) for r in detail["relations"]} == {
        ("Kate", "sister", "Anna"),
        ("Anna", "has", "bakery"),
    }
    relations = _ok(_get(running, "/v1/graph/relations", entity="Kate"))
    assert [r["object"] for r in relations["relations"]] == ["Anna"]
    only_has = _ok(_get(running, "/v1/graph/relations", predicate="has"))
    assert [r["subject"] for r in only_has["relations"]] == ["Anna"]
    around = _ok(_get(running, "/v1/graph/neighbourhood", entity="Kate", depth=2))
    assert {e["name"] for e in around["entities"]} == {"Anna", "bakery"}
    assert around["depth"] == 2


def test_http_graph_errors_are_json(server: tuple[ServerProcess, Path]) -> None:
    running, _ = server
    missing = _get(running, "/v1/graph/entities/Nobody")
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found"
    assert _get(running, "/v1/graph/entities/Bruno").status_code == 404  # other namespace
    too_deep = _get(running, "/v1/graph/neighbourhood", entity="Kate", depth=7)
    assert too_deep.status_code == 422
    assert too_deep.json()["error"]["field"] == "depth"
    bad_cursor = _get(running, "/v1/graph/entities", cursor="garbage")
    assert bad_cursor.status_code == 422
    assert bad_cursor.json()["error"]["field"] == "cursor"
    unknown = _get(running, "/v1/graph/relations", entity="Nobody")
    assert unknown.status_code == 404
    # Visible text with no letter or digit is a name the schema allows: none has it.
    symbols = _get(running, "/v1/graph/entities/%22%22")
    assert symbols.status_code == 404
    assert symbols.json()["error"]["type"] == "not_found"
    assert _get(running, "/v1/graph/neighbourhood", entity="--").status_code == 404


def test_http_graph_batbox_status_reports_the_graph(server: tuple[ServerProcess, Path]) -> None:
    running, _ = server
    status = _ok(_get(running, "/status"))
    graph = status["graph"]
    assert graph["state"] == "ready"
    assert graph["entities"] == len(_ok(_get(running, "/v1/graph/entities"))["entities"])
    assert graph["relations"] == 2
    assert graph["extractor"] == "rules/v1"


def test_http_graph_routes_are_scoped_by_token(tmp_path: Path) -> None:
    db = tmp_path / "scoped.db"
    store = SQLiteStore(db)
    try:
        other = TokenRegistry(store).create("other", {"beta": "read"}).token
        reader = TokenRegistry(store).create("reader", {"alpha": "read"}).token
    finally:
        store.close()
    running = ServerProcess(db).start()
    try:
        for path, params in (
            ("/v1/graph/entities", {}),
            ("/v1/graph/relations", {}),
            ("/v1/graph/entities/Kate", {}),
            ("/v1/graph/neighbourhood", {"entity": "Kate"}),
        ):
            headers = {"X-Recalld-Namespace": "alpha"}
            anonymous = httpx.get(running.base_url + path, params=params, headers=headers)
            assert anonymous.status_code == 401, path
            denied = httpx.get(
                running.base_url + path,
                params=params,
                headers={**headers, "Authorization": f"Bearer {other}"},
            )
            assert denied.status_code == 403, path
            allowed = httpx.get(
                running.base_url + path,
                params=params,
                headers={**headers, "Authorization": f"Bearer {reader}"},
            )
            assert allowed.status_code in (200, 404), path
    finally:
        running.stop()
