"""Recall benchmark (issues 3 and 13): ingest, indexing, recall latency, engine overhead, sizes.

For each size N (default 10,000, 100,000 and 1,000,000), in a fresh database and
a fresh process (so peak RSS and the cold start are per size):

* **raw model**: ``embed_batch`` on a sample of the texts, batches of the
  worker's size, texts/s and CPU-s per 1,000 (no database).
* **ingest**: N memories written with ``remember_many`` in batches of 1,000
  (durable transactions that also queue the embedding jobs), memories/s. 1% of
  the memories go to namespace ``small`` and another 1% carry tag ``rare``.
* **indexing** (``--corpus real``): the first half of the queue is drained by
  one in-process worker, the second half by that worker plus a second worker
  *process* (``recalld worker --until-idle``) on the same database: texts/s of
  each, and the one-worker rate as a share of the raw model, with and without
  the time the worker spent extracting the knowledge graph (spaCy by default).
  ``--corpus cheap`` (the default above ``--real-limit``) computes the vectors
  from 2,000 real ones instead (see ``bench/corpus.py``) and writes them
  straight into the vectors table: the query embedding stays real.
* **index build**: the first vector search of the process (loads the vectors,
  builds the HNSW graph above ``vector_ann_threshold``).
* **cold start**: the service is closed (the graph is saved) and a new one
  opened on the same file; its first vector recall and first hybrid recall, minus
  the query's embedding, are the index load.
* **recall**: ``MemoryService.search`` end to end, every query distinct (no cache
  helps), for ``keyword``, ``vector`` and ``hybrid``, and hybrid restricted to the
  1% namespace and to the 1% tag, and hybrid with ``min_score=0`` (every query
  returns its 10 best: most of these synthetic queries abstain at the default
  threshold); each query's embedding is timed right before
  its search (``embedder.embed_batch``) and **engine overhead** = recall p50 -
  embedding p50 of the same queries. Wall and CPU (``time.process_time``: the
  query is embedded on a helper thread while the keyword and graph channels run)
  percentiles; hit@10 = the memory the query was drawn from is in the top 10
  (meaningless for the cheap corpus: its vectors do not describe the texts).
* **steady recall**: keyword and hybrid again once the process has run every set
  above (about 1,200 recalls), on queries none of the sets used: what a
  long-running server answers with warm caches (SQLite's pages, the memories'
  prepared terms, the word counts), where the sets above start cold.
* **ANN recall@10 vs exact**: the index's top 10 against a float32 brute force
  over the stored vectors, for 200 queries, unfiltered and in the 1% namespace.
* **new process**: a child process opens the finished file as a server would
  (``--serve``): its open, model load, first vector and hybrid recall (minus the
  embedding), and its peak RSS after 50 more recalls and after closing: what
  serving costs without this benchmark's corpus and vectors in memory.
* **disk**: database + WAL + every index file beside it, bytes per memory, and
  the largest tables and indexes by ``dbstat``; **RSS**: peak (``VmHWM``; not
  ``ru_maxrss``, which a child inherits from its parent) and at the end; the load
  average at start and end of each size.

Run from the repository root (progress on stderr, one JSON object last on stdout)::

    .venv/bin/python bench/recall_bench.py                      # 10k, 100k, 1M (~1 h)
    .venv/bin/python bench/recall_bench.py --quick              # 2,000 memories (~1 min)
    .venv/bin/python bench/recall_bench.py --n 10000 --corpus real
    .venv/bin/python bench/recall_bench.py --n 100000 --vocabulary broad   # texts of 21k words

Run times on the 2-core machine: 10k real ~4 min, 100k cheap ~8 min, 100k real
~15 min, 1M cheap ~45 min (ingest and the HNSW build dominate).

``--reuse-db FILE`` (one size only) keeps the database in FILE and, when it
already holds the N memories of this seed, all indexed, skips ingest and
indexing (their figures are then absent and ``reused`` is true), so two
versions of recalld can be timed on the same file
(``PYTHONPATH=<old checkout>/src python bench/recall_bench.py ...``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import random

import recalld
from corpus import VOCABULARIES, Vocabulary, cheap_vectors, embed_all, make_queries, make_texts
from recalld import MemoryService, Settings
from recalld.embeddings import create_embedder
from recalld.embeddings.base import Embedder
from recalld.model import Filters, NewMemory
from recalld.store.factory import open_store
from recalld.store.semantic import decode_vectors, encode_vector, text_hash

REPOSITORY = Path(__file__).resolve().parents[1]
SMALL = "small"
RARE = "rare"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _percentiles(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 3),
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 3),
        "mean_ms": round(1000 * statistics.fmean(ordered), 3),
    }


def rss_mb() -> dict[str, float]:
    """Peak (``VmHWM``) and current (``VmRSS``) resident memory of this process.

    Not ``ru_maxrss``: Linux carries it over from the parent across fork and exec, so a
    child of the 700 MB benchmark process reported a 700 MB peak before doing anything.
    """
    values = {"VmHWM:": 0.0, "VmRSS:": 0.0}
    with open("/proc/self/status") as status:
        for line in status:
            name = line.split(maxsplit=1)[0] if line.strip() else ""
            if name in values:
                values[name] = int(line.split()[1]) / 1024
    return {"peak_mb": round(values["VmHWM:"], 1), "current_mb": round(values["VmRSS:"], 1)}


def _load() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def _namespace_of(index: int) -> str:
    return SMALL if index % 100 == 0 else "default"


def _tags_of(index: int) -> list[str]:
    return [RARE] if index % 100 == 50 else []


def ingest(service: MemoryService, texts: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    """Write every text (1% in the small namespace, 1% tagged); returns stats and ids."""
    ids = [""] * len(texts)
    started = time.perf_counter()
    for offset in range(0, len(texts), 1000):
        for namespace in ("default", SMALL):
            batch = [
                index
                for index in range(offset, min(offset + 1000, len(texts)))
                if _namespace_of(index) == namespace
            ]
            if not batch:
                continue
            receipts = service.remember_many(
                [NewMemory(content=texts[index], tags=_tags_of(index)) for index in batch],
                namespace=namespace,
            )
            for index, receipt in zip(batch, receipts, strict=True):
                ids[index] = receipt.id
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 2), "memories_per_s": round(len(texts) / seconds, 1)}, ids


def index_real(
    service: MemoryService, settings: Settings, n: int, raw_rate: float
) -> dict[str, Any]:
    """Half the queue with one worker, the other half with a second worker process."""
    first = service.new_worker(worker_id="bench-1")
    started = time.perf_counter()
    first.run_until_idle(stop=lambda: first.report.processed >= n // 2)
    one_seconds = time.perf_counter() - started
    one_done = first.report.processed
    environment = {
        **os.environ,
        "RECALLD_EMBEDDER": settings.embedder,
        "RECALLD_SYNCHRONOUS": settings.synchronous,
    }
    started = time.perf_counter()
    other = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "recalld",
            "--db",
            str(settings.db),
            "worker",
            "--until-idle",
            "--json",
        ],
        cwd=REPOSITORY,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    second = service.new_worker(worker_id="bench-2")
    second.run_until_idle()
    output, _ = other.communicate(timeout=7200)
    two_seconds = time.perf_counter() - started
    other_done = int(json.loads(output.strip().splitlines()[-1])["processed"]) if output else 0
    two_done = second.report.processed + other_done
    one_rate = one_done / one_seconds
    return {
        "corpus": "real",
        "one_worker": {
            "texts": one_done,
            "seconds": round(one_seconds, 2),
            "texts_per_s": round(one_rate, 1),
        },
        "two_workers": {
            "texts": two_done,
            "seconds": round(two_seconds, 2),
            "texts_per_s": round(two_done / two_seconds, 1),
            "second_process_texts": other_done,
        },
        "share_of_raw_model": round(one_rate / raw_rate, 3),
        "two_over_one": round((two_done / two_seconds) / one_rate, 3),
        "embed_seconds_in_process": round(first.report.embed_seconds, 2),
        # The worker also extracts the knowledge graph (spaCy by default), on a thread of
        # its own beside the embedding: what the embedder calls alone run at.
        "graph_extractor": settings.graph_extractor,
        "extract_seconds_in_process": round(first.report.extract_seconds, 2),
        "embedder_share_of_raw_model": round(one_done / first.report.embed_seconds / raw_rate, 3),
    }


def index_cheap(
    service: MemoryService,
    embedder: Embedder,
    texts: Sequence[str],
    ids: Sequence[str],
    seed: int,
    vocabulary: Vocabulary = "zipf",
) -> tuple[dict[str, Any], npt.NDArray[np.float32]]:
    """Cheap vectors written straight into the vectors table (see bench/corpus.py)."""
    started = time.perf_counter()
    base = embed_all(embedder, make_texts(2000, random.Random(seed + 7), vocabulary))
    vectors = cheap_vectors(base, len(texts), seed)
    seq_of = dict(service.store._read("SELECT id, seq FROM memories", ()))  # type: ignore[attr-defined]
    # A text drawn twice is one memory (a duplicate write returns the first): one vector.
    first = {memory_id: index for index, memory_id in reversed(list(enumerate(ids)))}
    for start in range(0, len(texts), 50_000):
        rows = [
            (
                int(seq_of[ids[index]]),
                embedder.name,
                text_hash(None, texts[index]),
                encode_vector(vectors[index]),
            )
            for index in range(start, min(len(texts), start + 50_000))
            if first[ids[index]] == index
        ]

        def step(connection: Any, rows: list[tuple[Any, ...]] = rows) -> None:
            # OR IGNORE: a --reuse-db file left half indexed by a stopped run keeps its vectors.
            connection.executemany(
                "INSERT OR IGNORE INTO vectors(seq, model, text_hash, vector) VALUES (?, ?, ?, ?)",
                rows,
            )
            connection.executemany("DELETE FROM jobs WHERE seq = ?", [(row[0],) for row in rows])
            connection.executemany(
                "UPDATE memories SET index_state = 'indexed' WHERE seq = ?",
                [(row[0],) for row in rows],
            )

        service.store.write(step)  # type: ignore[attr-defined]
    return {
        "corpus": "cheap",
        "base_texts": len(base),
        "seconds": round(time.perf_counter() - started, 2),
    }, vectors


def timed_queries(
    service: MemoryService,
    embedder: Embedder,
    queries: Sequence[tuple[int, str]],
    ids: Sequence[str],
    search: Callable[[str], list[Any]],
) -> dict[str, Any]:
    """Each query's embedding then its search, timed; hit@10 of the query's own memory."""
    search_wall, search_cpu, embed_wall, embed_cpu = [], [], [], []
    hits = 0
    for target, query in queries:
        started, cpu = time.perf_counter(), time.process_time()
        # The same text: the retriever's query cache has not seen it, so the search
        # embeds it again; this call times the embedding alone.
        embedder.embed_batch([query])
        embed_cpu.append(time.process_time() - cpu)
        embed_wall.append(time.perf_counter() - started)
        started, cpu = time.perf_counter(), time.process_time()
        found = search(query)
        search_cpu.append(time.process_time() - cpu)
        search_wall.append(time.perf_counter() - started)
        hits += ids[target] in {hit.memory.id for hit in found}
    wall, cpu_times = _percentiles(search_wall), _percentiles(search_cpu)
    embed, embed_cpu_p = _percentiles(embed_wall), _percentiles(embed_cpu)
    return {
        "queries": len(queries),
        **wall,
        "cpu_p50_ms": cpu_times["p50_ms"],
        "cpu_p95_ms": cpu_times["p95_ms"],
        "embed_p50_ms": embed["p50_ms"],
        "embed_cpu_p50_ms": embed_cpu_p["p50_ms"],
        "engine_overhead_p50_ms": round(wall["p50_ms"] - embed["p50_ms"], 3),
        "engine_overhead_cpu_p50_ms": round(cpu_times["p50_ms"] - embed_cpu_p["p50_ms"], 3),
        "hit_at_10": round(hits / len(queries), 3),
    }


def ann_recall(
    service: MemoryService, embedder: Embedder, queries: Sequence[str]
) -> dict[str, Any]:
    """The index's top 10 against a float32 brute force over the stored vectors."""
    index = service.indexing.retriever.index()
    assert index is not None
    rows = service.store._read(  # type: ignore[attr-defined]
        "SELECT v.seq, m.namespace, v.vector FROM vectors v JOIN memories m ON m.seq = v.seq", ()
    )
    seqs = np.array([row[0] for row in rows])
    small = np.array([row[1] == SMALL for row in rows])
    matrix = decode_vectors([bytes(row[2]) for row in rows], embedder.dimension)
    del rows
    result: dict[str, Any] = {"ann": index.uses_ann, "queries": len(queries)}
    for label, namespace, keep in (
        ("unfiltered", "default", ~small),
        ("namespace_1pct", SMALL, small),
    ):
        recalls, latencies = [], []
        for query in queries:
            vector = embedder.embed_batch([query])[0]
            scores = matrix @ vector
            scores[~keep] = -np.inf
            exact = set(seqs[np.argsort(-scores)[:10]].tolist())
            started = time.perf_counter()
            found = index.search(vector, [namespace], 10)
            latencies.append(time.perf_counter() - started)
            recalls.append(len(exact & {seq for seq, _ in found}) / 10)
        result[label] = {
            "recall_at_10": round(float(np.mean(recalls)), 4),
            "search_p50_ms": _percentiles(latencies)["p50_ms"],
        }
    return result


