"""The exit status of `recalld` as a script reads it: 0, 1 for an error, 2 for a usage
error, 130 for Ctrl-C."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recalld.adapters.cli import main
from recalld.service import MemoryService


def _exit_status(monkeypatch: pytest.MonkeyPatch, *arguments: str) -> int | str | None:
    monkeypatch.setattr("sys.argv", ["recalld", *arguments])
    monkeypatch.setenv("RECALLD_EMBEDDER", "none")
    monkeypatch.setenv("RECALLD_GRAPH_EXTRACTOR", "none")
    with pytest.raises(SystemExit) as stopped:
        main()
    return stopped.value.code


def test_cli_ctrl_c_during_a_command_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # It exited 1, as an error does: a script could not tell "stopped" from "failed".
    def interrupted(self: MemoryService, *args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt  # Ctrl-C while the command runs

    monkeypatch.setattr(MemoryService, "remember", interrupted)
    status = _exit_status(monkeypatch, "--db", str(tmp_path / "c.db"), "remember", "never")
    assert status == 130
    assert capsys.readouterr().err.splitlines()[-1] == "aborted"


def test_cli_error_and_usage_error_keep_exit_1_and_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "c.db")
    assert _exit_status(monkeypatch, "--db", db, "get", "missing") == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: no memory with id 'missing' in 'default'"
    )
    assert _exit_status(monkeypatch, "--db", db, "list", "--limit", "many") == 2


def test_cli_error_and_notice_show_a_path_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A --db holding ESC [2J reached the terminal raw in "created a new database at ..."
    # and in the error naming its directory (and click stripped it when piped, naming
    # another path than the one given).
    missing = tmp_path / "no\x1b[2Jdir" / "x.db"
    assert _exit_status(monkeypatch, "--db", str(missing), "stats") == 1
    error = capsys.readouterr().err
    assert "\x1b" not in error
    assert "no\\x1b[2Jdir" in error
    created = tmp_path / "e\x1b[2Jx.db"
    monkeypatch.setattr("sys.argv", ["recalld", "--db", str(created), "stats", "--json"])
    main()  # success: returns, exit 0
    notice = capsys.readouterr().err
    assert notice == f"created a new database at {tmp_path}/e\\x1b[2Jx.db\n"


def test_cli_shell_fed_from_a_pipe_prints_only_the_answers(tmp_path: Path) -> None:
    # Each answer began with the prompt, after a banner: "recalld> {"memories": ...}" was
    # no JSON line for the script that piped the commands in.
    completed = subprocess.run(
        [sys.executable, "-m", "recalld", "--db", str(tmp_path / "p.db"), "shell"],
        input='remember "piped in" --json\nlist --json\nquit\n',
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, "RECALLD_EMBEDDER": "none", "RECALLD_GRAPH_EXTRACTOR": "none"},
    )
    receipt, page = (json.loads(line) for line in completed.stdout.splitlines())
    assert receipt["status"] == "created"
    assert page["memories"][0]["content"] == "piped in"


def test_cli_serve_refuses_an_unknown_log_level_as_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Adversarial pass a65: `--log-level bogus` printed the banner, created the database
    # and ended in uvicorn's KeyError traceback (exit 1).
    db = tmp_path / "s.db"
    arguments = ("--db", str(db), "serve", "--port", "0", "--log-level", "bogus")
    assert _exit_status(monkeypatch, *arguments) == 2
    error = capsys.readouterr().err
    assert "Invalid value for '--log-level': 'bogus' is not one of" in error
    assert "Traceback" not in error
    assert not db.exists()


def test_cli_error_of_a_command_given_json_is_a_json_line_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Adversarial pass a65: a script that asked for --json got a line of prose on stderr
    # ("error: ..."), to be parsed apart from the document it reads on stdout.
    db = str(tmp_path / "j.db")
    cases: list[tuple[tuple[str, ...], dict[str, Any]]] = [
        (("get", "missing"), {"type": "not_found", "field": None}),
        (("list", "--limit", "0"), {"type": "validation_error", "field": "limit"}),
        (("remember", "x", "--ttl", "-5"), {"type": "validation_error", "field": "--ttl"}),
        (("get", "--key", "k\x1b[2J"), {"type": "not_found", "field": None}),
    ]
    for arguments, expected in cases:
        assert _exit_status(monkeypatch, "--db", db, *arguments, "--json") == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        last = captured.err.splitlines()[-1]
        assert "\x1b" not in last
        error = json.loads(last)["error"]
        assert {name: error[name] for name in expected} == expected
        assert error["message"]
        # Without --json the error is the one line it was.
        assert _exit_status(monkeypatch, "--db", db, *arguments) == 1
        assert capsys.readouterr().err.splitlines()[-1].startswith("error: ")


@pytest.mark.parametrize("arguments", [(), ("an-id", "--key", "k"), ("--key", "k", "--seq", "1")])
def test_cli_get_without_exactly_one_selector_is_a_usage_error_that_creates_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    arguments: tuple[str, ...],
) -> None:
    # Adversarial pass a65: `recalld get` alone created a new database, then exited 1 with
    # "id: give exactly one of id, key or seq", naming fields no option is called.
    db = tmp_path / "never.db"
    assert _exit_status(monkeypatch, "--db", str(db), "get", *arguments) == 2
    assert "give exactly one of ID, --key or --seq" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_cli_mcp_refuses_a_port_out_of_range_as_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], port: str
) -> None:
    # Adversarial pass a65: 99999 reached uvicorn (two tracebacks after the "at ..." line),
    # -1 was refused naming the host ("Servname not supported").
    db = tmp_path / "m.db"
    arguments = ("--db", str(db), "mcp", "--transport", "http", "--port", port)
    assert _exit_status(monkeypatch, *arguments) == 2
    error = capsys.readouterr().err
    assert "Invalid value for '--port'" in error
    assert "0<=x<=65535" in error
    assert "Traceback" not in error
    assert not db.exists()


def test_cli_core_memory_full_given_json_is_a_json_line_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The full target's refusal is printed by the command itself (with the entries, for a
    # person); given --json it is the one JSON line every other error is.
    db = str(tmp_path / "core.db")
    too_long = "word " * 400
    assert _exit_status(monkeypatch, "--db", db, "core", "add", "user", too_long, "--json") == 1
    error = json.loads(capsys.readouterr().err.splitlines()[-1])["error"]
    # REST's 422 body (review of pass a65: it was "validation_error", without the entries).
    assert error["type"] == "core_memory_full"
    assert error["field"] == "operations"
    assert error["message"].startswith("user would hold")
    assert "over its limit of 1375" in error["message"]
    assert (error["entries"], error["usage"]) == ([], "0/1375")
    assert _exit_status(monkeypatch, "--db", db, "core", "add", "user", too_long) == 1
    assert capsys.readouterr().err.startswith("error: operations: user would hold")


def test_cli_conflict_given_json_is_rest_s_body(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Review of pass a65: the message kept the field in front ("id: id '...' already names
    # another memory"), where REST's 409 body says "id '...' already names another memory".
    db = str(tmp_path / "conflict.db")
    monkeypatch.setenv("RECALLD_EMBEDDER", "none")
    monkeypatch.setenv("RECALLD_GRAPH_EXTRACTOR", "none")
    monkeypatch.setattr(
        "sys.argv", ["recalld", "--db", db, "remember", "first", "--id", "taken-id"]
    )
    main()  # exit 0: main returns
    capsys.readouterr()
    again = ("remember", "second", "--id", "taken-id", "--json")
    assert _exit_status(monkeypatch, "--db", db, *again) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    error = json.loads(captured.err.splitlines()[-1])["error"]
    assert (error["type"], error["field"]) == ("conflict", "id")
    assert error["message"].startswith("id 'taken-id' already names another memory")


@pytest.mark.parametrize(
    ("arguments", "variables", "field"),
    [
        (("list", "--json"), {"RECALLD_MAX_TAGS": "abc"}, "RECALLD_MAX_TAGS"),
        (("graph", "entities", "--json"), {"RECALLD_MAX_TAGS": "abc"}, "RECALLD_MAX_TAGS"),
        (("--db", "", "get", "--key", "k", "--json"), {}, "--db"),
    ],
)
def test_cli_settings_error_of_a_command_given_json_is_a_json_line_too(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    arguments: tuple[str, ...],
    variables: dict[str, str],
    field: str,
) -> None:
    # Review of pass a65: an error in the settings, found before the command runs, was the
    # text line "error: RECALLD_MAX_TAGS: ..." though the command was given --json, so a
    # script reading the JSON line on stderr failed on the one error it could not foresee.
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert _exit_status(monkeypatch, *arguments) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    error = json.loads(line)["error"]
    assert (error["type"], error["field"]) == ("validation_error", field)
    # Without --json (or with --json as another option's value) it is the text line.
    plain = [argument for argument in arguments if argument != "--json"]
    for command_line in (plain, [*plain[:-1], "--json"] if "get" in plain else plain):
        assert _exit_status(monkeypatch, *command_line) == 1
        assert capsys.readouterr().err.startswith(f"error: {field}: ")
