"""The recalld CLI on a stdout that is not UTF-8 (a Latin-1 locale, PYTHONIOENCODING)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recalld.adapters._cli_support import ascii_json
from recalld.config import Settings
from recalld.service import MemoryService

CONTENT = "Tokyo trip: 日本 in München with 😀"


def _recalld(db: Path, encoding: str, *arguments: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "recalld", "--db", str(db), *arguments],
        capture_output=True,
        env={
            **os.environ,
            "PYTHONIOENCODING": encoding,
            "RECALLD_EMBEDDER": "none",
            "RECALLD_GRAPH_EXTRACTOR": "none",
        },
        timeout=60,
        check=False,
    )


@pytest.fixture
def unicode_db(tmp_path: Path) -> Path:
    db = tmp_path / "encoding.db"
    settings = Settings(db=db, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.remember(CONTENT)
    return db


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
@pytest.mark.parametrize("arguments", [("get", "--seq", "1", "--json"), ("list", "--json")])
def test_cli_json_on_a_stdout_that_is_not_utf8_is_whole_and_exact(
    unicode_db: Path, encoding: str, arguments: tuple[str, ...]
) -> None:
    # On a Latin-1 stdout `recalld get --json` was a UnicodeEncodeError traceback and no
    # document: 日本 has no Latin-1 byte.
    done = _recalld(unicode_db, encoding, *arguments)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""
    document = json.loads(done.stdout.decode("ascii"))  # escaped: pure ASCII
    memory = document if "content" in document else document["memories"][0]
    assert memory["content"] == CONTENT


@pytest.mark.parametrize("arguments", [("get", "--seq", "1"), ("list",), ("search", "Tokyo")])
def test_cli_tables_on_a_latin1_stdout_escape_what_it_cannot_encode(
    unicode_db: Path, arguments: tuple[str, ...]
) -> None:
    done = _recalld(unicode_db, "latin-1", *arguments)
    assert done.returncode == 0, done.stderr.decode()
    shown = done.stdout.decode("latin-1")
    assert "\\u65e5\\u672c in München" in shown
    assert "\\U0001f600" in shown


def test_ascii_json_is_the_same_document() -> None:
    text = json.dumps({"k": CONTENT, "n": [1.5, None]}, ensure_ascii=False)
    escaped = ascii_json(text)
    assert escaped.isascii()
    assert escaped == json.dumps({"k": CONTENT, "n": [1.5, None]})
