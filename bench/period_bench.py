"""What a question naming a period costs a recall (the period's own search and features).

Writes ``--n`` short notes whose ``at`` is spread over the year before a fixed
clock, embeds them with the default model, then times hybrid recall of three
questions that differ only in the period they name (none, "last weekend": ~0.5 %
of the notes, "in June": ~8 %), and of one that asks only about last weekend
(it also searches the month after the period for notes telling of it). Each
question's vector is cached after the first recall, so the figures are the
engine's own time.

Then it asks a small store (60 notes over a year, two of them from last weekend,
relative to the real clock) open questions that name only a period, and reports
the top hits' scores: what the period features do for "what did I do last
weekend?" against the default ``min_score``.

Then a diary: a month of an agent's notes (up to six a day, each written at
the time of what it tells), asked questions that name only a day or a week
("what did I do on Monday?"). For each it reports the share of the five best
hits that fall inside the period the question names, and how many hits clear
the default ``min_score``: a note of the day asked about should come before the
notes of the days after it (``mean_share_of_possible`` counts a day of two notes as
filled by two).

Then the same questions of a year of notes, a third of them written the next morning
("Yesterday: went for a run"): the share of the five best that happened in the period,
and how many of the notes told after it recall returns.

With ``--locomo FILE`` (a LoCoMo-format file, e.g. ``../shared/bench/locomo/dev.json``)
it also times the file's questions that name a period, asked of their own
conversation, with the memories' stated periods ("yesterday" in a turn, read as of
its ``at``) read on first sight and not read at all, alternated.

Run from the repository root (one JSON object on stdout)::

    .venv/bin/python bench/period_bench.py [--n 10000] [--repeat 60] [--locomo FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
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
    # Asks only about the period: also searches what was written in the month after it.
    "only_last_weekend": "what did I do last weekend?",
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="notes to write")
    parser.add_argument("--repeat", type=int, default=60, help="recalls per question")
    parser.add_argument("--locomo", type=Path, default=None, help="also time its dated questions")
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
    diary = _diary()
    told = _told_diary()
    stated = _stated_cost(arguments.locomo) if arguments.locomo else None
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
                "diary": diary,
                "told_the_next_morning": told,
                "locomo_dated_questions": stated,
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


DIARY_NOW = datetime(2026, 12, 3, 15, tzinfo=UTC)  # a Thursday
DIARY_DOINGS = (
    "Went for a run along the river",
    "Had lunch with Priya at the Thai place",
    "Fixed the bug in the billing export",
    "Called mom about the holidays",
    "Read two chapters of Dune",
    "Booked flights to Lisbon for March",
    "Dentist appointment, one filling",
    "Grocery shopping: eggs, rice, spinach",
    "Watched Severance season 2",
    "Team retro: decided to drop the Friday deploys",
    "Paid the electricity bill",
    "Yoga class in the evening",
    "Met Sam for coffee, talked about his new job",
    "Cleaned the garage",
    "Wrote the quarterly report",
    "Bought a birthday present for Ana",
    "Played chess online, lost twice",
    "Cooked lasagna for dinner guests",
)
DIARY_ENDINGS = (
    "in the morning",
    "after work",
    "with the kids",
    "again",
    "for an hour",
    "before lunch",
    "late at night",
    "with Tom",
    "in the rain",
    "on the way home",
    "finally",
    "as planned",
)
# Questions that name only a period, with the period's first day and its length in days
# (on DIARY_NOW's calendar, UTC).
DIARY_QUESTIONS = (
    ("What did I do yesterday?", datetime(2026, 12, 2, tzinfo=UTC), 1),
    ("what did I do last weekend?", datetime(2026, 11, 28, tzinfo=UTC), 2),
    ("What happened last week?", datetime(2026, 11, 23, tzinfo=UTC), 7),
    ("what did I do on Monday?", datetime(2026, 11, 30, tzinfo=UTC), 1),
    ("What did I do on November 20?", datetime(2026, 11, 20, tzinfo=UTC), 1),
    ("what did I do two days ago?", datetime(2026, 12, 1, tzinfo=UTC), 1),
    ("Summarize my day yesterday", datetime(2026, 12, 2, tzinfo=UTC), 1),
    ("What happened on Tuesday?", datetime(2026, 12, 1, tzinfo=UTC), 1),
    ("who did I meet last week?", datetime(2026, 11, 23, tzinfo=UTC), 7),
    ("what did I eat yesterday?", datetime(2026, 12, 2, tzinfo=UTC), 1),
)


def _diary() -> dict[str, object]:
    """A month of notes asked questions naming only a period (see the module docstring)."""
    rng = random.Random(3)
    notes: dict[str, datetime] = {}
    for day in range(1, 31):
        for _ in range(rng.randint(3, 6)):
            at = (DIARY_NOW - timedelta(days=day)).replace(hour=rng.randint(7, 22))
            notes.setdefault(f"{rng.choice(DIARY_DOINGS)} {rng.choice(DIARY_ENDINGS)}", at)
    answers: dict[str, object] = {}
    inside_shares = []
    possible_shares = []
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(db=Path(directory) / "diary.db", graph_extractor="none", zone="UTC")
        with MemoryService.open(settings, clock=lambda: DIARY_NOW) as service:
            service.remember_many(
                [{"content": text, "at": at.isoformat()} for text, at in notes.items()]
            )
            service.new_worker().run_until_idle()
            for question, start, days in DIARY_QUESTIONS:
                end = start + timedelta(days=days)
                best = service.recall(question, limit=5, min_score=0)
                inside = sum(start <= hit.memory.at < end for hit in best if hit.memory.at)
                held = sum(start <= at < end for at in notes.values())
                inside_shares.append(inside / 5)
                possible_shares.append(inside / min(5, held))
                answers[question] = {
                    "notes_in_period": held,
                    "top_5_inside_period": inside,
                    "hits_at_default_min_score": len(service.recall(question, limit=10)),
                    "top_scores": [round(hit.score, 3) for hit in best],
                }
    return {
        "notes": len(notes),
        "mean_share_of_top_5_inside_period": round(statistics.mean(inside_shares), 3),
        # The same, of what the period holds (a day of two notes fills two places of five).
        "mean_share_of_possible": round(statistics.mean(possible_shares), 3),
        "questions": answers,
    }


def _told_diary() -> dict[str, object]:
    """A year of notes, a third of them written the next morning ("Yesterday: ..."), asked
    the diary's questions that ask only about a period (see the module docstring)."""
    rng = random.Random(5)
    notes: list[tuple[str, datetime, datetime]] = []  # text, written, happened
    for day in range(1, 366):
        for _ in range(rng.randint(3, 6)):
            text = f"{rng.choice(DIARY_DOINGS)} {rng.choice(DIARY_ENDINGS)}"
            when = (DIARY_NOW - timedelta(days=day)).replace(hour=rng.randint(7, 22))
            if rng.random() < 1 / 3:
                written = (when + timedelta(days=1)).replace(hour=8)
                notes.append((f"Yesterday: {text[0].lower()}{text[1:]}", written, when))
            else:
                notes.append((text, when, when))
    answers: dict[str, object] = {}
    possible_shares, found_shares = [], []
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(db=Path(directory) / "told.db", graph_extractor="none", zone="UTC")
        with MemoryService.open(settings, clock=lambda: DIARY_NOW) as service:
            receipts = service.remember_many(
                [{"content": text, "at": written.isoformat()} for text, written, _ in notes]
            )
            service.new_worker().run_until_idle()
            ids = [receipt.id for receipt in receipts]
            for question, start, days in DIARY_QUESTIONS[:8]:
                end = start + timedelta(days=days)
                happened = {
                    key for key, (_, _, when) in zip(ids, notes, strict=True) if start <= when < end
                }
                told = {
                    key
                    for key, (_, written, when) in zip(ids, notes, strict=True)
                    if start <= when < end and written >= end
                }
                best = service.recall(question, limit=5, min_score=0)
                inside = sum(hit.memory.id in happened for hit in best)
                possible_shares.append(inside / min(5, len(happened)))
                returned = {hit.memory.id for hit in service.recall(question, limit=50)}
                if told:
                    found_shares.append(len(told & returned) / len(told))
                answers[question] = {
                    "happened_in_period": len(happened),
                    "top_5_happened_in_period": inside,
                    "told_after_it": len(told),
                    "told_after_it_returned": len(told & returned),
                }
    return {
        "notes": len(notes),
        # Of the five best hits, the share that happened in the period, of what it holds.
        "mean_share_of_possible": round(statistics.mean(possible_shares), 3),
        # Of the notes written after the period about it, the share recall returns (at
        # the default min_score, up to 50 hits).
        "mean_share_told_after_returned": round(statistics.mean(found_shares), 3),
        "questions": answers,
    }


