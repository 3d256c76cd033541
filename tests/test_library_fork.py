"""A service opened before ``os.fork()``: the child gets a clear error, the parent goes on.

SQLite's locks belong to the process that took them and a PostgreSQL connection is a
socket the parent keeps using, so a forked child must open the database again. Before,
the child wrote through its parent's connection and a hybrid recall hung for ever on
query threads that only the parent has.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

import recalld
from recalld.config import Settings
from recalld.errors import StorageError
from recalld.service import MemoryService

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _in_child(service: MemoryService, db: Path | str) -> dict[str, object]:
    """What a forked child sees of ``service``, then of a database it opens itself."""
    seen: dict[str, object] = {}
    for name, call in (
        ("remember", lambda: service.remember("written by the child")),
        ("recall", lambda: service.recall("parent")),
        ("list", lambda: service.list_memories()),
        # A worker thread started here ran on the parent's connections: it died at once,
        # its traceback on stderr, while the caller got a Worker as if all were well.
        ("start_worker", lambda: service.start_worker()),
        ("new_worker", lambda: service.new_worker()),
    ):
        try:
            call()
            seen[name] = "no error"
        except StorageError as error:
            seen[name] = str(error)
    service.close()  # the child's copy only: must neither raise nor close the parent's
    seen["closed"] = service.closed
    with recalld.open(db, embedder="hashing", graph_extractor="none") as own:
        seen["own"] = own.remember("the child's own connection").status
    return seen


def test_a_forked_child_is_told_to_open_again_and_the_parent_goes_on(
    any_database: Path | str,
) -> None:
    settings = Settings(db=any_database, embedder="hashing", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.remember("the parent's first memory")
        assert service.recall("parent")  # the query threads are running now
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through the pipe
            # A safety net, not a timing: a hang (the old behaviour) ends the child.
            signal.alarm(60)
            code = 1  # the child failed before it could report
            try:
                os.write(write, json.dumps(_in_child(service, any_database)).encode())
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            seen = json.loads(pipe.read() or b"{}")
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, seen
        for name in ("remember", "recall", "list", "start_worker", "new_worker"):
            assert "is a fork of it" in seen[name], seen
            assert "open the database again in this process" in seen[name], seen
        assert seen["closed"] is True
        assert seen["own"] == "created"
        # The parent's connections, threads and pool were not touched by the child.
        assert service.remember("the parent after the fork").status == "created"
        contents = {hit.memory.content for hit in service.recall("child's own connection")}
        assert "the child's own connection" in contents
        assert "written by the child" not in {
            memory.content for memory in service.list_memories(limit=50).memories
        }
