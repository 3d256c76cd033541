"""`recalld import -` reads the import from stdin, as `recalld ingest -` does."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from recalld import importing
from recalld.adapters.cli import cli, main
from recalld.config import Settings
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


def test_cli_import_interrupted_says_what_it_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Adversarial pass a65: Ctrl-C after the first chunk was committed printed "aborted"
    # alone, which read as "nothing was imported" though 500 memories were kept.
    from recalld.transfer import IMPORT_CHUNK_LINES, Transfer

    write_chunk = Transfer._import_chunk
    written: list[int] = []

    def interrupted_after_one(self: Transfer, chunk: list[Any], report: Any, *rest: Any) -> None:
        if written:
            raise KeyboardInterrupt  # Ctrl-C while the second chunk is written
        write_chunk(self, chunk, report, *rest)
        written.append(len(chunk))

    monkeypatch.setattr(Transfer, "_import_chunk", interrupted_after_one)
    source = tmp_path / "many.jsonl"
    source.write_text(
        "".join(
            json.dumps({"content": f"imported note {index}"}) + "\n"
            for index in range(IMPORT_CHUNK_LINES * 2)
        ),
        encoding="utf-8",
    )
    database = tmp_path / "interrupted.db"
    monkeypatch.setenv("RECALLD_EMBEDDER", "none")
    monkeypatch.setenv("RECALLD_GRAPH_EXTRACTOR", "none")
    monkeypatch.setattr("sys.argv", ["recalld", "--db", str(database), "import", str(source)])
    with pytest.raises(SystemExit) as stopped:
        main()
    assert stopped.value.code == 130
    told = capsys.readouterr().err.splitlines()
    assert told[-1] == "aborted"
    (said,) = [line for line in told if line.startswith("interrupted: ")]
    assert "what the import wrote before Ctrl-C is kept" in said
    assert "import the file again to finish" in said
    settings = Settings(db=database, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as opened:
        assert opened.stats().count == IMPORT_CHUNK_LINES == written[0]


def test_cli_ingest_interrupted_says_what_it_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As an import (above): an ingest writes a long transcript a chunk of turns at a time.
    from recalld.conversations import Conversations

    def interrupted(self: Conversations, *args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(Conversations, "remember", interrupted)
    transcript = tmp_path / "chat.txt"
    transcript.write_text("Alice: hello\nBob: hi there\n", encoding="utf-8")
    monkeypatch.setenv("RECALLD_EMBEDDER", "none")
    monkeypatch.setenv("RECALLD_GRAPH_EXTRACTOR", "none")
    database = str(tmp_path / "ingest.db")
    monkeypatch.setattr("sys.argv", ["recalld", "--db", database, "ingest", str(transcript)])
    with pytest.raises(SystemExit) as stopped:
        main()
    assert stopped.value.code == 130
    told = capsys.readouterr().err.splitlines()
    (said,) = [line for line in told if line.startswith("interrupted: ")]
    assert "what the ingest wrote before Ctrl-C is kept" in said
    assert "ingest the file again to finish" in said
