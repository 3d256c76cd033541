"""An entity's detail lists its first observations, not all of them (adversarial pass f64):
an entity gathers any number (the knowledge tools add 1,000 a call), and one of 10,000
made a detail of a megabyte (`GET /v1/graph/entities/{name}`, `recalld graph show`, the
browser's entity page), read whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.service import MemoryService


def _settings(database: Path | str) -> Settings:
    return Settings(db=database, synchronous="NORMAL", embedder="none", graph_page_size=3)


def _anna(service: MemoryService, count: int) -> None:
    service.knowledge.create_entities(
        [
            {
                "name": "Anna",
                "entityType": "person",
                "observations": [f"fact {number}" for number in range(count)],
            }
        ]
    )


def test_entity_detail_lists_its_first_observations_and_counts_them_all(
    any_database: Path | str,
) -> None:
    with MemoryService.open(_settings(any_database)) as service:
        _anna(service, 5)
        detail = service.graph.entity("Anna")
        # Before: all five, though graph_page_size bounds every other list of the detail.
        assert [observation.content for observation in detail.observations] == [
            "fact 0",
            "fact 1",
            "fact 2",
        ]
        assert detail.entity.observations == 5
        asked = service.graph.entity("Anna", observations=5)
        assert [observation.content for observation in asked.observations][-1] == "fact 4"


def test_entity_detail_refuses_an_observation_count_out_of_bounds(tmp_path: Path) -> None:
    with MemoryService.open(_settings(tmp_path / "bounds.db")) as service:
        _anna(service, 1)
        with pytest.raises(ValidationError) as refused:
            service.graph.entity("Anna", observations=0)
        assert refused.value.field == "observations"
        assert "between 1 and" in str(refused.value)


def test_cli_graph_show_says_it_shows_the_first_observations(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    with MemoryService.open(_settings(database)) as service:
        _anna(service, 5)
    shown = CliRunner().invoke(
        cli,
        ["--db", str(database), "graph", "show", "Anna"],
        env={"RECALLD_EMBEDDER": "none", "RECALLD_GRAPH_PAGE_SIZE": "3"},
        catch_exceptions=False,
    )
    assert shown.exit_code == 0, shown.output
    assert "observation: fact 2" in shown.output
    assert "fact 3" not in shown.output
    assert "the first 3 of 5 observations" in shown.output
