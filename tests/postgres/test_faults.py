"""Bad locations and servers are one clear error at start; a server that goes away and comes
back costs requests a 503, never an acknowledged write.

These tests stop and start a PostgreSQL of their own (not the session's).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest

from recalld.config import Settings
from recalld.errors import DatabaseUnavailableError, StorageError, ValidationError
from recalld.store.factory import open_store
from recalld.store.postgres_connection import PostgresDatabase, check_server
from tests.adapters.http_support import ServerProcess, free_port
from tests.postgres_server import LocalPostgres

pytestmark = pytest.mark.postgres

SECRET = "s3cr3t-never-printed"
RECOVERY_SECONDS = 60.0


def _open(url: str) -> None:
    open_store(Settings(db=url, embedder="none", postgres_connect_timeout_seconds=3)).close()


def test_malformed_url_names_the_field_and_hides_the_password() -> None:
    with pytest.raises(ValidationError) as caught:
        _open(f"postgresql://recalld:{SECRET}@[::1/recalld")
    assert caught.value.field == "db"
    assert SECRET not in str(caught.value)
    assert "***" in str(caught.value)


def test_refused_connection_is_one_clear_error(tmp_path: Path) -> None:
    url = f"postgresql://recalld:{SECRET}@127.0.0.1:{free_port()}/recalld"
    with pytest.raises(DatabaseUnavailableError) as caught:
        _open(url)
    message = str(caught.value)
    assert "cannot connect to postgresql://recalld:***@127.0.0.1" in message
    assert SECRET not in message
    result = subprocess.run(
        [sys.executable, "-m", "recalld", "--db", url, "stats"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"RECALLD_POSTGRES_CONNECT_TIMEOUT_SECONDS": "3", "PATH": ""},
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert "cannot connect" in result.stderr
    assert SECRET not in result.stderr + result.stdout
    assert len(result.stderr.strip().splitlines()) == 1


def test_wrong_password_is_refused_without_echoing_it(own_server: LocalPostgres) -> None:
    url = own_server.url("recalld").replace(own_server.password, SECRET)
    with pytest.raises(DatabaseUnavailableError) as caught:
        _open(url)
    assert "password authentication failed" in str(caught.value)
    assert SECRET not in str(caught.value)


def test_missing_vector_extension_is_named(own_server: LocalPostgres) -> None:
    with psycopg.connect(own_server.url(), autocommit=True) as connection:
        connection.execute("CREATE ROLE plain LOGIN PASSWORD 'plain-password'")
        connection.execute("CREATE DATABASE noext")
        connection.execute("REVOKE CREATE ON DATABASE noext FROM PUBLIC")
    url = f"postgresql://plain:plain-password@127.0.0.1:{own_server.port}/noext"
    with pytest.raises(StorageError) as caught:
        _open(url)
    assert "'vector' extension" in str(caught.value)
    assert "CREATE EXTENSION vector" in str(caught.value)


def test_too_old_server_or_pgvector_is_refused() -> None:
    with pytest.raises(StorageError, match=r"runs PostgreSQL 13\.11; recalld needs PostgreSQL 14"):
        check_server(130011, "0.8.0", "db")
    with pytest.raises(StorageError, match=r"extension 0\.7\.4; recalld needs pgvector 0\.8\.0"):
        check_server(170002, "0.7.4", "db")
    check_server(140000, "0.8.0", "db")


def test_database_away_means_503_then_recovery(own_server: LocalPostgres, tmp_path: Path) -> None:
    server = ServerProcess(
        own_server.url("recalld"),
        log_path=tmp_path / "server.log",
        RECALLD_POSTGRES_CONNECT_TIMEOUT_SECONDS="2",
    ).start()
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            written = client.post("/v1/memories", json={"content": "before the outage"})
            assert written.status_code == 200
            own_server.stop()
            away = client.get("/v1/stats")
            assert away.status_code == 503
            error = away.json()["error"]
            assert error["type"] == "database_unavailable"
            assert "database is unavailable" in error["message"]
            assert away.headers["retry-after"] == "1"
            own_server.start()
            deadline = threading.Event()
            timer = threading.Timer(RECOVERY_SECONDS, deadline.set)
            timer.start()
            try:
                while not deadline.is_set():
                    back = client.get("/v1/stats")
                    if back.status_code == 200:
                        break
                    deadline.wait(0.2)
            finally:
                timer.cancel()
            assert back.status_code == 200
            assert back.json()["count"] == 1
            found = client.get(f"/v1/memories/{written.json()['id']}")
            assert found.json()["content"] == "before the outage"
        assert own_server.password not in server.log()
    finally:
        server.stop()


def test_no_acknowledged_write_is_lost_across_a_crash(
    own_server: LocalPostgres, tmp_path: Path
) -> None:
    server = ServerProcess(
        own_server.url("recalld"),
        log_path=tmp_path / "server.log",
        RECALLD_POSTGRES_CONNECT_TIMEOUT_SECONDS="2",
    ).start()
    acknowledged: list[str] = []
    enough = threading.Event()
    done = threading.Event()

    def write() -> None:
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            for index in range(400):
                if done.is_set():
                    return
                response = client.post("/v1/memories", json={"content": f"write {index}"})
                if response.status_code == 200:
                    acknowledged.append(response.json()["id"])
                if len(acknowledged) >= 40:
                    enough.set()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert enough.wait(60)
        own_server.stop(immediate=True)  # SIGQUIT: no checkpoint, crash recovery at start
        own_server.start()
        done.set()
        writer.join(timeout=120)
        with psycopg.connect(own_server.url("recalld")) as connection:
            stored = {row[0] for row in connection.execute("SELECT id FROM memories")}
        assert acknowledged
        assert set(acknowledged) <= stored
    finally:
        done.set()
        writer.join(timeout=120)
        server.stop()


def _server_processes(server: LocalPostgres) -> list[int]:
    """The postmaster and every backend and helper it started."""
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                # pid (comm) state ppid ...: comm may hold spaces, so split after it.
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:
                children.append(int(entry.name))
    return [postmaster, *children]


@contextmanager
def _stopped(server: LocalPostgres) -> Iterator[None]:
    """The server's processes stopped (SIGSTOP: sockets open, nothing answers), then
    continued."""
    processes = _server_processes(server)
    for process in processes:
        os.kill(process, signal.SIGSTOP)
    try:
        yield
    finally:
        for process in processes:
            os.kill(process, signal.SIGCONT)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds backends in /proc")
def test_a_database_that_stops_answering_means_503_not_a_hang(
    own_server: LocalPostgres, tmp_path: Path
) -> None:
    server = ServerProcess(
        own_server.url("recalld"),
        log_path=tmp_path / "server.log",
        RECALLD_POSTGRES_CONNECT_TIMEOUT_SECONDS="2",
    ).start()
    try:
        # The client's timeout is the bound: a hang fails the test.
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            assert client.post("/v1/memories", json={"content": "before"}).status_code == 200
            with _stopped(own_server):
                for _ in range(2):  # the connection in use, then the pool's next one
                    stalled = client.post("/v1/memories", json={"content": "during"})
                    assert stalled.status_code == 503
                    assert stalled.json()["error"]["type"] == "database_unavailable"
            deadline = threading.Event()
            timer = threading.Timer(RECOVERY_SECONDS, deadline.set)
            timer.start()
            try:
                while not deadline.is_set():
                    back = client.post("/v1/memories", json={"content": "after"})
                    if back.status_code == 200:
                        break
                    deadline.wait(0.2)
            finally:
                timer.cancel()
            assert back.status_code == 200
        assert "stopped or hung" in server.log() or "couldn't get a connection" in server.log()
    finally:
        server.stop()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds backends in /proc")
def test_a_stopped_database_is_named_and_a_long_statement_is_not_cut(
    own_server: LocalPostgres,
) -> None:
    database = PostgresDatabase(own_server.url("recalld"), connect_timeout=1, min_size=1)
    try:
        # Longer than the watchdog's patience, on a server that answers: it runs to its end.
        assert database.read("SELECT pg_sleep(2.5)") == [("",)]
        outcome: list[DatabaseUnavailableError] = []

        def read() -> None:
            try:
                with database.connection() as connection:
                    connection.execute("SELECT 1")
                    with _stopped(own_server):
                        connection.execute("SELECT 1")
            except DatabaseUnavailableError as error:
                outcome.append(error)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout=30)
        assert not reader.is_alive()
        assert len(outcome) == 1
        assert "stopped or hung" in str(outcome[0])
        # The cut connection was discarded: the next one works.
        assert database.read("SELECT 1") == [(1,)]
    finally:
        database.close()