def _stated_cost(path: Path) -> dict[str, object]:
    """p50 of a recall of each dated question of ``path`` (vector cached), with every
    memory's stated period read on first sight, and with none read (alternated)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from locomo import ingest, load_conversations
    from recalld.retrieval.period_matching import StatedPeriods
    from recalld.retrieval.periods import query_period

    conversations = load_conversations(path)
    times: dict[str, list[float]] = {"read": [], "not_read": []}
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(db=Path(directory) / "locomo.db", graph_extractor="none")
        with MemoryService.open(settings) as service:
            ingest(service, conversations)
            retriever = service.indexing.retriever
            dated = [
                (conversation.sample_id, question)
                for conversation in conversations
                for _, question, _ in conversation.queries
                if query_period(question, NOW, UTC) is not None
            ]
            for _ in range(2):
                for way in ("not_read", "read"):
                    for namespace, question in dated:
                        retriever._stated = StatedPeriods(1) if way == "read" else None
                        service.recall(question, namespace=namespace)  # caches the vector
                        retriever._stated = StatedPeriods(1) if way == "read" else None
                        started = time.perf_counter()
                        service.recall(question, namespace=namespace)
                        times[way].append((time.perf_counter() - started) * 1000)
            retriever._stated = StatedPeriods(8_192)
    return {
        "questions": len(dated),
        **{
            f"recall_p50_ms_{way}": round(statistics.median(values), 3)
            for way, values in times.items()
        },
    }


if __name__ == "__main__":
    main()
