"""An entity's observations past the first its detail shows are reachable a page at a time
(adversarial pass e65): the library's ``graph.observations``, ``GET
/v1/graph/observations``, ``recalld graph observations`` and the detail's
``observations_cursor``. Before, only MCP's ``open_nodes`` returned them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from recalld.adapters.cli import cli
from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.errors import NotFoundError, ValidationError
from recalld.service import MemoryService
from tests.adapters.conftest import LOOPBACK


def _settings(database: Path | str) -> Settings:
    return Settings(db=database, synchronous="NORMAL", embedder="none", graph_page_size=3)


def _entity(service: MemoryService, name: str, count: int, namespace: str | None = None) -> None:
    service.knowledge.create_entities(
        [
            {
                "name": name,
                "entityType": "person",
                "observations": [f"{name} fact {number}" for number in range(count)],
            }
        ],
        namespace=namespace,
    )


def test_observations_page_past_the_first_the_detail_shows(any_database: Path | str) -> None:
    with MemoryService.open(_settings(any_database)) as service:
        _entity(service, "Anna", 7)
        detail = service.graph.entity("Anna")
        assert len(detail.observations) == 3
        assert detail.observations_cursor is not None
        seen = [observation.content for observation in detail.observations]
        cursor: str | None = detail.observations_cursor
        while cursor is not None:
            page = service.graph.observations("Anna", limit=2, cursor=cursor)
            assert page.entity == "Anna"
            seen += [observation.content for observation in page.observations]
            cursor = page.next_cursor
        assert seen == [f"Anna fact {number}" for number in range(7)]
        first = service.graph.observations("anna")
        # The default page is 100: all seven, and nothing after them.
        assert len(first.observations) == 7
        assert first.next_cursor is None


def test_entity_detail_has_no_observations_cursor_when_all_are_shown(tmp_path: Path) -> None:
    with MemoryService.open(_settings(tmp_path / "all.db")) as service:
        _entity(service, "Anna", 3)
        assert service.graph.entity("Anna").observations_cursor is None
        _entity(service, "Bruno", 0)
        assert service.graph.observations("Bruno").observations == []


def test_observations_refuse_another_entitys_cursor_and_bad_limits(tmp_path: Path) -> None:
    with MemoryService.open(_settings(tmp_path / "refused.db")) as service:
        _entity(service, "Anna", 5)
        _entity(service, "Bruno", 5)
        cursor = service.graph.entity("Anna").observations_cursor
        assert cursor is not None
        with pytest.raises(ValidationError) as refused:
            service.graph.observations("Bruno", cursor=cursor)
        assert refused.value.field == "cursor"
        with pytest.raises(ValidationError) as refused:
            service.graph.observations("Bruno", cursor=service.graph.relations().next_cursor or "x")
        assert refused.value.field == "cursor"
        with pytest.raises(ValidationError) as refused:
            service.graph.observations("Anna", limit=0)
        assert refused.value.field == "limit"
        with pytest.raises(NotFoundError):
            service.graph.observations("Carla")


def test_observations_stay_in_their_namespace(tmp_path: Path) -> None:
    with MemoryService.open(_settings(tmp_path / "walls.db")) as service:
        _entity(service, "Anna", 5, namespace="alpha")
        cursor = service.graph.entity("Anna", namespace="alpha").observations_cursor
        _entity(service, "Anna", 1, namespace="beta")
        with pytest.raises(ValidationError):
            # Anna of beta is another entity: alpha's cursor does not page it.
            service.graph.observations("Anna", cursor=cursor, namespace="beta")
        assert [
            observation.content
            for observation in service.graph.observations("Anna", namespace="beta").observations
        ] == ["Anna fact 0"]


def test_rest_graph_observations_pages_an_entity(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "rest.db")
    with MemoryService.open(settings) as service:
        _entity(service, "Anna", 5)
        app = create_app(service, settings)
        with TestClient(app, client=LOOPBACK, base_url="http://127.0.0.1") as client:
            detail = client.get("/v1/graph/entities/Anna")
            assert detail.status_code == 200, detail.text
            cursor = detail.json()["observations_cursor"]
            assert cursor
            page = client.get("/v1/graph/observations", params={"entity": "Anna", "cursor": cursor})
            assert page.status_code == 200, page.text
            assert [item["content"] for item in page.json()["observations"]] == [
                "Anna fact 3",
                "Anna fact 4",
            ]
            assert page.json()["next_cursor"] is None
            unknown = client.get("/v1/graph/observations", params={"entity": "Carla"})
            assert unknown.status_code == 404, unknown.text
            too_many = client.get("/v1/graph/observations", params={"entity": "Anna", "limit": 0})
            assert too_many.status_code == 422, too_many.text
            assert "limit" in too_many.text


def test_cli_graph_observations_and_show_point_past_the_first(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    with MemoryService.open(_settings(database)) as service:
        _entity(service, "Anna", 5)
    environment = {"RECALLD_EMBEDDER": "none", "RECALLD_GRAPH_PAGE_SIZE": "3"}
    shown = CliRunner().invoke(
        cli, ["--db", str(database), "graph", "show", "Anna"], env=environment
    )
    assert shown.exit_code == 0, shown.output
    assert "more observations: recalld graph observations Anna --cursor " in shown.output
    cursor = shown.output.split("--cursor ", 1)[1].split()[0]
    listed = CliRunner().invoke(
        cli,
        ["--db", str(database), "graph", "observations", "Anna", "--cursor", cursor],
        env=environment,
    )
    assert listed.exit_code == 0, listed.output
    assert "Anna fact 3" in listed.output
    assert "Anna fact 4" in listed.output
    assert "Anna fact 2" not in listed.output
    paged = CliRunner().invoke(
        cli,
        ["--db", str(database), "graph", "observations", "Anna", "--limit", "2", "--json"],
        env=environment,
    )
    assert paged.exit_code == 0, paged.output
    answer = json.loads(paged.output)
    assert len(answer["observations"]) == 2
    assert answer["next_cursor"]
