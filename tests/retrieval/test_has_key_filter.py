"""The ``has_key`` filter: key/value records written with a key, or memories without one,
kept or left out by the store before the limit is cut, on both stores and every surface."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from recalld.adapters.cli import cli
from recalld.adapters.http_api import create_app
from recalld.retrieval.pool import Mode
from recalld.service import MemoryService
from tests.adapters.conftest import LOOPBACK
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

KEYLESS = 30


@pytest.fixture
def keyed_service(any_database: Path | str, clock: FakeClock) -> Iterator[MemoryService]:
    """A service (hashing embedder, every memory embedded) holding one keyed record about a
    garden gate behind 30 keyless notes that say "garden" more often."""
    with MemoryService.open(semantic_settings(any_database), clock=clock) as opened:
        opened.remember("garden gate code 4411", key="garden.gate", kind="kv")
        for number in range(KEYLESS):
            opened.remember(f"garden garden note {number} about the garden", kind="kv")
        opened.new_worker().run_until_idle()
        yield opened


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "vector"])
def test_search_with_has_key_finds_the_record_behind_keyless_notes(
    keyed_service: MemoryService, mode: Mode
) -> None:
    hits = keyed_service.search(
        "garden", filters={"has_key": True}, limit=1, mode=mode, min_score=0.0
    )
    assert [hit.memory.key for hit in hits] == ["garden.gate"]
    unkeyed = keyed_service.search(
        "garden", filters={"has_key": False}, limit=50, mode=mode, min_score=0.0
    )
    assert len(unkeyed) == KEYLESS
    assert all(hit.memory.key is None for hit in unkeyed)


def test_listing_with_has_key(keyed_service: MemoryService) -> None:
    newest = keyed_service.recent(filters={"has_key": True}, limit=1).memories
    assert [memory.key for memory in newest] == ["garden.gate"]
    listed = keyed_service.list_memories(filters={"has_key": False}, limit=100).memories
    assert len(listed) == KEYLESS


def test_explain_names_has_key(keyed_service: MemoryService) -> None:
    record = keyed_service.get(key="garden.gate")
    explained = keyed_service.explain("garden", record.id, filters={"has_key": False})
    assert explained.stage == "excluded"
    assert explained.excluded_by == ["has_key"]


def test_has_key_must_be_a_boolean(keyed_service: MemoryService) -> None:
    from recalld.errors import ValidationError

    with pytest.raises(ValidationError, match="has_key"):
        keyed_service.search("garden", filters={"has_key": "yes"})


def test_rest_and_cli_filter_by_key(tmp_path: Path, clock: FakeClock) -> None:
    settings = semantic_settings(tmp_path / "k.db")
    with MemoryService.open(settings, clock=clock) as service:
        service.remember("garden gate code 4411", key="garden.gate", kind="kv")
        service.remember("garden garden note", kind="kv")
        app = create_app(service, settings)
        with TestClient(app, client=LOOPBACK, base_url="http://127.0.0.1") as client:
            listed = client.get("/v1/memories", params={"has_key": "true"})
            assert listed.status_code == 200, listed.text
            assert [m["key"] for m in listed.json()["memories"]] == ["garden.gate"]
            refused = client.get("/v1/memories", params={"has_key": "maybe"})
            assert refused.status_code == 422
            assert "has_key" in refused.text
            found = client.post(
                "/v1/search",
                json={"query": "garden", "filters": {"has_key": False}, "min_score": 0},
            )
            assert found.status_code == 200, found.text
            assert [hit["memory"]["key"] for hit in found.json()] == [None]
    result = CliRunner().invoke(
        cli,
        ["list", "--no-key", "--json"],
        env={"RECALLD_DB": str(tmp_path / "k.db"), "RECALLD_EMBEDDER": "none"},
    )
    assert result.exit_code == 0, result.output
    assert [memory["key"] for memory in json.loads(result.output)["memories"]] == [None]


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "vector"])
def test_has_key_holds_on_the_period_told_after_and_graph_paths(
    any_database: Path | str, clock: FakeClock, mode: Mode
) -> None:
    # Each path that finds candidates of its own (a named period's memories, those told
    # the week after it, the graph's entities) must keep to the filter (review of pass x63).
    settings = semantic_settings(any_database, graph_recall=True)
    with MemoryService.open(settings, clock=clock) as service:
        for number in range(4):
            for key in (f"alice.note{number}", None):
                service.remember(
                    f"Alice moved the staging server to Melbourne, note {number}",
                    key=key,
                    kind="kv",
                    at=datetime(2026, 6, 3 + number, 12, tzinfo=UTC),
                )
                service.remember(
                    f"Yesterday I fixed my bike with Alice, part {number}",
                    key=None if key is None else f"{key}.bike",
                )
        service.new_worker().run_until_idle()
        queries = ["what did Alice do in June", "what happened last weekend", "Alice Melbourne"]
        for has_key in (True, False):
            for query in queries:
                hits = service.search(
                    query, filters={"has_key": has_key}, limit=50, mode=mode, min_score=0.0
                )
                assert hits, query
                assert all((hit.memory.key is not None) == has_key for hit in hits), query
