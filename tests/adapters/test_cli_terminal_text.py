"""Human output of the recalld CLI shows stored control characters, never sends them raw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from recalld.adapters._cli_support import visible
from recalld.adapters.cli import cli

ENVIRONMENT = {"RECALLD_EMBEDDER": "none", "RECALLD_GRAPH_EXTRACTOR": "none"}
# Retitles the terminal, clears the screen, turns what follows red, reverses what follows.
HOSTILE = "evil \x1b]0;PWNED\x07 then \x1b[2J and \x1b[31mred \u202eoverride\u202c end"
SHOWN = "evil \\x1b]0;PWNED\\x07 then \\x1b[2J and \\x1b[31mred \\u202eoverride\\u202c end"


def _invoke(db: Path, *arguments: str) -> Result:
    return CliRunner().invoke(
        cli, ["--db", str(db), *arguments], env=ENVIRONMENT, catch_exceptions=False
    )


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "terminal.db"
    receipt = _json(_invoke(db, "remember", HOSTILE, "--title", "t\x1b[1mx", "--json"))
    _json(_invoke(db, "remind", f"call {HOSTILE}", "--mention", "Bob\x1b[5m", "--json"))
    return db, receipt["id"]


def _squeezed(text: str) -> str:
    """``text`` without its whitespace: a table wraps a cell where it likes."""
    return "".join(text.split())


@pytest.mark.parametrize(
    "arguments",
    [
        ("list",),
        ("recent",),
        ("search", "evil"),
        ("recall", "evil"),
        ("get", "--seq", "1"),
        ("intentions",),
    ],
)
def test_cli_human_output_shows_escape_sequences_escaped(
    hostile: tuple[Path, str], arguments: tuple[str, ...]
) -> None:
    # `recalld list` wrote the memory's ESC ]0;... and ESC [2J to the terminal as they were:
    # listing a memory retitled the terminal and cleared the screen.
    db, _ = hostile
    result = _invoke(db, *arguments)
    assert result.exit_code == 0, result.output
    for obeyed in ("\x1b", "\x07", "\u202e"):
        assert obeyed not in result.stdout
    assert _squeezed(SHOWN) in _squeezed(result.stdout)
    if arguments == ("intentions",):
        assert "'Bob\\x1b[5m'" in result.stdout
    else:
        assert "t\\x1b[1mx" in result.stdout


def test_cli_json_output_keeps_control_characters_exact(hostile: tuple[Path, str]) -> None:
    db, memory_id = hostile
    memory = _json(_invoke(db, "get", memory_id, "--json"))
    assert memory["content"] == HOSTILE
    assert memory["title"] == "t\x1b[1mx"


def test_visible_escapes_what_a_terminal_obeys_and_keeps_line_ends() -> None:
    assert visible("a\r\nb\tc\nd") == "a\nb\tc\nd"
    assert visible("over\rwrite") == "over\\rwrite"
    assert visible("\x00\x08\x7f\x9b\u2066") == "\\x00\\x08\\x7f\\x9b\\u2066"
    assert visible("München 日本 שלום") == "München 日本 שלום"


def test_cli_token_names_are_text_not_rich_markup(tmp_path: Path) -> None:
    # A token named "[/x]" made `recalld token list` a MarkupError traceback from then on,
    # and `token revoke '[/bold]'` was one too; "[red]ops" came out red.
    db = tmp_path / "tokens.db"
    for name in ("[/x]", "[red]ops\x1b[2J"):
        created = _invoke(db, "token", "create", name, "--scope", "default:read")
        assert created.exit_code == 0, created.output
        assert "\x1b" not in created.stderr
    listed = _invoke(db, "token", "list")
    assert listed.exit_code == 0, listed.output
    assert "[/x]" in listed.stdout
    assert "[red]ops\\x" in listed.stdout
    assert "\x1b" not in listed.stdout
    revoked = _invoke(db, "token", "revoke", "[/bold]")
    assert revoked.exit_code == 1
    assert revoked.stdout == "no active token [/bold]\n"


@pytest.mark.parametrize("columns", ["0", "1", "3"])
def test_cli_tables_in_a_width_too_narrow_still_show_the_memories(
    tmp_path: Path, columns: str
) -> None:
    # COLUMNS=1 or 3 printed blank lines (no room for one character), COLUMNS=0 (width
    # unknown) too: `recalld list` showed no memory and exited 0.
    db = tmp_path / "narrow.db"
    _json(_invoke(db, "remember", "Anna moved to Paris", "--json"))
    result = CliRunner().invoke(
        cli, ["--db", str(db), "list"], env={**ENVIRONMENT, "COLUMNS": columns}
    )
    assert result.exit_code == 0, result.output
    assert "Anna" in result.stdout


def test_cli_forget_of_an_unknown_id_shows_it_escaped(tmp_path: Path) -> None:
    # An id read from elsewhere (a log, another tool's output) was echoed back raw.
    result = _invoke(tmp_path / "forget.db", "forget", "x\x1b]0;PWNED\x07")
    assert result.exit_code == 0, result.output
    assert result.stdout == "nothing to forget: no memory x\\x1b]0;PWNED\\x07\n"
