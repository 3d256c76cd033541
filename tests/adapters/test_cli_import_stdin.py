"""`recalld import -` reads the import from stdin, as `recalld ingest -` does."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recalld import importing
from recalld.adapters.cli import cli
from recalld.errors import ValidationError
from recalld.service import MemoryService


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
    # Told apart by content as a file is: nothing recognised is "cannot tell the format",
    # and a bad line of a given format is reported by number.
    unknown = CliRunner().invoke(cli, ["--db", database, "import", "-"], input="{oops\n")
    assert isinstance(unknown.exception, ValidationError)
    assert unknown.exception.field == "format"
    given = ["--db", database, "import", "--format", "recalld", "-"]
    bad = CliRunner().invoke(cli, given, input="{oops\n")
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


def test_cli_import_dash_reads_stdin_in_bounded_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of e60: `recalld import -` read stdin whole (and split it, a second copy), so
    # a huge stdin filled the memory and the bound on a line's length never applied; it is
    # now read as a file is. The bound is lowered here to keep the input small.
    monkeypatch.setattr(importing, "MAX_LINE_BYTES", 1000)
    database = str(tmp_path / "piped.db")
    lines = [json.dumps({"id": f"m{number}", "content": f"x{number}"}) for number in range(3000)]
    piped = "\n".join([*lines, "y" * 200_000, lines[0]]) + "\n"
    result = CliRunner().invoke(cli, ["--db", database, "import", "-", "--json"], input=piped)
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["created"] == 3000
    assert [error["line"] for error in report["errors"]] == [3001]
    assert "is longer than 1000 bytes" in report["errors"][0]["error"]


def test_import_file_reads_an_open_stream(service: MemoryService) -> None:
    upload = io.BytesIO(b'\xef\xbb\xbf{"id": "one", "content": "streamed"}\r\n')
    report = service.import_file(upload)
    assert (report.format, report.created, report.errors) == ("recalld", 1, [])
    assert service.get("one").content == "streamed"


def test_import_file_refuses_a_text_stream_naming_file(service: MemoryService) -> None:
    # Review of e60: sys.stdin (not its .buffer) ended in "TypeError: cannot use a bytes
    # pattern on a string-like object".
    with pytest.raises(ValidationError) as caught:
        service.import_file(io.StringIO('{"content": "x"}\n'))  # type: ignore[arg-type]
    assert caught.value.field == "file"
    assert "give a binary stream" in caught.value.message
    assert service.list_memories(limit=10).memories == []
