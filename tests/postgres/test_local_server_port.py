"""The test PostgreSQL's port: one picked free may be taken before the server binds it.

Under ``pytest -n 2`` (``make test``) each worker starts its own servers on ports the
OS called free a moment before; the other worker's can take one first.
"""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path

import psycopg
import pytest

from tests.postgres_server import LocalPostgres


@pytest.mark.slow
def test_a_server_whose_picked_port_was_taken_before_it_bound_starts_on_another(
    postgres_server: LocalPostgres,
) -> None:
    del postgres_server  # only needs the --postgres option and the wheel
    # Not under pytest's tmp directory: that is private to root, and the server may run
    # as nobody.
    server = LocalPostgres(Path(tempfile.mkdtemp(prefix="recalld-port-taken-")), durable=False)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", server.port))
        holder.listen()
        taken = server.port
        try:
            server.start()
            assert server.port != taken
            with psycopg.connect(server.url(), connect_timeout=10) as connection:
                assert connection.execute("SELECT 1").fetchone() == (1,)
        finally:
            server.remove()
