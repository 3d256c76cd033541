"""What a question naming a period costs a recall (the period's own search and features).

Writes ``--n`` short notes whose ``at`` is spread over the year before a fixed
clock, embeds them with the default model, then times hybrid recall of three
questions that differ only in the period they name (none, "last weekend": ~0.5 %
of the notes, "in June": ~8 %). Each question's vector is cached after the
first recall, so the figures are the engine's own time.

Then it asks a small store (60 notes over a year, two of them from last weekend,
relative to the real clock) open questions that name only a period, and reports
the top hits' scores: what the period features do for "what did I do last
weekend?" against the default ``min_score``.

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
    open_questions = _open_questions()
    print(
        json.dumps(
            {
                "benchmark": "period_bench",
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
                "notes": arguments.n,
                "repeat": arguments.repeat,
                "recall_p50_ms_vector_cached": p50,
                "open_questions_top_scores": open_questions,
            }
        )
    )


def _open_questions() -> dict[str, list[list[object]]]:
    """The three best hits (score, memory) of questions naming only a period."""
    now = datetime.now(UTC)
    monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0)
    saturday = monday - timedelta(days=2)
    notes = [
        ("Hiked Mount Tamalpais with Sam", saturday + timedelta(hours=11)),
        ("Tried the new ramen place downtown with Priya", saturday + timedelta(days=1, hours=19)),
    ]
    for number in range(1, 30):
        notes.append(
            (f"Paid the electricity bill, month {number}", now - timedelta(days=9 * number + 10))
        )
        notes.append(
            (
                f"Team standup notes {number}: discussed the roadmap",
                now - timedelta(days=7 * number + 3),
            )
        )
    questions = (
        "what did I do last weekend?",
        "what did I eat last weekend?",
        "what did I do yesterday?",
        "favourite football team",
    )
    found: dict[str, list[list[object]]] = {}
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(db=Path(directory) / "open.db", graph_extractor="none")
        with MemoryService.open(settings) as service:
            service.remember_many([{"content": text, "at": at.isoformat()} for text, at in notes])
            service.new_worker().run_until_idle()
            for question in questions:
                hits = service.recall(question, limit=3, min_score=0)
                found[question] = [[hit.score, hit.memory.content] for hit in hits]
    return found


if __name__ == "__main__":
    main()
