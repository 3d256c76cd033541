"""Semantic recall benchmark for recalld (issue 3): ingest, indexing and recall latency.

For each size N (default 10,000 and 100,000) in a fresh database:

* **ingest**: N synthetic memories written with ``remember_many`` in batches of
  1,000 (each batch one durable transaction that also queues its embedding
  jobs); reported as acknowledged memories/s.
* **raw model throughput**: ``embed_batch`` on a sample of the same texts in
  batches of the worker's size, texts/s (no database).
* **indexing**: one in-process worker (``run_until_idle``) drains the queue;
  reported as seconds until every memory is indexed and as texts/s, and as a
  share of the raw model throughput.
* **index build**: the first vector search of the process loads the vectors
  (and above ``vector_ann_threshold`` builds the HNSW graph); timed apart.
* **recall**: ``MemoryService.search`` end to end (query embedding included,
  every query text distinct so no cache helps) for ``keyword``, ``vector``
  and ``hybrid`` modes, p50/p95 in ms.
* **peak RSS** of the process after each size (``ru_maxrss``).

Wall-clock latencies on a shared machine include waiting for a core; the CPU
time of the calling thread per query (``cpu_p50_ms``) is reported beside them.

``--reuse-db FILE`` (one size only) keeps the database in FILE and, when it
already holds the N memories of this seed, indexed, skips ingest and indexing
(their figures are then absent and ``reused`` is true): the same database can
be timed by two versions of recalld, e.g. before and after a change
(``PYTHONPATH=<old checkout>/src python bench/recall_bench.py ...``).

Synthetic memories are 8-24 words drawn (Zipf-like) from a list of common
English words, so the real model sees real tokens; queries are 2-5 words taken
from a random memory with a few words swapped. Everything comes from
``random.Random(seed)``.

Run it from the repository root::

    .venv/bin/python bench/recall_bench.py --n 10000,100000 [--embedder minilm|hashing] \\
        [--queries 200] [--raw-sample 2000] [--db-dir DIR | --reuse-db FILE] [--seed 1]

Progress goes to stderr; the last line of stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import recalld
from recalld import MemoryService, Settings
from recalld.embeddings import create_embedder
from recalld.model import NewMemory

WORDS = (
    "time person year way day thing man world life hand part child eye woman place work "
    "week case point government company number group problem fact water room mother area "
    "money story month lot right study book job word business issue side kind head house "
    "service friend father power hour game line end member law car city community name "
    "president team minute idea kid body information back parent face others level office "
    "door health art war history party result change morning reason research girl guy moment "
    "air teacher force education foot boy age policy music market sense nation plan college "
    "interest death experience effect class control care field development role effort rate "
    "heart drug show leader light voice wife police mind price report decision son view "
    "relationship town road arm difference value building action model season society tax "
    "director position player record paper space ground form event official matter center "
    "couple site project activity star table need court oil situation cost industry figure "
    "street image phone data picture practice piece land product doctor wall patient worker "
    "news test movie north love support technology step baby computer type attention film "
    "tree source organization hair window evidence population site garden kitchen dog cat "
    "coffee dinner birthday holiday beach mountain river train flight hotel camera guitar "
    "painting recipe bread cake soccer tennis yoga school exam library museum concert park "
    "rain snow summer winter spring autumn weekend hospital dentist meeting deadline server "
    "database backup password laptop keyboard email calendar invoice budget salary loan"
).split()
VERBS = (
    "visited bought cooked painted fixed planned moved started finished lost found shared "
    "booked cancelled learned taught watched played adopted sold borrowed packed cleaned"
).split()

Mode = Literal["keyword", "vector", "hybrid"]


def _zipf_word(rng: random.Random) -> str:
    rank = min(int(rng.paretovariate(1.1)) - 1, len(WORDS) - 1)
    return WORDS[(rank * 7919 + rng.randrange(3)) % len(WORDS)]


def make_texts(count: int, rng: random.Random) -> list[str]:
    """``count`` synthetic memory sentences."""
    texts = []
    for _ in range(count):
        words = [_zipf_word(rng) for _ in range(rng.randint(7, 22))]
        words.insert(rng.randrange(len(words)), rng.choice(VERBS))
        texts.append("I " + " ".join(words) + ".")
    return texts


def make_queries(texts: Sequence[str], count: int, rng: random.Random) -> list[str]:
    """Distinct queries: a few words of a random memory, one or two swapped."""
    queries: set[str] = set()
    while len(queries) < count:
        words = rng.choice(texts).rstrip(".").split()[1:]
        picked = rng.sample(words, min(len(words), rng.randint(2, 5)))
        picked[rng.randrange(len(picked))] = rng.choice(WORDS)
        queries.add(" ".join(picked) + f" {rng.choice(VERBS)}")
    return sorted(queries)


def _percentiles(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 3),
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 3),
        "mean_ms": round(1000 * statistics.fmean(ordered), 3),
    }


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_size(n: int, arguments: argparse.Namespace, directory: Path) -> dict[str, Any]:
    """Every measurement for one database size."""
    rng = random.Random(arguments.seed + n)
    texts = make_texts(n, rng)
    reuse: Path | None = arguments.reuse_db
    settings = Settings(
        db=reuse if reuse is not None else directory / f"recall-{n}.db",
        embedder=arguments.embedder,
        purge_interval_seconds=3600,
    )
    result: dict[str, Any] = {"n": n, "reused": False}
    embedder = create_embedder(settings)
    assert embedder is not None
    sample = texts[: arguments.raw_sample]
    embedder.embed_batch(sample[:8])  # load the model outside the timing
    started = time.perf_counter()
    cpu_started = time.process_time()
    for offset in range(0, len(sample), settings.worker_batch_size):
        embedder.embed_batch(sample[offset : offset + settings.worker_batch_size])
    raw_seconds = time.perf_counter() - started
    result["raw_model"] = {
        "texts": len(sample),
        "texts_per_s": round(len(sample) / raw_seconds, 1),
        "cpu_s_per_1000": round(1000 * (time.process_time() - cpu_started) / len(sample), 2),
    }
    print(f"[{n}] raw model {result['raw_model']}", file=sys.stderr)
    with MemoryService(
        MemoryService.open(settings.model_copy(update={"embedder": "none"})).store,
        settings,
        embedder=embedder,
    ) as service:
        existing = service.status()
        reused = existing.memories_by_index_state == {"indexed": n}
        result["reused"] = reused
        if not reused:
            started = time.perf_counter()
            for offset in range(0, n, 1000):
                service.remember_many(
                    [NewMemory(content=text) for text in texts[offset : offset + 1000]]
                )
            ingest_seconds = time.perf_counter() - started
            result["ingest"] = {
                "seconds": round(ingest_seconds, 3),
                "memories_per_s": round(n / ingest_seconds, 1),
            }
            print(f"[{n}] ingest {result['ingest']}", file=sys.stderr)
            started = time.perf_counter()
            report = service.new_worker().run_until_idle()
            index_seconds = time.perf_counter() - started
            worker_rate = n / index_seconds
            result["indexing"] = {
                "seconds_until_indexed": round(index_seconds, 2),
                "texts_per_s": round(worker_rate, 1),
                "share_of_raw_model": round(worker_rate / result["raw_model"]["texts_per_s"], 3),
                "embed_seconds": round(report.embed_seconds, 2),
                "processed": report.processed,
                "batches": report.batches,
            }
            print(f"[{n}] indexing {result['indexing']}", file=sys.stderr)
        status = service.status()
        assert status.memories_by_index_state == {"indexed": n}, status.memories_by_index_state
        started = time.perf_counter()
        service.search("warm up the vector index", mode="vector")
        result["index_build_seconds"] = round(time.perf_counter() - started, 2)
        queries = make_queries(texts, 3 * arguments.queries, rng)
        recall: dict[str, Any] = {}
        modes: tuple[Mode, ...] = ("keyword", "vector", "hybrid")
        for number, mode in enumerate(modes):
            latencies = []
            cpu_times = []
            for query in queries[number :: len(modes)][: arguments.queries]:
                started = time.perf_counter()
                cpu_started = time.thread_time()
                service.search(query, limit=10, mode=mode)
                cpu_times.append(time.thread_time() - cpu_started)
                latencies.append(time.perf_counter() - started)
            cpu = _percentiles(cpu_times)
            recall[mode] = {
                "queries": len(latencies),
                **_percentiles(latencies),
                "cpu_p50_ms": cpu["p50_ms"],
                "cpu_p95_ms": cpu["p95_ms"],
            }
            print(f"[{n}] recall {mode} {recall[mode]}", file=sys.stderr)
        result["recall"] = recall
        index = service.status().index
        result["index"] = None if index is None else index.model_dump()
        result["db_bytes"] = service.store.size_bytes()
    result["peak_rss_mb"] = _peak_rss_mb()
    return result


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, run every size, print the JSON result last."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", default="10000,100000", help="comma-separated sizes")
    parser.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per mode")
    parser.add_argument("--raw-sample", type=int, default=2000, help="texts for raw throughput")
    parser.add_argument("--db-dir", type=Path, default=None, help="keep databases here")
    parser.add_argument(
        "--reuse-db", type=Path, default=None, help="one size: keep and reuse this database"
    )
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args(argv)
    sizes = [int(value) for value in arguments.n.split(",") if value.strip()]
    if arguments.reuse_db is not None and len(sizes) != 1:
        parser.error("--reuse-db times one size")
    results = []
    with tempfile.TemporaryDirectory(dir=arguments.db_dir) as directory:
        for n in sizes:
            results.append(run_size(n, arguments, Path(directory)))
    defaults = Settings(db=Path("unused.db"))
    output = {
        "benchmark": "recall_bench",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "machine": platform.machine(),
        },
        "python": platform.python_version(),
        "load_average_at_end": [round(value, 2) for value in os.getloadavg()],
        "recalld": recalld.__version__,
        "settings": {
            "embedder": arguments.embedder,
            "synchronous": defaults.synchronous,
            "worker_batch_size": defaults.worker_batch_size,
            "embedder_threads": defaults.embedder_threads,
            "vector_ann_threshold": defaults.vector_ann_threshold,
            # getattr: the script also times older versions of recalld (see --reuse-db).
            "min_score": getattr(defaults, "min_score", None),
            "keyword_candidates": getattr(defaults, "keyword_candidates", None),
            "vector_candidates": getattr(defaults, "vector_candidates", None),
            "queries": arguments.queries,
            "raw_sample": arguments.raw_sample,
            "seed": arguments.seed,
        },
        "results": results,
    }
    print(json.dumps(output))


if __name__ == "__main__":
    main()
