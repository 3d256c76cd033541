"""A worker killed mid-batch (kill -9): after its lease expires every job completes once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import apsw
import pytest

from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.worker import Worker
from tests.conftest import FakeClock
from tests.semantic_support import NamedEmbedder, semantic_settings

REPOSITORY = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_worker_crash_mid_batch_then_restart_completes_every_job_once(db_path: Path) -> None:
    settings = semantic_settings(db_path, worker_batch_size=8)
    embedder = NamedEmbedder("hashing-64")
    with MemoryService(open_store(settings), settings, embedder=embedder) as service:
        receipts = service.remember_many([{"content": f"memory {index}"} for index in range(20)])
        marker = db_path.parent / "claimed"
        child = subprocess.Popen(
            [sys.executable, "-m", "tests.worker_child", str(db_path), str(marker)],
            cwd=REPOSITORY,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 60
            while not marker.exists():
                assert child.poll() is None, child.stderr.read() if child.stderr else ""
                assert time.monotonic() < deadline, "the child never claimed a batch"
                time.sleep(0.02)  # bounded polling for the child's signal, not synchronisation
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.wait(30)
            if child.stderr is not None:
                child.stderr.close()
        assert marker.read_text() == "8"
        status = service.status()
        assert status.queue["running"] == 8
        assert [worker.id for worker in status.workers] == ["doomed"]

        # Before the lease expires, a new worker leaves the dead worker's jobs alone.
        early = service.new_worker(worker_id="early").run_until_idle()
        assert early.processed == 12
        assert service.status().queue == {"queued": 0, "running": 8, "done": 12, "failed": 0}
        # Done jobs are deleted on completion; the 8 left are the dead worker's, tried once.
        reader = apsw.Connection(str(db_path))
        attempts = reader.execute(
            "SELECT state, attempts, count(*) FROM jobs WHERE kind = 'embed'"
            " GROUP BY 1, 2 ORDER BY 1"
        ).fetchall()
        reader.close()
        assert attempts == [("running", 1, 8)]

        # After it expires (the clock is moved past the 60 s lease), they are taken over.
        later = FakeClock(datetime.now(UTC) + timedelta(seconds=120))
        restarted = Worker(service.store, embedder, settings, clock=later, worker_id="restarted")
        report = restarted.run_until_idle()
        assert report.processed == 8
        status = service.status()
        assert status.queue == {"queued": 0, "running": 0, "done": 20, "failed": 0}
        assert status.embeddings == {"hashing-64": 20}
        assert {service.get(receipt.id).index_state for receipt in receipts} == {"indexed"}
        # Exactly once: 12 + 8 completions for 20 jobs; the dead worker completed none.
        assert early.processed + report.processed == 20
        assert report.failed_attempts == 0
        reader = apsw.Connection(str(db_path))
        left = reader.execute("SELECT count(*) FROM jobs WHERE kind = 'embed'").fetchall()
        reader.close()
        assert left == [(0,)]  # done embedding jobs are deleted on completion
