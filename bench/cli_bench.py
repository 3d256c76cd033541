"""CPU seconds of short ``recalld`` commands: ``--version``, ``stats``, ``get``, ``recall``.

A command an agent or a shell script runs often should not pay for loading the
embedding model, the web stack or the graph pipeline when it needs none of
them. This bench builds a database of ``--memories`` notes (embedded with the
configured model, so ``recall`` runs its real hybrid path), then runs each
command ``--runs`` times as a fresh process (``python -m recalld``, as the
installed launcher does) and reports the median and the minimum CPU time
(user + system, from ``getrusage`` of the finished child), plus wall time.

``recall`` loads the embedding model to embed its query, so it is expected to
cost more than the others; ``--version``, ``stats`` and ``get`` should not.

Run it from the repository root::

    .venv/bin/python bench/cli_bench.py [--runs 7] [--memories 200] [--embedder minilm]

The last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import recalld

WORDS = (
    "staging production deploy region database backup cluster node certificate alert "
    "kitchen door garden coffee meeting report friday budget travel flight hotel"
).split()


def _build(db: Path, memories: int, embedder: str) -> str:
    """Fill ``db``; return the id of one memory (for ``get``)."""
    with recalld.open(db, embedder=embedder, graph_extractor="none") as memory:
        first = None
        for index in range(memories):
            words = [WORDS[(index * 7 + offset * 3) % len(WORDS)] for offset in range(8)]
            receipt = memory.remember(f"note {index}: " + " ".join(words), tags=["bench"])
            first = first or receipt.id
        if memory.embedder is not None:
            memory.new_worker().run_until_idle()
    assert first is not None
    return first


def _run(command: list[str], environment: dict[str, str]) -> tuple[float, float]:
    """Run one command; its CPU seconds (user + system) and wall seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(command, env=environment, capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        raise RuntimeError(f"{command} failed: {completed.stderr.decode(errors='replace')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main() -> None:
    """Build the database, time each command, print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each command")
    parser.add_argument("--memories", type=int, default=200, help="memories in the database")
    parser.add_argument("--embedder", default="minilm", help="RECALLD_EMBEDDER for the run")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        db = Path(directory) / "bench.db"
        memory_id = _build(db, arguments.memories, arguments.embedder)
        environment = {
            name: value for name, value in os.environ.items() if not name.startswith("RECALLD_")
        }
        environment.update(
            {
                "RECALLD_DB": str(db),
                "RECALLD_EMBEDDER": arguments.embedder,
                "RECALLD_GRAPH_EXTRACTOR": "none",
            }
        )
        base = [sys.executable, "-m", "recalld"]
        commands = {
            "version": [*base, "--version"],
            "stats": [*base, "stats"],
            "get": [*base, "get", memory_id],
            "recall": [*base, "recall", "staging database backup"],
        }
        results: dict[str, Any] = {}
        for name, command in commands.items():
            _run(command, environment)  # warm the page cache and the .pyc files
            samples = [_run(command, environment) for _ in range(arguments.runs)]
            cpu = [sample[0] for sample in samples]
            wall = [sample[1] for sample in samples]
            results[name] = {
                "cpu_seconds_median": round(statistics.median(cpu), 3),
                "cpu_seconds_min": round(min(cpu), 3),
                "wall_seconds_median": round(statistics.median(wall), 3),
            }
            print(f"{name}: {results[name]}", file=sys.stderr)
    print(
        json.dumps(
            {
                "commands": results,
                "runs": arguments.runs,
                "memories": arguments.memories,
                "embedder": arguments.embedder,
                "recalld": recalld.__version__,
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": platform.machine(),
                "python": platform.python_version(),
                "load_average": [round(value, 2) for value in os.getloadavg()],
            }
        )
    )


if __name__ == "__main__":
    main()
