"""bench/adversarial.py in the suite: real server, CLI and MCP processes probed for
namespace leaks, 5xx answers and bytes left in files (and, where this process may
mount a tmpfs, a full disk); it exits 1 when a promise broke."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_adversarial_probes_find_no_broken_promise() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "adversarial.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert completed.stdout.strip(), completed.stderr[-4000:]
    summary = json.loads(completed.stdout.strip().splitlines()[-1])
    walls = summary["namespace_walls"]
    assert (walls["leaks"], walls["oracles"], walls["beta_intact"]) == (0, 0, True), walls
    sweep = summary["bad_input"]
    assert sweep["requests"] > 1000
    assert (sweep["server_errors"], sweep["dropped_connections"]) == (0, 0), sweep
    scans = summary["byte_scans"]
    assert scans["paths"] >= 13
    assert scans["left_in_files"] == [], scans
    full = summary["disk_full"]
    if full["measured"]:
        assert full["acknowledged_missing_after_restart"] == 0, full
        assert full["full_answer"]["type"] == "disk_full", full
    assert completed.returncode == 0, completed.stderr[-4000:]
