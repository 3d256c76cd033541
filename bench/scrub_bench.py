"""What scrubbing costs (issue 10): a plain write, against writes that drop content.

A write that drops content (a key overwrite, an update, a forget) is followed
by one scrub: a ``wal_checkpoint(TRUNCATE)``, which writes the log's pages into
the database file and syncs it, then truncates the log. A write that drops
nothing (a new memory) does not scrub. This measures both through the library
on one file with ``--preload`` memories, ``synchronous=FULL`` (recalld's
default), no other process attached.

Run it from the repository root::

    .venv/bin/python bench/scrub_bench.py [--preload 5000] [--writes 500]

Progress goes to stderr; the last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recalld.config import Settings
from recalld.service import MemoryService


def _latencies(operation: Callable[[int], object], count: int) -> dict[str, float]:
    samples = []
    for index in range(count):
        started = time.perf_counter()
        operation(index)
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p95_ms": round(samples[int(0.95 * (len(samples) - 1))], 3),
        "mean_ms": round(statistics.fmean(samples), 3),
    }


def run(directory: Path, preload: int, writes: int) -> dict[str, Any]:
    """Preload, then time creates, overwrites, updates and forgets."""
    settings = Settings(db=directory / "scrub.db", embedder="none", synchronous="FULL")
    with MemoryService.open(settings) as memory:
        memory.remember_many(
            [{"content": f"preloaded memory {index} about the garden"} for index in range(preload)]
        )
        for index in range(writes):
            memory.remember(f"value {index} before", key=f"key-{index}")
        created = [memory.remember(f"to forget {index}").id for index in range(writes)]
        results = {
            "create": _latencies(lambda index: memory.remember(f"new memory {index}"), writes),
            "key_overwrite": _latencies(
                lambda index: memory.remember(f"value {index} after", key=f"key-{index}"), writes
            ),
            "update": _latencies(
                lambda index: memory.update(created[index], content=f"updated {index}"), writes
            ),
            "forget": _latencies(lambda index: memory.forget(created[index]), writes),
        }
        pending = getattr(memory.stats(), "pending_scrubs", None)  # (None before issue 10)
    return {"results": results, "pending_scrubs_after": pending}


def main() -> None:
    """Run and print the JSON summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--preload", type=int, default=5_000)
    parser.add_argument("--writes", type=int, default=500)
    arguments = parser.parse_args()
    print(f"preloading {arguments.preload} memories ...", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="recalld-scrub-") as directory:
        measured = run(Path(directory), arguments.preload, arguments.writes)
    summary = {
        "benchmark": "scrub_bench",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
        "load_average_at_end": [round(value, 2) for value in os.getloadavg()],
        "settings": {
            "preload": arguments.preload,
            "writes": arguments.writes,
            "synchronous": "FULL",
        },
        **measured,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
