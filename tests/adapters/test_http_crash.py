"""Crash safety over HTTP: SIGKILL the server mid-stream, restart, find every acknowledged write.

Runs ``bench/crash_soak.py`` (the same code the 100+ cycle soak uses) for 10
cycles: client threads write over HTTP and record each acknowledged id, the
server is killed with SIGKILL while requests are in flight, restarted on the
same file, and every acknowledged id must be exported by the new server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adapters.http_support import server_environment

pytestmark = pytest.mark.slow

REPOSITORY = Path(__file__).resolve().parents[2]
CYCLES = 10


def test_http_crash_server_sigkill_keeps_every_acknowledged_write(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(REPOSITORY / "bench" / "crash_soak.py"),
            "--cycles",
            str(CYCLES),
            "--db",
            str(tmp_path / "soak.db"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=server_environment(),
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["cycles"] == CYCLES
    assert summary["acknowledged"] >= CYCLES * 20
    assert summary["missing"] == 0
    assert summary["refused"] == 0
    assert result.stderr.count("missing") == CYCLES
