"""Crash soak for recalld's HTTP server (issue 5): acknowledged writes survive SIGKILL.

Each cycle starts ``recalld serve`` on the same database, lets several client
threads write memories over HTTP (``POST /v1/memories`` with client ids) and
record every id the server acknowledged with a 200, then SIGKILLs the *server*
while requests are still in flight, and starts it again. After every restart
the ids the new server exports must include every id ever acknowledged.

Run it from the repository root::

    .venv/bin/python bench/crash_soak.py --cycles 100 [--clients 4] [--db PATH] [--seed 1]

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

import httpx

STARTUP_SECONDS = 60.0


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


def exported_ids(base_url: str) -> set[str]:
    """Every memory id the server holds (in the default namespace)."""
    response = httpx.get(f"{base_url}/v1/export", timeout=120)
    response.raise_for_status()
    return {json.loads(line)["id"] for line in response.text.splitlines() if line.strip()}


def soak(db: Path, cycles: int, clients: int, seed: int) -> dict[str, Any]:
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
    process.terminate()
    process.wait(timeout=30)
    return {
        "benchmark": "crash_soak",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
        "settings": {"cycles": cycles, "clients": clients, "seed": seed, "synchronous": "FULL"},
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
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="recalld-soak-") as directory:
        db = arguments.db or Path(directory) / "soak.db"
        summary = soak(db, arguments.cycles, arguments.clients, arguments.seed)
    print(json.dumps(summary))
    if summary["missing"] or summary["refused"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