def disk(service: MemoryService, n: int) -> dict[str, Any]:
    """Bytes per memory of the database and every index file, and what takes them."""
    service.store.compact_after_forget()
    database = Path(service.settings.db)
    files = {path.name: path.stat().st_size for path in database.parent.glob(f"{database.name}*")}
    rows = service.store._read(  # type: ignore[attr-defined]
        "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 12", ()
    )
    total = sum(files.values())
    return {
        "files": files,
        "total_bytes": total,
        "bytes_per_memory": round(total / n, 1),
        "dbstat_bytes_per_memory": {str(name): round(int(size) / n, 1) for name, size in rows},
    }


def _reusable_ids(db: Path, texts: Sequence[str]) -> list[str] | None:
    """The id of each text's memory (by the text's index) in a database this script filled
    with ``texts`` (same seed and vocabulary), every one indexed (``--reuse-db``); None when
    it is not one.

    Identical texts of one namespace are one memory (the write answers the second with
    the first's id): the 1M corpus holds three such pairs. The ids are matched by
    namespace and content, not taken in seq order: a batch of the small namespace is
    written after the default one of the same thousand texts.
    """
    if not db.exists():
        return None
    import apsw

    written = {(_namespace_of(index), text) for index, text in enumerate(texts)}
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        states = dict(connection.execute("SELECT index_state, count(*) FROM memories GROUP BY 1"))
        if states != {"indexed": len(written)}:
            return None
        id_of = {
            (str(namespace), str(content)): str(memory_id)
            for memory_id, namespace, content in connection.execute(
                "SELECT id, namespace, content FROM memories"
            )
        }
    finally:
        connection.close()
    ids = [id_of.get((_namespace_of(index), text)) for index, text in enumerate(texts)]
    if any(memory_id is None for memory_id in ids):
        return None
    return [memory_id for memory_id in ids if memory_id is not None]


