"""Fixtures of the PostgreSQL tests: a server of the test's own to stop and restart."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres_server import LocalPostgres


@pytest.fixture
def own_server(postgres_server: LocalPostgres) -> Iterator[LocalPostgres]:
    """A PostgreSQL this test may stop and restart (the session's must stay up), with a
    database ``recalld``."""
    del postgres_server  # only needs the --postgres option and the wheel
    server = LocalPostgres(Path(tempfile.mkdtemp(prefix="recalld-own-server-")), durable=False)
    try:
        server.start()
        server.create_database("recalld")
        yield server
    finally:
        server.remove()
