"""The recalld CLI when its output refuses writes: a full device, a reader gone early."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.service import MemoryService

FULL = Path("/dev/full")


def _recalld(db: Path, *arguments: str, stdout: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "recalld", "--db", str(db), *arguments],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env={**os.environ, "RECALLD_EMBEDDER": "none", "RECALLD_GRAPH_EXTRACTOR": "none"},
    )


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    """A database whose export is larger than a pipe holds (64 KiB)."""
    db = tmp_path / "streams.db"
    settings = Settings(db=db, synchronous="NORMAL", embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        for number in range(400):
            service.remember(f"note {number} about the garden shed " + "x" * 300)
    return db


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (("stats", "--json"), "error: could not write the output: No space left on device"),
        (("stats",), "error: could not write the output: No space left on device"),
        (("list", "--limit", "3"), "error: could not write the output: No space left on device"),
        # The write is done; only its answer could not be printed (review 56b).
        (
            ("remember", "one more note"),
            "error: could not write the output: No space left on device",
        ),
        (("export",), "Error: could not write the export to stdout: No space left on device"),
    ],
)
def test_cli_output_on_a_full_device_is_one_line_and_exit_1(
    filled: Path, arguments: tuple[str, ...], says: str
) -> None:
    # Each was an OSError traceback (the export's "Could not open file '-'" named neither).
    with FULL.open("wb") as full:
        process = _recalld(filled, *arguments, stdout=full.fileno())
        _, errors = process.communicate(timeout=60)
    assert process.returncode == 1
    assert errors.decode().splitlines() == [says]


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")
def test_cli_export_to_a_full_device_named_says_it_could_not_write(filled: Path) -> None:
    # It said "Could not open file '/dev/full'": the opening worked, the writing did not.
    process = _recalld(filled, "export", str(FULL), stdout=subprocess.DEVNULL)
    _, errors = process.communicate(timeout=60)
    assert process.returncode == 1
    assert errors.decode().splitlines() == [
        f"Error: could not write the export to {FULL}: No space left on device"
    ]


def test_cli_export_to_a_reader_that_stops_early_ends_quietly(filled: Path) -> None:
    # `recalld export | head -1` said "Error: Could not open file '-': Broken pipe".
    reading, writing = os.pipe()
    process = _recalld(filled, "export", stdout=writing)
    os.close(writing)
    with os.fdopen(reading, "rb") as reader:
        assert reader.read(5) == b'{"id"'
    _, errors = process.communicate(timeout=60)
    assert errors == b""
    assert process.returncode == 1  # click ends a command on EPIPE with 1


@pytest.mark.parametrize(
    "arguments",
    [
        ("list", "--limit", "400", "--json"),
        ("search", "garden", "--limit", "400", "--json"),
        ("search", "garden", "--limit", "400"),
    ],
)
def test_cli_output_to_a_reader_that_stops_early_exits_1(
    filled: Path, arguments: tuple[str, ...]
) -> None:
    # Output larger than a pipe holds went out in one write, which came back short without
    # an error when the reader left: `recalld list --json | head -c 5` ended 0, a cut
    # document passing for a whole one under `set -o pipefail`.
    reading, writing = os.pipe()
    process = _recalld(filled, *arguments, stdout=writing)
    os.close(writing)
    with os.fdopen(reading, "rb") as reader:
        assert len(reader.read(5)) == 5
    _, errors = process.communicate(timeout=60)
    assert errors == b""
    assert process.returncode == 1


@pytest.mark.parametrize("listing", [b"list --limit 400 --json", b"list --limit 400"])
def test_cli_shell_whose_reader_stops_early_ends_with_exit_1(filled: Path, listing: bytes) -> None:
    # `recalld shell < commands.txt | head -c 5` ended 0: click (rich, for a table) ended the
    # line's command on the broken pipe with exit 1 inside the session, which swallowed it
    # and went on.
    reading, writing = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-m", "recalld", "--db", str(filled), "shell"],
        stdin=subprocess.PIPE,
        stdout=writing,
        stderr=subprocess.PIPE,
        env={**os.environ, "RECALLD_EMBEDDER": "none", "RECALLD_GRAPH_EXTRACTOR": "none"},
    )
    os.close(writing)
    assert process.stdin is not None
    process.stdin.write(listing + b"\nstats --json\n")
    process.stdin.close()
    with os.fdopen(reading, "rb") as reader:
        assert len(reader.read(5)) == 5
    assert process.stderr is not None
    with process.stderr:
        errors = process.stderr.read()
    process.wait(timeout=60)
    assert errors == b""
    assert process.returncode == 1


def test_cli_export_of_a_line_larger_than_a_pipe_to_a_reader_gone_exits_1(tmp_path: Path) -> None:
    # One memory's line (its quotes escaped) is over 64 KiB: written at once, it came back
    # short without an error when the reader left, and `recalld export | head -c 5` ended 0.
    db = tmp_path / "wide.db"
    settings = Settings(db=db, synchronous="NORMAL", embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.remember('"' * 60_000)
    reading, writing = os.pipe()
    process = _recalld(db, "export", stdout=writing)
    os.close(writing)
    with os.fdopen(reading, "rb") as reader:
        assert reader.read(5) == b'{"id"'
    _, errors = process.communicate(timeout=60)
    assert errors == b""
    assert process.returncode == 1
