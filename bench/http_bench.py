"""HTTP benchmark for recalld (issue 5): remember and recall over loopback.

Starts ``recalld serve`` (defaults: WAL, ``synchronous=FULL``, FTS5) on a fresh
database, preloads ``--preload`` memories through ``POST /remember``, then for
1, 4 and 16 concurrent clients (asyncio tasks sharing one ``httpx.AsyncClient``
connection pool, one connection each) sends ``--requests`` requests of each
kind and reports requests/s and latency p50/p95:

* **remember**: ``POST /remember`` with a fresh synthetic sentence (one durable
  transaction each, fsync per commit);
* **recall**: ``POST /recall`` with 1-3 words from the vocabulary, ``limit`` 5
  (recall counts an access of each hit, so it writes too).

The client runs on the same machine as the server and shares its CPUs, so the
numbers are a floor for what a remote client would see.

Run it from the repository root::

    .venv/bin/python bench/http_bench.py [--requests 1000] [--preload 5000] [--seed 1]

Progress goes to stderr; the last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

import recalld

CONCURRENCY = (1, 4, 16)
STARTUP_SECONDS = 60.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(db: Path, log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``recalld serve`` on a free loopback port; return once ``/healthz`` answers."""
    port = _free_port()
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("RECALLD_")
    }
    environment["RECALLD_EMBEDDER"] = "none"
    command = [sys.executable, "-m", "recalld", "--db", str(db), "serve", "--port", str(port)]
    command += ["--log-level", "warning"]
    with log_path.open("ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment)
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
    log_tail = log_path.read_text(errors="replace")[-3000:] if log_path.exists() else ""
    raise RuntimeError(f"recalld serve did not start:\n{log_tail}")


def vocabulary(chooser: random.Random, size: int = 2000) -> list[str]:
    """Pronounceable pseudo-words."""
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "da"]
    words = {
        "".join(chooser.choice(syllables) for _ in range(chooser.randint(2, 4)))
        for _ in range(size * 2)
    }
    return sorted(words)[:size]


def sentence(chooser: random.Random, words: list[str]) -> str:
    """A synthetic memory of 8-30 words (Zipf-ish: early words are more common)."""
    count = chooser.randint(8, 30)
    return " ".join(
        words[min(int(chooser.paretovariate(1.0)) - 1, len(words) - 1)] for _ in range(count)
    )


async def run_phase(
    base_url: str, kind: str, concurrency: int, requests: int, bodies: list[dict[str, Any]]
) -> dict[str, Any]:
    """Send ``requests`` requests of ``kind`` from ``concurrency`` tasks; time each one."""
    latencies: list[float] = []
    errors = 0
    queue = iter(bodies)
    path = "/remember" if kind == "remember" else "/recall"
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as client:

        async def worker() -> None:
            nonlocal errors
            for body in queue:
                started = time.perf_counter()
                response = await client.post(path, json=body)
                latencies.append(time.perf_counter() - started)
                if response.status_code != 200:
                    errors += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    quantiles = statistics.quantiles(latencies, n=100)
    return {
        "concurrency": concurrency,
        "requests": requests,
        "errors": errors,
        "seconds": round(elapsed, 3),
        "requests_per_s": round(requests / elapsed, 1),
        "p50_ms": round(quantiles[49] * 1000, 3),
        "p95_ms": round(quantiles[94] * 1000, 3),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 3),
    }


async def benchmark(base_url: str, requests: int, preload: int, seed: int) -> dict[str, Any]:
    """Preload, then run every (kind, concurrency) phase."""
    chooser = random.Random(seed)
    words = vocabulary(chooser)
    preload_bodies = [{"content": sentence(chooser, words)} for _ in range(preload)]
    print(f"preloading {preload} memories", file=sys.stderr)
    await run_phase(base_url, "remember", 16, preload, preload_bodies)
    results: dict[str, list[dict[str, Any]]] = {"remember": [], "recall": []}
    for concurrency in CONCURRENCY:
        for kind in ("remember", "recall"):
            bodies: list[dict[str, Any]]
            if kind == "remember":
                bodies = [{"content": sentence(chooser, words)} for _ in range(requests)]
            else:
                bodies = [
                    {
                        "query": " ".join(chooser.sample(words[:500], chooser.randint(1, 3))),
                        "limit": 5,
                    }
                    for _ in range(requests)
                ]
            result = await run_phase(base_url, kind, concurrency, requests, bodies)
            print(f"{kind} x{concurrency}: {result}", file=sys.stderr)
            results[kind].append(result)
    return results


def main() -> None:
    """Parse arguments, run the benchmark against a fresh server, print the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=1000, help="per kind and concurrency")
    parser.add_argument("--preload", type=int, default=5000, help="memories written first")
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="recalld-http-bench-") as directory:
        db = Path(directory) / "bench.db"
        process, base_url = start_server(db, Path(directory) / "server.log")
        try:
            results = asyncio.run(
                benchmark(base_url, arguments.requests, arguments.preload, arguments.seed)
            )
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    print(
        json.dumps(
            {
                "benchmark": "http_bench",
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": {
                    "cpu_count": os.cpu_count(),
                    "platform": platform.platform(),
                    "machine": platform.machine(),
                },
                "python": platform.python_version(),
                "recalld": recalld.__version__,
                "settings": {
                    "synchronous": "FULL",
                    "journal_mode": "WAL",
                    "fts": True,
                    "requests_per_phase": arguments.requests,
                    "preload": arguments.preload,
                    "recall_limit": 5,
                    "seed": arguments.seed,
                    "server": "uvicorn, 1 process, loopback",
                    "client": "httpx.AsyncClient on the same machine",
                },
                "results": results,
            }
        )
    )


if __name__ == "__main__":
    main()
