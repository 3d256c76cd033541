"""Store benchmark for recalld (issue 2): write rates and FTS search latency.

What it measures, for each database size N (default 10,000 and 100,000):

* **batched remember**: all N synthetic memories loaded with
  ``MemoryService.remember_many`` in batches (default 1,000 per call, one
  transaction per batch); reported as memories/s over the whole load.
* **FTS search**: ``MemoryService.search(query, limit=10)`` latency p50/p95 in
  milliseconds over a fixed set of queries (default 300) of 1-4 words drawn
  from the synthetic vocabulary: multi-term queries, single rare words and
  common words. Reported overall and per query kind.
* **single remember**: a timed *sample* (default 2,000) of one-by-one
  ``MemoryService.remember`` calls, each its own durable transaction, into the
  database that already holds N memories; reported as memories/s and per-call
  latency. The JSON records the sample size.

Synthetic memories are sentences of 8-30 pseudo-words drawn with a Zipf-like
distribution from a generated vocabulary, with 0-3 tags each. Everything comes
from ``random.Random(seed)``; no external data is read.

Run it from the repository root::

    .venv/bin/python bench/store_bench.py --n 10000,100000 [--db-dir DIR] \\
        [--single-sample 2000] [--queries 300] [--seed 1]

Progress goes to stderr; the last line of stdout is one JSON object with the
results, the machine, the Python and SQLite versions, the date, the settings and
an fsync probe (4 KiB append + fsync in the database directory), because the
single-remember rate is bounded by how fast that disk makes a commit durable.
Without ``--db-dir`` the databases live in a temporary directory that is removed
at the end.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import apsw

import recalld
from recalld import MemoryService, Settings
from recalld.model import NewMemory

Synchronous = Literal["FULL", "NORMAL"]

SYLLABLES = (
    "ba be bi bo bu da de di do du fa fe fi fo ga ge gi go ka ke ki ko ku la le li lo lu "
    "ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti "
    "to tu va ve vi vo za ze zi zo zu"
).split()
TAGS = tuple(f"tag{index:02d}" for index in range(40))
SEARCH_LIMIT = 10
COMMON_RANKS = 20  # "common" query words come from the 20 most frequent words
RARE_FROM_RANK = 1_000  # "rare" query words come from ranks 1,000 and beyond
QueryKind = Literal["multi", "rare", "common"]
QUERY_KINDS: tuple[QueryKind, ...] = ("multi", "rare", "common")


@dataclass(frozen=True)
class Options:
    """The command line, parsed."""

    sizes: list[int]
    db_dir: Path | None
    single_sample: int
    queries: int
    seed: int
    batch_size: int
    vocabulary: int
    zipf_s: float
    synchronous: Synchronous


@dataclass(frozen=True)
class Corpus:
    """A vocabulary ordered by frequency rank, and cumulative Zipf weights over it."""

    words: list[str]
    cum_weights: list[float]

    def draw(self, rng: random.Random, count: int) -> list[str]:
        """``count`` words drawn with the Zipf-like weights."""
        return rng.choices(self.words, cum_weights=self.cum_weights, k=count)


@dataclass(frozen=True)
class Query:
    """One search query and what kind of query it is."""

    kind: QueryKind
    text: str


def log(message: str) -> None:
    """Progress for humans, on stderr."""
    print(f"[store_bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- synthetic data ------------------------------------------------------------


def make_corpus(rng: random.Random, size: int, zipf_s: float) -> Corpus:
    """``size`` distinct pseudo-words of 2-4 syllables with weights ``1 / rank**zipf_s``."""
    seen: set[str] = set()
    words: list[str] = []
    while len(words) < size:
        word = "".join(rng.choices(SYLLABLES, k=rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    weights = (1.0 / rank**zipf_s for rank in range(1, size + 1))
    return Corpus(words=words, cum_weights=list(itertools.accumulate(weights)))


def make_memory(rng: random.Random, corpus: Corpus) -> NewMemory:
    """A sentence of 8-30 words with 0-3 tags."""
    words = corpus.draw(rng, rng.randint(8, 30))
    content = " ".join(words).capitalize() + "."
    tags = rng.sample(TAGS, rng.randint(0, 3))
    return NewMemory(content=content, tags=tags)


def make_memories(rng: random.Random, corpus: Corpus, count: int) -> list[NewMemory]:
    """``count`` synthetic memories."""
    return [make_memory(rng, corpus) for _ in range(count)]


def make_query(rng: random.Random, corpus: Corpus, kind: QueryKind) -> Query:
    """A multi-term (2-4 Zipf words), single rare-word or common-word (1-2 words) query."""
    if kind == "multi":
        words = corpus.draw(rng, rng.randint(2, 4))
    elif kind == "rare":
        words = [rng.choice(corpus.words[RARE_FROM_RANK:])]
    else:
        words = rng.sample(corpus.words[:COMMON_RANKS], rng.randint(1, 2))
    return Query(kind=kind, text=" ".join(words))


def make_queries(rng: random.Random, corpus: Corpus, count: int) -> list[Query]:
    """``count`` queries, the kinds in equal turns."""
    return [make_query(rng, corpus, QUERY_KINDS[index % 3]) for index in range(count)]


# -- measurements ----------------------------------------------------------------


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of ``values`` (``fraction`` in (0, 1])."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, int(fraction * len(ordered) + 0.5) - 1))
    return ordered[index]


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    """p50, p95, mean and max of per-call times, in milliseconds."""
    millis = [value * 1_000 for value in seconds]
    return {
        "p50_ms": round(percentile(millis, 0.50), 3),
        "p95_ms": round(percentile(millis, 0.95), 3),
        "mean_ms": round(statistics.fmean(millis), 3),
        "max_ms": round(max(millis), 3),
    }


def chunks(items: Sequence[NewMemory], size: int) -> Iterator[Sequence[NewMemory]]:
    """Consecutive slices of ``items`` of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def bench_batched(
    svc: MemoryService, drafts: Sequence[NewMemory], batch_size: int
) -> dict[str, Any]:
    """Load every draft with ``remember_many``, ``batch_size`` per transaction."""
    batches = 0
    started = time.perf_counter()
    for batch in chunks(drafts, batch_size):
        svc.remember_many(batch)
        batches += 1
        if batches % 10 == 0:
            log(f"  batched: {batches * batch_size:,} / {len(drafts):,}")
    elapsed = time.perf_counter() - started
    return {
        "memories": len(drafts),
        "batch_size": batch_size,
        "transactions": batches,
        "seconds": round(elapsed, 3),
        "memories_per_s": round(len(drafts) / elapsed, 1),
    }


