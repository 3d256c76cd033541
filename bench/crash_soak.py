"""Crash soak for recalld's HTTP server (issue 5): acknowledged writes survive SIGKILL.

Each cycle starts ``recalld serve`` on the same database, lets several client
threads write memories over HTTP (``POST /v1/memories`` with client ids) and
record every id the server acknowledged with a 200, then SIGKILLs the *server*
while requests are still in flight, and starts it again. After every restart
the ids the new server exports must include every id ever acknowledged.

With ``--mixed`` (issue 10) three more writers share the file for the whole
soak, through the server's kills: the CLI (``recalld remember --id``, one
process per write), an MCP client over stdio (``recalld mcp``, the native
``remember`` tool) and the library (``MemoryService`` in its own process). Each
records the ids it saw acknowledged; at the end every acknowledged id of every
writer must be in the database exactly once, and no writer may have seen
``database is locked``.

Run it from the repository root::

    .venv/bin/python bench/crash_soak.py --cycles 100 [--clients 4] [--mixed] [--db PATH]

Progress goes to stderr; the last line of stdout is one JSON object. The exit
status is 1 if any acknowledged write was missing. The test suite runs it with
``--cycles 10``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import httpx

STARTUP_SECONDS = 60.0
LOCKED = "database is locked"
# The library and MCP writers pause this long between writes, so that on 2 cores they
# share the file with the HTTP clients instead of starving them.
WRITER_PAUSE_SECONDS = 0.02
LIBRARY_WRITER = f"""
import sys, time
from recalld.config import Settings
from recalld.service import MemoryService
with MemoryService.open(Settings(db=sys.argv[1], embedder="none")) as service:
    index = 0
    while True:
        memory_id = f"library-{{index}}"
        service.remember(f"soak {{memory_id}}", id=memory_id)
        print(memory_id, flush=True)
        index += 1
        time.sleep({WRITER_PAUSE_SECONDS})
"""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment() -> dict[str, str]:
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("RECALLD_")
    }
    environment["RECALLD_EMBEDDER"] = "none"
    return environment


def start_server(db: Path, log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``recalld serve`` on a free loopback port; return once ``/healthz`` answers."""
    for _attempt in range(3):
        port = _free_port()
        command = [
            sys.executable,
            "-m",
            "recalld",
            "--db",
            str(db),
            "serve",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ]
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=_environment()
            )
        base_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200:
                    return process, base_url
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        process.kill()
        process.wait()
    log_tail = log_path.read_text(errors="replace")[-3000:] if log_path.exists() else ""
    raise RuntimeError(f"recalld serve did not start:\n{log_tail}")


class Writers:
    """Client threads that write until stopped and remember what was acknowledged."""

    def __init__(self, base_url: str, cycle: int, clients: int) -> None:
        self.base_url = base_url
        self.cycle = cycle
        self.acknowledged: list[str] = []
        self.sent = 0
        self.refused: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._write, args=(number,), daemon=True)
            for number in range(clients)
        ]

    def start(self) -> None:
        """Start every client thread."""
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Ask the threads to stop and wait for them."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def count(self) -> int:
        """How many writes were acknowledged so far."""
        with self._lock:
            return len(self.acknowledged)

    def _write(self, number: int) -> None:
        with httpx.Client(base_url=self.base_url, timeout=30) as client:
            index = 0
            while not self._stop.is_set():
                memory_id = f"soak-{self.cycle}-{number}-{index}"
                index += 1
                with self._lock:
                    self.sent += 1
                try:
                    response = client.post(
                        "/v1/memories", json={"id": memory_id, "content": f"soak {memory_id}"}
                    )
                except httpx.TransportError:
                    return  # the server was killed: this write was never acknowledged
                with self._lock:
                    if response.status_code == 200:
                        self.acknowledged.append(memory_id)
                    else:
                        self.refused.append(f"{response.status_code} {response.text[:200]}")


class MixedWriters:
    """The CLI, an MCP stdio client and the library, writing the same file all along."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.acknowledged: dict[str, list[str]] = {"cli": [], "mcp": [], "library": []}
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._cli, daemon=True),
            threading.Thread(target=self._mcp, daemon=True),
        ]
        self._library = subprocess.Popen(
            [sys.executable, "-c", LIBRARY_WRITER, str(db)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_environment(),
        )
        self._threads.append(threading.Thread(target=self._read_library, daemon=True))

    def start(self) -> None:
        """Start every writer."""
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Stop every writer and collect what they saw."""
        self._stop.set()
        self._library.terminate()
        _, errors = self._library.communicate(timeout=60)
        if LOCKED in errors:
            self.errors.append(f"library: {LOCKED}")
        for thread in self._threads:
            thread.join(timeout=120)

    def _cli(self) -> None:
        index = 0
        while not self._stop.is_set():
            memory_id = f"cli-{index}"
            index += 1
            command = [sys.executable, "-m", "recalld", "--db", str(self.db), "remember"]
            result = subprocess.run(
                [*command, f"soak {memory_id}", "--id", memory_id, "--json"],
                capture_output=True,
                text=True,
                env=_environment(),
                timeout=300,
                check=False,
            )
            if result.returncode == 0:
                self.acknowledged["cli"].append(json.loads(result.stdout)["id"])
            else:
                self.errors.append(f"cli {memory_id}: {result.stderr.strip()[-200:]}")

    def _mcp(self) -> None:
        from mcp import Client, StdioServerParameters

        async def write() -> None:
            parameters = StdioServerParameters(
                command=sys.executable,
                args=["-m", "recalld", "--db", str(self.db), "mcp"],
                env=_environment(),
            )
            async with Client(parameters) as client:
                index = 0
                while not self._stop.is_set():
                    memory_id = f"mcp-{index}"
                    index += 1
                    arguments = {"content": f"soak {memory_id}", "id": memory_id}
                    result = await client.call_tool("remember", arguments)
                    if getattr(result, "is_error", True):
                        self.errors.append(f"mcp {memory_id}: {result}")
                    else:
                        self.acknowledged["mcp"].append(memory_id)
                    await asyncio.sleep(WRITER_PAUSE_SECONDS)

        import asyncio

        asyncio.run(write())

    def _read_library(self) -> None:
        assert self._library.stdout is not None
        for line in self._library.stdout:
            self.acknowledged["library"].append(line.strip())


