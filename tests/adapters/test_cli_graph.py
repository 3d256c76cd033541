"""`recalld graph ...`, `recalld import --format mcp-memory` and the graph in `recalld status`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from recalld.adapters.cli import cli
from recalld.errors import ConflictError
from recalld.worker import Worker

FIXTURE = Path(__file__).parent.parent / "fixtures" / "mcp_memory.jsonl"
ENVIRONMENT = {"RECALLD_EMBEDDER": "none", "RECALLD_GRAPH_EXTRACTOR": "rules"}


def _invoke(db: Path, *arguments: str) -> Result:
    return CliRunner().invoke(
        cli, ["--db", str(db), *arguments], env=ENVIRONMENT, catch_exceptions=False
    )


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_cli_graph_commands(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    _json(_invoke(db, "remember", "Kate: my sister Anna moved to Porto.", "--json"))
    rebuilt = _json(_invoke(db, "graph", "rebuild", "--run", "--json"))
    assert rebuilt["queued"] == 1
    assert rebuilt["extracted"] >= 1
    listed = _json(_invoke(db, "graph", "entities", "--json"))
    assert {"Kate", "Anna", "Porto"} <= {e["name"] for e in listed["entities"]}
    shown = _json(_invoke(db, "graph", "show", "anna", "--json"))
    assert shown["entity"]["name"] == "Anna"
    relations = _json(_invoke(db, "graph", "relations", "--entity", "Kate", "--json"))
    assert [(r["predicate"], r["object"]) for r in relations["relations"]] == [("sister", "Anna")]
    table = _invoke(db, "graph", "entities", "--type", "person")
    assert table.exit_code == 0
    assert "Kate" in table.output
    readable = _invoke(db, "graph", "show", "Kate")
    assert "Kate -[sister]-> Anna" in readable.output
    missing = CliRunner().invoke(cli, ["--db", str(db), "graph", "show", "Nobody"], env=ENVIRONMENT)
    assert missing.exit_code != 0
    status = _json(_invoke(db, "status", "--json"))
    assert status["graph"]["state"] == "ready"
    assert status["graph"]["entities"] == len(listed["entities"])


def test_cli_import_mcp_memory(tmp_path: Path) -> None:
    db = tmp_path / "import.db"
    result = _invoke(db, "import", "--format", "mcp-memory", str(FIXTURE), "--json")
    assert result.exit_code == 1  # the fixture has bad lines: reported, the rest imported
    report = json.loads(result.stdout)
    assert report["format"] == "mcp-memory"
    details = report["details"]
    assert (details["entities"], details["observations"], details["relations"]) == (3, 4, 2)
    assert [error["line"] for error in report["errors"]] == [4, 5, 6]
    listed = _json(_invoke(db, "graph", "entities", "--json"))
    assert {e["name"] for e in listed["entities"]} >= {"Ada_Quill", "Harbour_Office", "Tern_Island"}
    hits = _json(_invoke(db, "search", "ferry", "--json"))
    assert hits[0]["memory"]["title"] == "Tern_Island"


def test_cli_graph_names_are_shown_as_written_never_as_markup(tmp_path: Path) -> None:
    db = tmp_path / "marked.db"
    lines = [
        {"type": "entity", "name": "Acme [/x]", "entityType": "org [bold]", "observations": []},
        {"type": "entity", "name": "Ana", "entityType": "person", "observations": []},
        {"type": "relation", "from": "Ana", "to": "Acme [/x]", "relationType": "works [/at]"},
    ]
    source = tmp_path / "marked.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert _invoke(db, "import", "--format", "mcp-memory", str(source)).exit_code == 0
    entities = _invoke(db, "graph", "entities")
    assert "Acme [/x]" in entities.stdout
    assert "org [bold]" in entities.stdout
    relations = _invoke(db, "graph", "relations")
    assert "works [/at]" in relations.stdout
    shown = _invoke(db, "graph", "show", "Acme [/x]")
    assert shown.stdout.startswith("Acme [/x] (org [bold]); 0 mentions")
    assert "Ana -[works [/at]]-> Acme [/x]" in shown.stdout


def test_cli_graph_show_says_how_to_list_the_relations_it_does_not_show(tmp_path: Path) -> None:
    db = tmp_path / "more.db"
    _json(_invoke(db, "remember", "Kate: my sister Anna moved to Porto.", "--json"))
    _json(_invoke(db, "remember", "Kate: my brother Tom lives in Lyon.", "--json"))
    _json(_invoke(db, "graph", "rebuild", "--run", "--json"))
    narrow = {**ENVIRONMENT, "RECALLD_GRAPH_PAGE_SIZE": "1"}
    shown = CliRunner().invoke(cli, ["--db", str(db), "graph", "show", "Kate"], env=narrow)
    assert shown.exit_code == 0, shown.output
    assert "Kate -[sister]-> Anna" in shown.output
    assert "-[brother]->" not in shown.output
    hint = next(line for line in shown.output.splitlines() if "more relations:" in line)
    command = hint.split("more relations: recalld ", 1)[1].split()
    assert command[:4] == ["graph", "relations", "--entity", "Kate"]
    rest = _json(_invoke(db, *command, "--json"))
    assert [(r["predicate"], r["object"]) for r in rest["relations"]] == [("brother", "Tom")]


def test_cli_graph_show_more_relations_command_keeps_the_namespace(tmp_path: Path) -> None:
    # The printed command named no namespace: run as printed, it read the default one,
    # where this entity does not exist.
    db = tmp_path / "scoped.db"
    for text in ("Kate: my sister Anna moved to Porto.", "Kate: my brother Tom lives in Lyon."):
        _json(_invoke(db, "--namespace", "work", "remember", text, "--json"))
    _json(_invoke(db, "--namespace", "work", "graph", "rebuild", "--run", "--json"))
    narrow = {**ENVIRONMENT, "RECALLD_GRAPH_PAGE_SIZE": "1"}
    shown = CliRunner().invoke(
        cli, ["--db", str(db), "--namespace", "work", "graph", "show", "Kate"], env=narrow
    )
    assert shown.exit_code == 0, shown.output
    hint = next(line for line in shown.output.splitlines() if "more relations:" in line)
    command = hint.split("more relations: recalld ", 1)[1].split()
    assert command[:2] == ["--namespace", "work"]
    rest = _json(_invoke(db, *command, "--json"))
    assert [(r["predicate"], r["object"]) for r in rest["relations"]] == [("brother", "Tom")]


def test_cli_graph_entities_more_line_keeps_a_long_cursor_whole(tmp_path: Path) -> None:
    # The cursor of an entity listing holds the last name shown: the console wrapped a long
    # one at 80 columns, and the copied cursor was refused.
    db = tmp_path / "long.db"
    entities = [
        {"name": f"{letter} {'very long entity name ' * 6}", "entityType": "thing"}
        for letter in "AB"
    ]
    lines = [json.dumps({"type": "entity", "observations": [], **e}) for e in entities]
    (tmp_path / "graph.jsonl").write_text("\n".join(lines) + "\n")
    _invoke(db, "import", "--format", "mcp-memory", str(tmp_path / "graph.jsonl"))
    first = _invoke(db, "graph", "entities", "--limit", "1")
    assert first.exit_code == 0, first.output
    more = next(line for line in first.output.splitlines() if line.startswith("more: "))
    cursor = more.removeprefix("more: --cursor ")
    rest = _json(_invoke(db, "graph", "entities", "--limit", "1", "--cursor", cursor, "--json"))
    assert [entity["name"][0] for entity in rest["entities"]] == ["B"]


def test_cli_graph_rebuild_run_says_what_it_queued_before_a_run_that_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Beside a live worker of another model the run is refused after the queue is written:
    # the command printed only the refusal, so the user did not know the rebuild was
    # queued (stop 64's leftover).
    db = tmp_path / "rival.db"
    _json(_invoke(db, "remember", "Kate: my sister Anna moved to Porto.", "--json"))

    def refused(_worker: Worker) -> None:
        raise ConflictError("worker", "a live worker embeds with another model")

    monkeypatch.setattr(Worker, "run_until_idle", refused)
    result = CliRunner().invoke(
        cli, ["--db", str(db), "graph", "rebuild", "--run"], env=ENVIRONMENT
    )
    assert isinstance(result.exception, ConflictError)
    assert "queued 1 memories for graph extraction" in result.output
