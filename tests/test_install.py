"""`make install` into a temporary HOME, then the README's agent configs start a working server.

The install is the real one (a venv under $HOME/.local/share/recalld, the
command linked into $HOME/.local/bin), so this is slow; HOME is a temporary
directory, never the real one. The README's JSON snippets must all parse, and
the Claude Desktop one (its exact command and arguments, with the README's
example home replaced by the temporary one) is launched through the MCP
Python SDK client.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
EXAMPLE_HOME = "/home/you"
# What pip needs from the environment (a local wheel directory, certificates, timeouts).
PASSED_THROUGH = ("PIP_FIND_LINKS", "PIP_CERT", "PIP_DEFAULT_TIMEOUT", "PIP_INDEX_URL", "LANG")


def _snippets(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def _configs() -> list[dict[str, Any]]:
    return [json.loads(snippet) for snippet in _snippets("json")]


def test_readme_json_snippets_parse_and_name_the_installed_command() -> None:
    configs = _configs()
    servers = [config["mcpServers"]["recalld"] for config in configs if "mcpServers" in config]
    assert len(servers) >= 2  # Claude Desktop and Cursor at least
    for server in servers:
        assert server["command"] == f"{EXAMPLE_HOME}/.local/bin/recalld"
        assert server["args"][0] == "mcp"


def test_readme_claude_code_line_matches_the_desktop_config() -> None:
    lines = [
        line
        for snippet in _snippets("sh")
        for line in snippet.splitlines()
        if line.startswith("claude mcp add")
    ]
    assert lines
    words = shlex.split(lines[0])
    desktop = next(config for config in _configs() if "mcpServers" in config)
    server = desktop["mcpServers"]["recalld"]
    assert words[words.index("--") + 1 :] == [server["command"], *server["args"]]


async def _round_trip(command: str, args: list[str], home: Path) -> list[str]:
    parameters = StdioServerParameters(
        command=command,
        args=args,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "RECALLD_EMBEDDER": "none"},
    )
    async with Client(parameters) as client:
        tools = await client.list_tools()
        written = await client.call_tool("remember", {"content": "installed from a clone"})
        assert not written.is_error
        return sorted(tool.name for tool in tools.tools)


@pytest.mark.slow
def test_make_install_then_the_claude_desktop_config_serves(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    assert python is not None
    environment = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    environment.update(HOME=str(home), PATH="/usr/local/bin:/usr/bin:/bin")
    done = subprocess.run(
        ["make", "-C", str(ROOT), "install", f"PYTHON={python}"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    command = home / ".local" / "bin" / "recalld"
    assert str(command) in done.stdout  # the absolute path the configs use is printed
    assert "is not on your PATH" in done.stdout  # and it says so: ~/.local/bin is not
    assert (home / ".local" / "share" / "recalld" / "venv" / "bin" / "python").exists()
    desktop = next(config for config in _configs() if "mcpServers" in config)
    server = desktop["mcpServers"]["recalld"]
    path = server["command"].replace(EXAMPLE_HOME, str(home))
    assert path == str(command)
    tools = anyio.run(_round_trip, path, server["args"], home)
    assert {"remember", "recall", "core_memory", "remember_conversation"} <= set(tools)
    assert (home / ".local" / "share" / "recalld" / "recalld.db").exists()


FAKE_PYTHON = """#!/bin/sh
# Stands in for python3: `-m venv DIR` makes DIR/bin/python (whose pip does nothing) and
# DIR/bin/recalld (which prints a version), so the script runs without installing.
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"
    printf '#!/bin/sh\\nexit 0\\n' > "$3/bin/python"
    printf '#!/bin/sh\\necho recalld 0\\n' > "$3/bin/recalld"
    chmod +x "$3/bin/python" "$3/bin/recalld"
fi
"""


def _fake_install(tmp_path: Path, **environment: str) -> Path:
    """Run scripts/install.sh with a stand-in python under umask 022; the HOME it had."""
    home = tmp_path / "home"
    home.mkdir()
    python = tmp_path / "python3"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    done = subprocess.run(
        ["sh", "-c", "umask 022 && exec sh scripts/install.sh"],
        cwd=ROOT,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHON": str(python), **environment},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return home


def test_install_makes_the_data_directory_owner_only(tmp_path: Path) -> None:
    data = _fake_install(tmp_path) / ".local" / "share" / "recalld"
    assert (data / "venv" / "bin" / "python").exists()
    assert data.stat().st_mode & 0o777 == 0o700  # the memories will live here too


def test_install_elsewhere_leaves_the_environment_readable(tmp_path: Path) -> None:
    # RECALLD_HOME=/opt/recalld for every user of the machine holds no memories: made
    # 0700, the command it links to ran for its installer alone.
    elsewhere = tmp_path / "opt" / "recalld"
    _fake_install(tmp_path, RECALLD_HOME=str(elsewhere))
    assert (elsewhere / "venv" / "bin" / "python").exists()
    assert elsewhere.stat().st_mode & 0o777 == 0o755
