"""What a question naming a period costs a recall (the period's own search and features).

Writes ``--n`` short notes whose ``at`` is spread over the year before a fixed
clock, embeds them with the default model, then times hybrid recall of three
questions that differ only in the period they name (none, "last weekend": ~0.5 %
of the notes, "in June": ~8 %). Each question's vector is cached after the
first recall, so the figures are the engine's own time.

Run from the repository root (one JSON object on stdout)::

    .venv/bin/python bench/period_bench.py [--n 10000] [--repeat 60]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from recalld import MemoryService, Settings

NOW = datetime(2026, 12, 4, 12, tzinfo=UTC)
VOCABULARY = (
    "coffee meeting project budget garden dinner friend train book movie walk gym doctor "
    "school report email call trip beach hike concert bill car phone cake party music"
).split()
QUESTIONS = {
    "no_period": "what did I do with my friend at the big party?",
    "last_weekend": "what did I do with my friend last weekend?",
    "in_june": "what did I do with my friend in June?",
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="notes to write")
    parser.add_argument("--repeat", type=int, default=60, help="recalls per question")
    arguments = parser.parse_args(argv)
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(db=Path(directory) / "periods.db", graph_extractor="none")
        with MemoryService.open(settings, clock=lambda: NOW) as service:
            batch = []
            for number in range(arguments.n):
                text = " ".join(rng.choice(VOCABULARY) for _ in range(8)) + f" note {number}"
                at = NOW - timedelta(days=rng.uniform(0, 365))
                batch.append({"content": text, "at": at.isoformat()})
                if len(batch) == 500:
                    service.remember_many(batch)
                    batch = []
            if batch:
                service.remember_many(batch)
            service.new_worker().run_until_idle()
            for question in QUESTIONS.values():
                service.recall(question, limit=10)  # the vector is cached from here on
            p50 = {}
            for name, question in QUESTIONS.items():
                times = []
                for _ in range(arguments.repeat):
                    started = time.perf_counter()
                    service.recall(question, limit=10)
                    times.append((time.perf_counter() - started) * 1000)
                p50[name] = round(statistics.median(times), 3)
    print(
        json.dumps(
            {
                "benchmark": "period_bench",
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
                "notes": arguments.n,
                "repeat": arguments.repeat,
                "recall_p50_ms_vector_cached": p50,
            }
        )
    )


if __name__ == "__main__":
    main()