def run_size(n: int, arguments: argparse.Namespace, directory: Path) -> dict[str, Any]:
    """Every measurement for one database size (run in its own process)."""
    rng = random.Random(arguments.seed + n)
    corpus = arguments.corpus or ("real" if n <= arguments.real_limit else "cheap")
    result: dict[str, Any] = {"n": n, "corpus": corpus, "load_average_at_start": _load()}
    vocabulary: Vocabulary = arguments.vocabulary
    result["vocabulary"] = vocabulary
    texts = make_texts(n, rng, vocabulary)
    reuse: Path | None = arguments.reuse_db
    db = reuse if reuse is not None else directory / f"recall-{n}.db"
    settings = Settings(db=db, purge_interval_seconds=3600)
    reused_ids = _reusable_ids(db, texts) if reuse is not None else None
    result["reused"] = reused_ids is not None
    embedder = create_embedder(settings)
    assert embedder is not None
    started = time.perf_counter()
    embedder.embed_batch(["load the model"])
    result["model_load_seconds"] = round(time.perf_counter() - started, 2)
    sample = texts[: arguments.raw_sample]
    started, cpu = time.perf_counter(), time.process_time()
    embed_all(embedder, sample, settings.worker_batch_size)
    raw_seconds = time.perf_counter() - started
    result["raw_model"] = {
        "model": embedder.name,
        "texts": len(sample),
        "texts_per_s": round(len(sample) / raw_seconds, 1),
        "cpu_s_per_1000": round(1000 * (time.process_time() - cpu) / len(sample), 2),
    }
    _log(f"[{n}] raw model {result['raw_model']}")
    service = MemoryService(
        open_store(settings),
        settings,
        embedder=embedder,
    )
    if reused_ids is not None:
        ids = reused_ids
        _log(f"[{n}] reusing {db}: no ingest, no indexing")
    else:
        result["ingest"], ids = ingest(service, texts)
        _log(f"[{n}] ingest {result['ingest']}")
        if corpus == "real":
            rate = result["raw_model"]["texts_per_s"]
            result["indexing"] = index_real(service, settings, n, rate)
        else:
            result["indexing"], _ = index_cheap(
                service, embedder, texts, ids, arguments.seed, vocabulary
            )
        _log(f"[{n}] indexing {result['indexing']}")
    started = time.perf_counter()
    service.search("warm up the vector index", mode="vector")
    result["index_build_seconds"] = round(time.perf_counter() - started, 2)
    _log(f"[{n}] index build {result['index_build_seconds']} s")
    service.close()  # saves the graph

    service = MemoryService(
        open_store(settings),
        settings,
        embedder=embedder,
    )
    cold = _first_recalls(service, embedder, "a new process")
    result["cold_start"] = cold
    _log(f"[{n}] cold start {cold}")

    count = arguments.queries
    everything = make_queries(texts, 3 * count, rng, vocabulary)
    small_targets = [index for index in range(n) if _namespace_of(index) == SMALL]
    rare_targets = [index for index in range(n) if _tags_of(index)]
    small_queries = [
        item
        for item in make_queries(texts, 30 * count, rng, vocabulary)
        if item[0] in set(small_targets)
    ]
    rare_queries = [
        item
        for item in make_queries(texts, 30 * count, rng, vocabulary)
        if item[0] in set(rare_targets)
    ]
    # Drawn last, so the other kinds keep the queries of earlier runs.
    answered = make_queries(texts, count, rng, vocabulary)
    recall: dict[str, Any] = {}
    plans: list[tuple[str, Sequence[tuple[int, str]], Callable[[str], list[Any]]]] = [
        (
            "keyword",
            everything[0::3][:count],
            lambda q: service.search(q, limit=10, mode="keyword"),
        ),
        ("vector", everything[1::3][:count], lambda q: service.search(q, limit=10, mode="vector")),
        ("hybrid", everything[2::3][:count], lambda q: service.search(q, limit=10)),
        (
            "hybrid_namespace_1pct",
            small_queries[:count],
            lambda q: service.search(q, limit=10, namespace=SMALL),
        ),
        (
            "hybrid_tag_1pct",
            rare_queries[:count],
            lambda q: service.search(q, limit=10, filters=Filters(tags_any=[RARE])),
        ),
        # With the default min_score most of these synthetic queries abstain; a recall
        # that returns its 10 best also collapses duplicates and reads 10 full memories.
        (
            "hybrid_min_score_0",
            answered,
            lambda q: service.search(q, limit=10, min_score=0.0),
        ),
    ]
    for label, queries, search in plans:
        if not queries:
            continue
        recall[label] = timed_queries(service, embedder, queries, ids, search)
        _log(f"[{n}] recall {label} {recall[label]}")
    result["recall"] = recall
    # A long-running server's caches are warm (SQLite's pages, the memories' prepared
    # terms, the word counts); the sets above start from a cold process. Keyword and
    # hybrid again, on queries drawn after every other (none of them seen before), now
    # that this process has run all of the above.
    steady_queries = make_queries(texts, 2 * count, rng, vocabulary)
    result["recall_steady"] = {
        label: timed_queries(service, embedder, queries, ids, search)
        for label, queries, search in (
            (
                "keyword",
                steady_queries[0::2],
                lambda q: service.search(q, limit=10, mode="keyword"),
            ),
            ("hybrid", steady_queries[1::2], lambda q: service.search(q, limit=10)),
        )
    }
    _log(f"[{n}] steady recall {result['recall_steady']}")
    result["ann_recall"] = ann_recall(
        service, embedder, [query for _, query in everything[: min(200, count)]]
    )
    _log(f"[{n}] ann recall {result['ann_recall']}")
    index = service.status().index
    result["index"] = None if index is None else index.model_dump()
    loaded = service.indexing.retriever.loaded_index()
    result["index_memory_mb"] = None if loaded is None else round(loaded.memory_bytes() / 2**20, 1)
    result["disk"] = disk(service, n)
    _log(f"[{n}] disk {result['disk']['bytes_per_memory']} B/memory")
    service.close()
    result["rss"] = rss_mb()
    result["new_process"] = _new_process(db)
    _log(f"[{n}] new process {result['new_process']}")
    result["load_average_at_end"] = _load()
    return result


