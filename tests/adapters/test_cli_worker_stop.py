"""`recalld worker` stopped by SIGTERM ends cleanly (adversarial pass d63): killed
outright before, its heartbeat went on saying it was alive (a worker of another model
waited for it for a lease), its batch stayed leased, and it printed no report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw

from recalld.config import Settings
from recalld.service import MemoryService

WAIT_SECONDS = 60.0


def _worker_state(db: Path) -> str | None:
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = connection.execute("SELECT state FROM workers").fetchall()
    finally:
        connection.close()
    return None if not rows else str(rows[0][0])


def test_sigterm_stops_the_worker_cleanly(tmp_path: Path) -> None:
    db = tmp_path / "memories.db"
    settings = Settings(db=db, embedder="hashing", graph_extractor="none", recall_catch_up=0)
    with MemoryService.open(settings) as service:
        service.remember("a memory to embed")
    environment = {
        **os.environ,
        "RECALLD_EMBEDDER": "hashing",
        "RECALLD_GRAPH_EXTRACTOR": "none",
        "HOME": str(tmp_path),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "recalld", "--db", str(db), "worker", "--json"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # A bounded wait for its first heartbeat (another process: no event to share).
        deadline = time.monotonic() + WAIT_SECONDS
        while _worker_state(db) is None and process.poll() is None:
            assert time.monotonic() < deadline, "the worker never wrote its heartbeat"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=WAIT_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert json.loads(out)["processed"] == 1
    assert _worker_state(db) == "stopped"
