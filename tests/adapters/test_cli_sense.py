"""The CLI's `sense` and `experience` readings: a bad --biometric is refused naming the
option, and a reading given twice is refused rather than silently replaced."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from recalld.adapters.cli import cli


@pytest.fixture
def run(tmp_path: Path) -> Any:
    runner = CliRunner()
    db = str(tmp_path / "cli.db")

    def invoke(*arguments: str) -> Result:
        return runner.invoke(cli, ["--db", db, *arguments], catch_exceptions=False)

    return invoke


def _memories(run: Any) -> int:
    result = run("stats", "--json")
    assert result.exit_code == 0, result.output
    count: int = json.loads(result.stdout)["count"]
    return count


@pytest.mark.parametrize("command", [["sense", "--place", "48.8642,2.3475"], ["experience", "x"]])
def test_cli_biometric_given_twice_is_refused_naming_the_option(
    run: Any, command: list[str]
) -> None:
    result = run(*command, "--biometric", "heart_rate=80", "--biometric", "heart_rate=150")

    assert result.exit_code == 2
    assert "--biometric" in result.output
    assert "'heart_rate' is given twice (80 and 150)" in result.output
    assert _memories(run) == 0
    assert json.loads(run("pending", "--peek", "--json").stdout) == []


@pytest.mark.parametrize("reading", ["heart_rate=abc", "heart_rate", "=", "heart_rate=80=1"])
def test_cli_biometric_that_is_no_reading_is_refused_naming_the_option(
    run: Any, reading: str
) -> None:
    result = run("sense", "--place", "48.8642,2.3475", "--biometric", reading)

    assert result.exit_code == 2
    assert "Invalid value for --biometric: expected NAME=NUMBER" in result.output


@pytest.mark.parametrize("option", ["--image", "--audio"])
@pytest.mark.parametrize("command", [("experience", "a walk"), ("sense",)])
def test_cli_media_path_that_is_no_file_is_refused_naming_it(
    run: Any, tmp_path: Path, option: str, command: tuple[str, ...]
) -> None:
    # Adversarial pass a65: a mistyped path ("/tmp/foto.jpg") is valid base64, so it was
    # decoded and refused as "image: is not an image Pillow can read: cannot identify
    # image file the data", which named neither the path nor what was wrong with it.
    missing = str(tmp_path / "foto.jpg")
    result = run(*command, option, missing)
    assert result.exit_code == 2
    assert f"Invalid value for '{option}': File '{missing}' does not exist." in result.stderr
    directory = run(*command, option, str(tmp_path))
    assert directory.exit_code == 2
    assert "is a directory" in directory.stderr


@pytest.mark.parametrize("command", [("experience", "a walk"), ("sense",)])
def test_cli_image_given_as_a_home_path_or_as_base64_is_read_as_before(
    run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    # Review of pass a65: --image had to name an existing file as click sees it, so
    # `--image=~/red.png` (no shell expands a ~ after "=") and the base64 data the library
    # takes, both read before, were refused as "File ... does not exist".
    from PIL import Image

    monkeypatch.setenv("HOME", str(tmp_path))
    picture = tmp_path / "red.png"
    Image.new("RGB", (8, 8), (200, 10, 10)).save(picture)
    encoded = base64.b64encode(picture.read_bytes()).decode("ascii")
    for given in ("~/red.png", encoded):
        result = run(*command, "--image", given, "--json")
        assert result.exit_code == 0, result.output
    # A short text that no file is, though it decodes as base64, is still refused as a path.
    missing = run(*command, "--image", "/tmp/fotojpg")
    assert missing.exit_code == 2
    assert "Invalid value for '--image': File '/tmp/fotojpg' does not exist." in missing.stderr
    empty = run(*command, "--image", " ")
    assert empty.exit_code == 2
    assert "Invalid value for '--image': is empty" in empty.stderr
