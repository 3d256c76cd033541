"""`recalld import -` reads the import from stdin, as `recalld ingest -` does."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from recalld.adapters.cli import cli


def test_cli_import_dash_reads_stdin(tmp_path: Path) -> None:
    # Adversarial pass e60: `... | recalld import -` was "Path '-' does not exist".
    database = str(tmp_path / "piped.db")
    lines = json.dumps({"id": "one", "content": "piped in"}) + "\n"
    result = CliRunner().invoke(cli, ["--db", database, "import", "-", "--json"], input=lines)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["created"] == 1
    again = CliRunner().invoke(cli, ["--db", database, "import", "-", "--json"], input=lines)
    assert json.loads(again.stdout)["unchanged"] == 1
    chats = [{"uuid": "c1", "chat_messages": [{"uuid": "m", "sender": "human", "text": "hi"}]}]
    chat = CliRunner().invoke(
        cli, ["--db", database, "import", "-", "--json"], input=json.dumps(chats)
    )
    assert json.loads(chat.stdout)["format"] == "claude"
    bad = CliRunner().invoke(cli, ["--db", database, "import", "-"], input="{oops\n")
    assert bad.exit_code == 1
    assert "line 1" in bad.stderr
