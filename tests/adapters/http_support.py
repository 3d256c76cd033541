"""Running `recalld serve` in a subprocess on a free loopback port, for the HTTP tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

STARTUP_SECONDS = 60.0


def free_port() -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_environment(**extra: str) -> dict[str, str]:
    """The environment for a server subprocess: keyword-only recall, no stray settings."""
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("RECALLD_")
    }
    environment.update(
        {"RECALLD_EMBEDDER": "none", "RECALLD_GRAPH_EXTRACTOR": "rules", "PYTHONUNBUFFERED": "1"}
    )
    environment.update(extra)
    return environment


class ServerProcess:
    """`python -m recalld serve` on ``db`` (a file or a ``postgresql://`` URL); ``start``
    returns once ``/healthz`` answers. With a URL, give ``log_path`` (there is no file
    to put it beside)."""

    def __init__(
        self,
        db: Path | str,
        *,
        host: str = "127.0.0.1",
        log_path: Path | None = None,
        arguments: tuple[str, ...] = (),
        **environment: str,
    ) -> None:
        self.db = db
        self.host = host
        self.port = 0
        self.environment = server_environment(**environment)
        if log_path is None:
            assert isinstance(db, Path), "a server on a URL needs a log_path"
            log_path = db.with_name(f"{db.stem}-server.log")
        self.log_path = log_path
        self.arguments = arguments
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """Where the server listens (always reached over loopback, IPv6 when bound there)."""
        address = "[::1]" if "::1" in self.host else "127.0.0.1"
        return f"http://{address}:{self.port}"

    def command(self) -> list[str]:
        """The command line that starts the server."""
        return [
            sys.executable,
            "-m",
            "recalld",
            "--db",
            str(self.db),
            "serve",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--log-level",
            "warning",
            *self.arguments,
        ]

    def start(self) -> ServerProcess:
        """Start on a free port (a few tries, in case another process takes it first)."""
        for _attempt in range(3):
            self.port = free_port()
            with self.log_path.open("ab") as log:
                self.process = subprocess.Popen(
                    self.command(), stdout=log, stderr=subprocess.STDOUT, env=self.environment
                )
            if self._wait_until_ready():
                return self
        raise RuntimeError(f"recalld serve did not start:\n{self.log()}")

    def _wait_until_ready(self) -> bool:
        assert self.process is not None
        deadline = time.monotonic() + STARTUP_SECONDS
        delay = 0.02
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=2).status_code == 200:
                    return True
            except httpx.TransportError:
                pass
            time.sleep(delay)  # polling a subprocess: there is no event to wait on
            delay = min(delay * 2, 0.2)
        self.kill()
        return False

    def kill(self) -> None:
        """SIGKILL the server (no shutdown, no flush) and reap it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        """Stop the server gracefully (SIGTERM), killing it if it does not exit."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()

    def log(self) -> str:
        """Everything the server printed."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
