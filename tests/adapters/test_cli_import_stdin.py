"""`recalld import -` reads the import from stdin, as `recalld ingest -` does."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.errors import ValidationError


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


def test_cli_ingest_of_an_export_points_at_import(tmp_path: Path) -> None:
    # Adversarial pass e60: `recalld ingest conversations.json` (a Claude export) was
    # "messages[0].uuid: Extra inputs are not permitted"; the file was right, the
    # command was not.
    database = str(tmp_path / "chat.db")
    chats = [{"uuid": "c1", "chat_messages": [{"uuid": "m", "sender": "human", "text": "hi"}]}]
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chats), encoding="utf-8")
    result = CliRunner().invoke(cli, ["--db", database, "ingest", str(export)])
    assert isinstance(result.exception, ValidationError)
    assert str(result.exception).endswith(
        f"(the file is Claude's export: bring it in with `recalld import {export}`)"
    )
    piped = CliRunner().invoke(cli, ["--db", database, "ingest", "-"], input=json.dumps(chats))
    assert str(piped.exception).endswith("bring it in with `recalld import -`)")
    # A transcript that is refused for its own fault gets no such hint.
    transcript = json.dumps([{"role": "user", "content": "hi", "at": "never"}])
    own = CliRunner().invoke(cli, ["--db", database, "ingest", "-"], input=transcript)
    assert isinstance(own.exception, ValidationError)
    assert "recalld import" not in str(own.exception)
