"""A large import and another recalld process writing the same keys at once both finish,
under the ``lock_timeout`` the pool now sets (review of pass b64).

Pass b64 bounds every lock wait of recalld's connections by
``RECALLD_LOCK_RETRY_SECONDS``: a wait recalld itself makes for long (a transaction of
its own that holds a key's lock for long) would now fail after it, where it waited
before. An import writes in chunks of ``IMPORT_CHUNK_LINES``, one transaction each,
holding each key's lock until its chunk commits: another process's writer of that key
waits at most one chunk, well inside the bound, and neither side fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.transfer import IMPORT_CHUNK_LINES
from tests.adapters.http_support import server_environment

pytestmark = pytest.mark.postgres

KEYS = 20
# Several chunks, so the other process's writes fall between and inside them.
LINES = IMPORT_CHUNK_LINES * 4
WAIT_SECONDS = 300

# Writes the import's keys until told to stop (a line on stdin), then prints how many
# writes went through and the errors it met.
WRITER = textwrap.dedent(
    """
    import json, sys, threading
    from recalld.config import Settings
    from recalld.service import MemoryService

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
    written, errors = 0, []
    settings = Settings(db=sys.argv[1], embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        print("ready", flush=True)
        while not stop.is_set():
            try:
                service.remember(f"written by the other process {written}",
                                 key=f"shared.{written % %(keys)d}")
                written += 1
            except Exception as error:
                errors.append(f"{type(error).__name__}: {error}")
    print(json.dumps({"written": written, "errors": errors[:5]}), flush=True)
    """
).replace("%(keys)d", str(KEYS))


def test_a_large_import_and_another_processes_writes_of_its_keys_both_finish(
    postgres_url: str, tmp_path: Path
) -> None:
    source = tmp_path / "large.jsonl"
    with source.open("w", encoding="utf-8") as lines:
        for number in range(LINES):
            record = {"content": f"imported memory {number} " + "x" * 200}
            lines.write(json.dumps(record | {"key": f"shared.{number % KEYS}"}) + "\n")
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, postgres_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=server_environment(),
        text=True,
    )
    try:
        assert writer.stdout is not None
        assert writer.stdin is not None
        assert writer.stdout.readline().strip() == "ready"
        settings = Settings(db=postgres_url, embedder="none", graph_extractor="none")
        with MemoryService.open(settings) as service:
            report = service.import_file(source)
        writer.stdin.write("stop\n")
        writer.stdin.flush()
        output, _ = writer.communicate(timeout=WAIT_SECONDS)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    assert report.errors == [], report.errors
    assert report.created + report.updated == LINES
    summary = json.loads(output.strip().splitlines()[-1])
    assert summary["errors"] == [], summary
    assert summary["written"] > 0