def _first_recalls(service: MemoryService, embedder: Embedder, who: str) -> dict[str, float]:
    """The first vector and first hybrid recall of ``service``, with and without the
    query's embedding (timed just before, on a text of its own)."""
    found: dict[str, float] = {}
    for mode in ("vector", "hybrid"):
        query = f"first {mode} recall of {who}"
        started = time.perf_counter()
        embedder.embed_batch([query + " alone"])
        embed_seconds = time.perf_counter() - started
        started = time.perf_counter()
        service.search(query, mode=mode, limit=10)
        found[f"first_{mode}_recall_ms"] = round(1000 * (time.perf_counter() - started), 1)
        found[f"first_{mode}_minus_embedding_ms"] = round(
            found[f"first_{mode}_recall_ms"] - 1000 * embed_seconds, 1
        )
    return found


def _new_process(db: Path) -> dict[str, Any]:
    """What a process that only serves this file costs: ``--serve`` in a child process."""
    command = [sys.executable, __file__, "--serve", str(db)]
    completed = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    found: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return found


def serve(db: Path, queries: int = 50) -> dict[str, Any]:
    """Open ``db`` as a server would, time its first recalls, answer ``queries`` more.

    The peak RSS here is that of a process that serves recall on a built database
    (model, codes, graph, page cache), without the benchmark's own corpus and vectors.
    """
    started = time.perf_counter()
    service = MemoryService.open(Settings(db=db, purge_interval_seconds=3600))
    result: dict[str, Any] = {"open_ms": round(1000 * (time.perf_counter() - started), 1)}
    assert service.embedder is not None
    started = time.perf_counter()
    service.embedder.embed_batch(["load the model"])
    result["model_load_ms"] = round(1000 * (time.perf_counter() - started), 1)
    result.update(_first_recalls(service, service.embedder, "a serving process"))
    words = ("garden", "river", "meeting", "violin", "budget", "evening", "park", "letter")
    for number in range(queries):
        service.search(f"{words[number % 8]} {words[(3 * number + 1) % 8]} {number}", limit=10)
    result["rss_after_queries"] = rss_mb()
    service.close()
    result["rss_after_close"] = rss_mb()
    return result


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, run every size in its own process, print the JSON result last."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", default="10000,100000,1000000", help="comma-separated sizes")
    parser.add_argument("--quick", action="store_true", help="2,000 memories, 30 queries")
    parser.add_argument("--corpus", choices=["real", "cheap"], default=None)
    parser.add_argument("--real-limit", type=int, default=10_000, help="real corpus up to this N")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per kind")
    parser.add_argument("--raw-sample", type=int, default=1000, help="texts for raw throughput")
    parser.add_argument("--db-dir", type=Path, default=None, help="keep databases here")
    parser.add_argument(
        "--reuse-db", type=Path, default=None, help="one size: keep and reuse this database"
    )
    parser.add_argument(
        "--vocabulary",
        choices=VOCABULARIES,
        default="zipf",
        help="the texts' words (bench/corpus.py): a heavy-headed list or a broad Zipf one",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--serve", type=Path, default=None, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.serve is not None:
        print(json.dumps(serve(arguments.serve)))
        return
    if arguments.quick:
        arguments.n, arguments.queries, arguments.raw_sample = "2000", 30, 200
    if arguments.one is not None:
        directory = arguments.db_dir or Path(tempfile.mkdtemp())
        print(json.dumps(run_size(arguments.one, arguments, directory)))
        return
    sizes = [int(value) for value in arguments.n.split(",") if value.strip()]
    if arguments.reuse_db is not None and len(sizes) != 1:
        parser.error("--reuse-db times one size")
    results = []
    with tempfile.TemporaryDirectory(dir=arguments.db_dir) as directory:
        for n in sizes:
            command = [sys.executable, __file__, "--one", str(n), "--db-dir", directory]
            names = (
                "corpus",
                "real_limit",
                "queries",
                "raw_sample",
                "seed",
                "reuse_db",
                "vocabulary",
            )
            for name in names:
                value = getattr(arguments, name)
                if value is not None:
                    command += [f"--{name.replace('_', '-')}", str(value)]
            completed = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
            results.append(json.loads(completed.stdout.strip().splitlines()[-1]))
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
        "load_average_at_end": _load(),
        "recalld": recalld.__version__,
        "settings": {
            "embedder": defaults.embedder,
            "embedder_variant": defaults.embedder_variant,
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
            "real_limit": arguments.real_limit,
            "seed": arguments.seed,
            "vocabulary": arguments.vocabulary,
        },
        "results": results,
    }
    print(json.dumps(output))


if __name__ == "__main__":
    main()
