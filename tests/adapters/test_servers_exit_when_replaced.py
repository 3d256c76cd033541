"""`recalld serve` and `recalld mcp --transport http` whose database was replaced under
them (a backup restored while they ran) stop and exit 1, as `recalld worker` does, so a
supervisor starts them again on the restored file; they answered 503 for ever (review of
pass c68)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest

from tests.adapters.http_support import ServerProcess
from tests.adapters.mcp_support import start_http_server, stop
from tests.restore_support import restore_under

# A server notices within a scheduler poll (1 s) and stops within a second more; generous
# for a loaded CI machine.
EXIT_SECONDS = 60


@pytest.mark.slow  # a server process started (about 2 s of imports)
def test_recalld_serve_exits_1_once_its_database_was_replaced(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    server = ServerProcess(db).start()
    try:
        assert server.process is not None
        created = httpx.post(f"{server.base_url}/v1/memories", json={"content": "kept"})
        assert created.status_code == 200, created.text
        restore_under(db)
        try:
            code = server.process.wait(timeout=EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            code = None
    finally:
        server.kill()
    assert code == 1, server.log()
    assert "moved, deleted or replaced" in server.log()


@pytest.mark.slow  # a server process started (about 2 s of imports)
def test_recalld_mcp_over_http_exits_1_once_its_database_was_replaced(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    process, _url = start_http_server(db, "native")
    try:
        restore_under(db)
        try:
            code = process.wait(timeout=EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            code = None
        assert process.stderr is not None
        said = process.stderr.read().decode(errors="replace") if code is not None else ""
    finally:
        stop(process)
    assert code == 1, said
    assert "moved, deleted or replaced" in said