def bench_single(svc: MemoryService, drafts: Sequence[NewMemory], held: int) -> dict[str, Any]:
    """Time one ``remember`` call (one durable transaction) per draft."""
    times: list[float] = []
    started = time.perf_counter()
    for draft in drafts:
        call_started = time.perf_counter()
        svc.remember(draft.content, tags=draft.tags)
        times.append(time.perf_counter() - call_started)
    elapsed = time.perf_counter() - started
    return {
        "sample": len(drafts),
        "db_held_before": held,
        "seconds": round(elapsed, 3),
        "memories_per_s": round(len(drafts) / elapsed, 1),
        **latency_summary(times),
    }


def bench_search(svc: MemoryService, queries: Sequence[Query]) -> dict[str, Any]:
    """Time ``search(limit=10)`` per query; summarise overall and per query kind."""
    for query in queries[:10]:  # warm the page cache and statement cache
        svc.search(query.text, limit=SEARCH_LIMIT)
    times: dict[QueryKind, list[float]] = {kind: [] for kind in QUERY_KINDS}
    hits: list[int] = []
    for query in queries:
        started = time.perf_counter()
        found = svc.search(query.text, limit=SEARCH_LIMIT)
        times[query.kind].append(time.perf_counter() - started)
        hits.append(len(found))
    every = [value for kind in QUERY_KINDS for value in times[kind]]
    return {
        "queries": len(queries),
        "limit": SEARCH_LIMIT,
        **latency_summary(every),
        "mean_hits": round(statistics.fmean(hits), 2),
        "by_kind": {
            kind: {"queries": len(times[kind]), **latency_summary(times[kind])}
            for kind in QUERY_KINDS
            if times[kind]
        },
    }


def database_bytes(path: Path) -> int:
    """Size of the database file plus its write-ahead log."""
    return sum(
        candidate.stat().st_size for candidate in (path, Path(f"{path}-wal")) if candidate.exists()
    )


def bench_size(
    options: Options, n: int, corpus: Corpus, queries: Sequence[Query], db_dir: Path
) -> dict[str, Any]:
    """Batched load of ``n`` memories, then search latency, then the single-remember sample."""
    rng = random.Random(f"{options.seed}:{n}")
    log(f"n={n:,}: generating {n + options.single_sample:,} memories")
    drafts = make_memories(rng, corpus, n)
    singles = make_memories(rng, corpus, options.single_sample)
    path = db_dir / f"store_bench_{n}.db"
    for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        stale.unlink(missing_ok=True)
    svc = MemoryService.open(Settings(db=path, synchronous=options.synchronous))
    try:
        log(f"n={n:,}: batched load")
        batched = bench_batched(svc, drafts, options.batch_size)
        log(f"n={n:,}: batched {batched['memories_per_s']:,.0f}/s; searching")
        search = bench_search(svc, queries)
        log(f"n={n:,}: search p50 {search['p50_ms']} ms; single sample")
        single = bench_single(svc, singles, held=n)
        log(f"n={n:,}: single {single['memories_per_s']:,.0f}/s")
    finally:
        svc.close()
    return {
        "n": n,
        "remember_batched": batched,
        "search": search,
        "remember_single": single,
        "db_bytes_after": database_bytes(path),
    }


