"""`recalld shell`: Ctrl-C drops the line at the prompt or stops the command running,
and the session goes on (as in a shell, psql or Python's REPL); Ctrl-D leaves."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from recalld.adapters.cli import cli
from recalld.service import MemoryService

# What the "terminal" gives each time the shell asks for a line: text typed and Enter,
# or an exception (KeyboardInterrupt: Ctrl-C at the prompt; EOFError: Ctrl-D).
Typed = str | type[BaseException]


def _type(monkeypatch: pytest.MonkeyPatch, lines: list[Typed]) -> None:
    feed: Iterator[Typed] = iter(lines)

    def typed(self: Console, prompt: str = "", **_: Any) -> str:
        line = next(feed, EOFError)
        if isinstance(line, str):
            return line
        raise line()

    monkeypatch.setattr(Console, "input", typed)


def test_ctrl_c_at_the_prompt_drops_the_line_and_the_shell_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _type(monkeypatch, [KeyboardInterrupt, 'remember "typed after a Ctrl-C"', "list --json"])
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "s.db"), "shell"])
    assert result.exit_code == 0, result.output
    assert "aborted" not in result.output
    assert "typed after a Ctrl-C" in result.stdout  # both lines after it ran


def test_ctrl_c_during_a_command_stops_it_and_the_shell_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(self: MemoryService, *args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt  # Ctrl-C while the command runs

    monkeypatch.setattr(MemoryService, "remember", interrupted)
    _type(monkeypatch, ['remember "never written"', "stats --json", "shell"])
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "s.db"), "shell"])
    assert result.exit_code == 0, result.output
    assert "interrupted" in result.stderr
    stats = json.loads(next(line for line in result.stdout.splitlines() if '"count"' in line))
    assert stats["count"] == 0  # the shell went on to the next line
    # No shell inside the shell (its `quit` would have left only the inner one).
    assert "error: shell: this is the shell already" in result.stderr