def stored_rows(db: Path) -> tuple[set[str], int]:
    """Every id in the database (any namespace), and how many contents appear twice."""
    connection = apsw.Connection(str(db))
    connection.set_busy_timeout(30_000)
    ids = {str(row[0]) for row in connection.execute("SELECT id FROM memories")}
    duplicated = connection.execute(
        "SELECT count(*) FROM (SELECT content FROM memories GROUP BY content HAVING count(*) > 1)"
    ).fetchone()
    connection.close()
    return ids, int(duplicated[0]) if duplicated else 0


def exported_ids(base_url: str) -> set[str]:
    """Every memory id the server holds (in the default namespace)."""
    response = httpx.get(f"{base_url}/v1/export", timeout=120)
    response.raise_for_status()
    return {json.loads(line)["id"] for line in response.text.splitlines() if line.strip()}


def soak(db: Path, cycles: int, clients: int, seed: int, mixed: bool = False) -> dict[str, Any]:
    """Run the kill/restart cycles and return the summary."""
    chooser = random.Random(seed)
    log_path = db.with_name(f"{db.name}-server.log")
    acknowledged: set[str] = set()
    missing: set[str] = set()
    refused: list[str] = []
    in_flight_kept = 0
    sent = 0
    started = time.monotonic()
    process, base_url = start_server(db, log_path)
    others = MixedWriters(db) if mixed else None
    if others is not None:
        others.start()
    for cycle in range(cycles):
        writers = Writers(base_url, cycle, clients)
        target = chooser.randint(20, 300)
        writers.start()
        deadline = time.monotonic() + 60
        while writers.count() < target and time.monotonic() < deadline:
            time.sleep(0.002)
        process.send_signal(signal.SIGKILL)
        process.wait()
        writers.stop()
        cycle_acknowledged = set(writers.acknowledged)
        acknowledged |= cycle_acknowledged
        refused += writers.refused
        sent += writers.sent
        process, base_url = start_server(db, log_path)
        present = exported_ids(base_url)
        missing |= acknowledged - present
        in_flight_kept += len({item for item in present if item.startswith(f"soak-{cycle}-")}) - (
            len(cycle_acknowledged)
        )
        print(
            f"cycle {cycle + 1}/{cycles}: {len(cycle_acknowledged)} acknowledged,"
            f" {len(acknowledged)} in total, {len(missing)} missing",
            file=sys.stderr,
        )
    mixed_summary: dict[str, Any] = {}
    if others is not None:
        others.stop()
        stored, duplicated = stored_rows(db)
        by_writer = {name: len(ids) for name, ids in others.acknowledged.items()}
        lost = {name: sorted(set(ids) - stored)[:10] for name, ids in others.acknowledged.items()}
        missing |= {item for items in lost.values() for item in items}
        locked = [error for error in others.errors if LOCKED in error]
        locked += [
            line for line in log_path.read_text(errors="replace").splitlines() if LOCKED in line
        ]
        mixed_summary = {
            "acknowledged_by_writer": {"http": len(acknowledged), **by_writer},
            "acknowledged_total": len(acknowledged) + sum(by_writer.values()),
            "missing_by_writer": {name: len(items) for name, items in lost.items()},
            "duplicated_contents": duplicated,
            "database_is_locked": len(locked),
            "writer_errors": len(others.errors),
            "writer_error_sample": others.errors[:5],
        }
    process.terminate()
    process.wait(timeout=30)
    return {
        "benchmark": "crash_soak",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
        "settings": {
            "cycles": cycles,
            "clients": clients,
            "seed": seed,
            "synchronous": "FULL",
            "mixed": mixed,
        },
        **({"mixed": mixed_summary} if mixed_summary else {}),
        "cycles": cycles,
        "sent": sent,
        "acknowledged": len(acknowledged),
        "missing": len(missing),
        "missing_sample": sorted(missing)[:10],
        "unacknowledged_but_present": in_flight_kept,
        "refused": len(refused),
        "refused_sample": refused[:5],
        "seconds": round(time.monotonic() - started, 1),
    }


def main() -> None:
    """Parse arguments, run the soak, print the JSON summary; exit 1 on any loss."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cycles", type=int, default=100)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", type=Path, help="database file (default: a temporary one)")
    parser.add_argument(
        "--mixed", action="store_true", help="also write through the CLI, MCP stdio and the library"
    )
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="recalld-soak-") as directory:
        db = arguments.db or Path(directory) / "soak.db"
        summary = soak(db, arguments.cycles, arguments.clients, arguments.seed, arguments.mixed)
    print(json.dumps(summary))
    mixed = summary.get("mixed", {})
    if (
        summary["missing"]
        or summary["refused"]
        or mixed.get("duplicated_contents")
        or mixed.get("database_is_locked")
    ):
        sys.exit(1)


if __name__ == "__main__":
    main()
