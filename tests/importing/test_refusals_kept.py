"""An import keeps its first refusals and counts the rest, whatever the adapter
(integration read, stop 69): every refused line was kept, so 2 MB of junk lines drew an
85 MB answer and a 64 MB upload ~2.7 GB."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.model_import import MAX_IMPORT_ERRORS_KEPT
from recalld.service import MemoryService

JUNK = MAX_IMPORT_ERRORS_KEPT * 2 + 500


def test_import_text_keeps_the_first_refusals_and_counts_all(service: MemoryService) -> None:
    body = b'{"content": "kept"}\n' + b"not json\n" * JUNK
    report = service.import_text(body, format="recalld")
    assert report.created == 1
    assert report.errors_total == JUNK
    assert len(report.errors) == MAX_IMPORT_ERRORS_KEPT
    assert [error.line for error in report.errors] == list(range(2, MAX_IMPORT_ERRORS_KEPT + 2))


def test_import_mcp_memory_keeps_the_first_refusals_and_counts_all(
    service: MemoryService,
) -> None:
    entity = {"type": "entity", "name": "Ada", "entityType": "person", "observations": []}
    body = ("\n".join(["{"] * JUNK + [json.dumps(entity)]) + "\n").encode()
    report = service.import_text(body, format="mcp-memory")
    assert report.details == {"entities": 1}
    assert report.errors_total == JUNK
    assert len(report.errors) == MAX_IMPORT_ERRORS_KEPT
    assert report.errors[-1].line == MAX_IMPORT_ERRORS_KEPT


def test_cli_import_says_how_many_refusals_it_left_out(tmp_path: Path) -> None:
    source = tmp_path / "junk.jsonl"
    source.write_bytes(b'{"content": "kept"}\n' + b"not json\n" * JUNK)
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "m.db"), "import", "--format", "recalld", str(source)]
    )
    assert result.exit_code == 1
    assert f"errors {JUNK}" in result.output
    assert f"and {JUNK - MAX_IMPORT_ERRORS_KEPT} more refused" in result.output
