"""Many processes, one file: an HTTP server and three library writers write at once.

Every process writes 2,000 memories with unique markers (the server's come in
over HTTP from four client threads). Afterwards every marker is present exactly
once and no caller saw an error: no lost writes, no ``database is locked``.
Durability stays at the default ``synchronous=FULL``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.adapters.concurrent_writer import marker
from tests.adapters.http_support import ServerProcess, server_environment

pytestmark = pytest.mark.slow

WRITES_PER_PROCESS = 2_000
LIBRARY_WRITERS = 3
HTTP_CLIENT_THREADS = 4
REPOSITORY = Path(__file__).resolve().parents[2]


def _write_over_http(base_url: str, thread: int) -> list[str]:
    errors: list[str] = []
    share = WRITES_PER_PROCESS // HTTP_CLIENT_THREADS
    with httpx.Client(base_url=base_url, timeout=120) as client:
        for index in range(thread * share, (thread + 1) * share):
            try:
                response = client.post("/remember", json={"content": marker("http", index)})
            except httpx.HTTPError as error:
                errors.append(f"{index}: {error!r}")
                continue
            if response.status_code != 200:
                errors.append(f"{index}: {response.status_code} {response.text}")
    return errors


def test_http_concurrency_four_processes_lose_no_write(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    server = ServerProcess(db).start()
    try:
        writers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.adapters.concurrent_writer",
                    "--db",
                    str(db),
                    "--writer",
                    f"lib{number}",
                    "--count",
                    str(WRITES_PER_PROCESS),
                ],
                cwd=REPOSITORY,
                env=server_environment(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for number in range(LIBRARY_WRITERS)
        ]
        with ThreadPoolExecutor(HTTP_CLIENT_THREADS) as pool:
            http_errors = [
                error
                for errors in pool.map(
                    lambda thread: _write_over_http(server.base_url, thread),
                    range(HTTP_CLIENT_THREADS),
                )
                for error in errors
            ]
        reports = []
        for writer in writers:
            stdout, stderr = writer.communicate(timeout=600)
            assert writer.returncode == 0, stderr
            reports.append(json.loads(stdout.strip().splitlines()[-1]))
    finally:
        server.stop()
    assert http_errors == []
    for report in reports:
        assert report["errors"] == [], report["errors"][:5]
        assert report["acknowledged"] == WRITES_PER_PROCESS
    assert "database is locked" not in server.log()

    with MemoryService.open(Settings(db=db, embedder="none")) as service:
        contents = Counter(json.loads(line)["content"] for line in service.export())
    expected = {
        marker(writer, index)
        for writer in ["http", *(f"lib{number}" for number in range(LIBRARY_WRITERS))]
        for index in range(WRITES_PER_PROCESS)
    }
    assert set(contents) == expected
    assert set(contents.values()) == {1}
    assert sum(contents.values()) == WRITES_PER_PROCESS * (LIBRARY_WRITERS + 1)