# -- environment -----------------------------------------------------------------


def filesystem_of(path: Path) -> str:
    """The filesystem type holding ``path`` (from /proc/mounts), or ``"unknown"``."""
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return "unknown"
    target = str(path.resolve())
    best, kind = "", "unknown"
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        mount = fields[1]
        inside = target == mount or target.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) > len(best):
            best, kind = mount, fields[2]
    return kind


def fsync_probe(db_dir: Path, rounds: int = 200) -> dict[str, float]:
    """Latency of appending 4 KiB and ``fsync`` in ``db_dir``: the floor under a durable commit."""
    probe = db_dir / "store_bench_fsync.probe"
    times: list[float] = []
    descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for _ in range(rounds):
            os.write(descriptor, b"x" * 4096)
            started = time.perf_counter()
            os.fsync(descriptor)
            times.append(time.perf_counter() - started)
    finally:
        os.close(descriptor)
        probe.unlink(missing_ok=True)
    return {"rounds": rounds, **latency_summary(times)}


def environment(options: Options, db_dir: Path) -> dict[str, Any]:
    """Machine, versions, date and settings for the JSON report."""
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "machine": platform.machine(),
        },
        "python": platform.python_version(),
        "sqlite": apsw.sqlite_lib_version(),
        "apsw": apsw.apsw_version(),
        "recalld": recalld.__version__,
        "settings": {
            "synchronous": options.synchronous,
            "journal_mode": "WAL",
            "fts": True,
            "batch_size": options.batch_size,
            "single_sample": options.single_sample,
            "queries": options.queries,
            "search_limit": SEARCH_LIMIT,
            "seed": options.seed,
            "vocabulary": options.vocabulary,
            "zipf_s": options.zipf_s,
            "words_per_memory": [8, 30],
            "tags_per_memory": [0, 3],
            "db_dir": str(db_dir) if options.db_dir is not None else "temporary",
            "db_filesystem": filesystem_of(db_dir),
        },
        "fsync_probe": fsync_probe(db_dir),
    }


# -- command line ----------------------------------------------------------------


def parse_sizes(text: str) -> list[int]:
    """``"10000,100000"`` -> ``[10000, 100000]``."""
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a comma-separated list of integers: {text!r}"
        ) from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("sizes must be positive integers")
    return sizes


def parse_args(argv: Sequence[str] | None) -> Options:
    """Read the command line into :class:`Options`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=parse_sizes, default=[10_000, 100_000], help="database sizes")
    parser.add_argument("--db-dir", type=Path, default=None, help="keep databases here")
    parser.add_argument("--single-sample", type=int, default=2_000, help="single remembers timed")
    parser.add_argument("--queries", type=int, default=300, help="search queries timed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=1_000)
    parser.add_argument("--vocabulary", type=int, default=3_000, help="pseudo-words")
    parser.add_argument("--zipf-s", type=float, default=1.0, help="Zipf exponent")
    parser.add_argument("--synchronous", choices=["FULL", "NORMAL"], default="FULL")
    args = parser.parse_args(argv)
    if args.single_sample < 1 or args.queries < 1 or args.batch_size < 1:
        parser.error("--single-sample, --queries and --batch-size must be at least 1")
    if args.vocabulary <= RARE_FROM_RANK:
        parser.error(f"--vocabulary must be above {RARE_FROM_RANK}")
    synchronous: Synchronous = "FULL" if args.synchronous == "FULL" else "NORMAL"
    return Options(
        sizes=args.n,
        db_dir=args.db_dir,
        single_sample=args.single_sample,
        queries=args.queries,
        seed=args.seed,
        batch_size=args.batch_size,
        vocabulary=args.vocabulary,
        zipf_s=args.zipf_s,
        synchronous=synchronous,
    )


def run(options: Options, db_dir: Path) -> dict[str, Any]:
    """Every size in turn; the full report."""
    rng = random.Random(options.seed)
    corpus = make_corpus(rng, options.vocabulary, options.zipf_s)
    queries = make_queries(rng, corpus, options.queries)
    report = {"benchmark": "store_bench", **environment(options, db_dir)}
    report["results"] = [bench_size(options, n, corpus, queries, db_dir) for n in options.sizes]
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the JSON report as the last line of stdout."""
    options = parse_args(argv)
    if options.db_dir is not None:
        options.db_dir.mkdir(parents=True, exist_ok=True)
        report = run(options, options.db_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="recalld-bench-") as temporary:
            report = run(options, Path(temporary))
    print(json.dumps(report, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
