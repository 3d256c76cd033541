"""Knowledge-graph benchmark for recalld (issue 12): extraction rate, graph-channel cost, LoCoMo.

Three measurements, one JSON object on the last line of stdout:

* **extraction** (``--extract-n``, default 10,000): synthetic chat lines
  (``"<Speaker>: I met <Name> in <Place> ..."``, names and places drawn from
  generated vocabularies, topics from common nouns) written with
  ``remember_many`` and no embedder, then one in-process worker drains the
  graph queue. Reported per extractor (``spacy``, ``rules``): memories/s
  through the worker (claims, extraction, graph writes) and the time inside
  ``extract_batch`` alone.
* **channel cost** (``--channel-n``, default 10,000 and 100,000): the same
  kind of synthetic corpus, graph built with the **rules** extractor (spaCy at
  100k takes too long on two cores) and **no embedder**. For each query (a
  name and a topic from a random memory) a keyword search is timed, then
  :meth:`GraphChannel.features` alone (seeds, the damped two-hop walk, the
  features of every memory reached): what the graph adds to a hybrid recall
  besides loading its new candidates. Reported as p50/p95 ms.
* **LoCoMo** (``--locomo PATH``, the dev split): ingested as ``bench/locomo.py``
  does (default embedder ``minilm``, graph by ``spacy``), then the
  reranker's leave-one-conversation-out figures (``bench/fit_reranker.py``'s
  code, refitted per fold) with the graph (its candidates and features: the
  ``hybrid+graph`` channel set) and without it (``hybrid``, recall's
  default). Reported: overall (categories 1-4) R@5 and All@10, multi-hop
  (category 1) All@10 and R@5, and the pool's recall, for both.

Run it from the repository root::

    .venv/bin/python bench/graph_bench.py --locomo ../shared/bench/locomo/dev.json \\
        [--extract-n 10000] [--channel-n 10000,100000] [--queries 200]

Progress goes to stderr.
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import locomo  # the LoCoMo loader and metrics, beside this file
import recalld
from fit_reranker import report
from recalld import MemoryService, Settings
from recalld.model import NewMemory
from recalld.retrieval.graph_channel import GraphChannel
from recalld.retrieval.rerank import Reranker
from recalld.store.base import Scope

SYLLABLES = "ka ri mo len sa to vi ne ra lu po me di an el or is ta be no".split()
TOPICS = (
    "painting garden concert bakery marathon novel guitar recipe museum vacation camera "
    "festival puppy workshop library podcast kayak pottery volunteer chess wedding"
).split()
VERBS = ["met", "visited", "called", "helped", "painted with", "travelled with"]


def _name(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts)).capitalize()


def corpus(n: int, seed: int) -> tuple[list[str], list[tuple[str, str]]]:
    """``n`` chat lines and the (name, topic) pairs they mention, reproducibly."""
    rng = random.Random(seed)
    speakers = [_name(rng, 3) for _ in range(20)]
    people = list(dict.fromkeys(_name(rng, 3) + " " + _name(rng, 2) for _ in range(n // 5 + 50)))
    places = list(dict.fromkeys(_name(rng, 2) + "ville" for _ in range(max(50, n // 50))))
    texts: list[str] = []
    pairs: list[tuple[str, str]] = []
    for _ in range(n):
        person, place = rng.choice(people), rng.choice(places)
        first, second = rng.sample(TOPICS, 2)
        texts.append(
            f"{rng.choice(speakers)}: I {rng.choice(VERBS)} {person} in {place}"
            f" to talk about the {first} and the {second}."
        )
        pairs.append((person, first))
    return texts, pairs


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 3),
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 3),
    }


def _settings(directory: str, name: str, **overrides: Any) -> Settings:
    return Settings(
        db=Path(directory) / f"{name}.db",
        synchronous="NORMAL",
        embedder="none",
        purge_interval_seconds=3600,
        **overrides,
    )


def _load(service: MemoryService, texts: Sequence[str]) -> None:
    for start in range(0, len(texts), 1000):
        service.remember_many([NewMemory(content=text) for text in texts[start : start + 1000]])


def measure_extraction(n: int, seed: int, directory: str) -> dict[str, Any]:
    """Worker throughput of each extractor over ``n`` synthetic memories."""
    texts, _ = corpus(n, seed)
    results: dict[str, Any] = {}
    for extractor in ("spacy", "rules"):
        settings = _settings(directory, f"extract-{extractor}", graph_extractor=extractor)
        with MemoryService.open(settings) as service:
            _load(service, texts)
            print(f"extracting {n} memories with {extractor} ...", file=sys.stderr)
            started = time.perf_counter()
            report = service.new_worker().run_until_idle()
            seconds = time.perf_counter() - started
            graph = service.status().graph
            assert graph is not None
            results[extractor] = {
                "memories": report.extracted,
                "seconds": round(seconds, 3),
                "memories_per_s": round(report.extracted / seconds, 1),
                "extract_seconds": round(report.extract_seconds, 3),
                "extract_only_memories_per_s": round(report.extracted / report.extract_seconds, 1),
                "extractor": graph.extractor,
                "entities": graph.entities,
                "relations": graph.relations,
                "mentions": graph.mentions,
            }
    return results


def measure_channel(n: int, seed: int, queries: int, directory: str) -> dict[str, Any]:
    """Cost of the graph channel per recall over ``n`` memories (rules graph, no embedder)."""
    texts, pairs = corpus(n, seed)
    settings = _settings(directory, f"channel-{n}", graph_extractor="rules", graph_recall=True)
    rng = random.Random(seed + 1)
    with MemoryService.open(settings) as service:
        print(f"loading and extracting {n} memories (rules) ...", file=sys.stderr)
        _load(service, texts)
        service.new_worker().run_until_idle()
        graph = service.status().graph
        assert graph is not None
        channel = service.indexing.retriever.graph
        assert isinstance(channel, GraphChannel)
        keyword_times: list[float] = []
        channel_times: list[float] = []
        reached: list[int] = []
        for _ in range(queries):
            person, topic = rng.choice(pairs)
            question = f"What did {person} say about the {topic}?"
            started = time.perf_counter()
            service.search(question, limit=50, mode="keyword", min_score=0)
            keyword_times.append(time.perf_counter() - started)
            scope = Scope(namespaces=("default",), now=datetime.now(UTC))
            started = time.perf_counter()
            features = channel.features(scope, question)
            channel_times.append(time.perf_counter() - started)
            reached.append(len(features))
    return {
        "n": n,
        "queries": queries,
        "graph": {
            "entities": graph.entities,
            "mentions": graph.mentions,
            "relations": graph.relations,
        },
        "keyword_search": _percentiles(keyword_times),
        "graph_channel": _percentiles(channel_times),
        "memories_reached_p50": statistics.median(reached),
    }


def measure_locomo(path: Path, embedder: str, directory: str) -> Any:
    """LoCoMo dev, leave one conversation out, with the graph's candidates and features and
    without them (the same ingest, pooled twice: ``hybrid+graph`` and ``hybrid``)."""
    conversations = locomo.load_conversations(path)
    settings = Settings(
        db=Path(directory) / "locomo.db",
        synchronous="NORMAL",
        embedder=embedder,  # type: ignore[arg-type]
        graph_extractor="spacy",
        purge_interval_seconds=3600,
    )
    results: dict[str, Any] = {}
    with MemoryService.open(settings) as service:
        print(f"ingesting LoCoMo ({embedder} + spacy graph) ...", file=sys.stderr)
        timings = locomo.ingest(service, conversations)
        graph = service.status([c.sample_id for c in conversations]).graph
        print("leave-one-conversation-out, with and without the graph ...", file=sys.stderr)
        parameters = Reranker.default().keyword_parameters
        found, _ = report(
            service, conversations, parameters, modes=("keyword", "hybrid", "hybrid+graph")
        )
        for label, channels in (("with_graph", "hybrid+graph"), ("without_graph", "hybrid")):
            results[label] = {
                "overall": found[channels]["overall"],
                "multi_hop": found[channels]["by_category"]["1"],
                "at_chosen_min_score": found[channels]["at_chosen_min_score"],
                "pool_recall": found[channels]["pool_recall"],
            }
    return {
        "data": path.name,
        "embedder": embedder,
        "mode": "hybrid",
        "graph_extractor": settings.graph_extractor,
        "turns": sum(len(c.turns) for c in conversations),
        **timings,
        "graph": None if graph is None else graph.model_dump(exclude={"last_errors"}),
        **results,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments, run the three measurements, print the JSON result last."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extract-n", type=int, default=10_000)
    parser.add_argument("--channel-n", default="10000,100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--locomo", type=Path, default=None, help="LoCoMo-format JSON (dev)")
    # The graph takes part in hybrid recall only, which needs an embedder.
    parser.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--skip-extraction", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db-dir", type=Path, default=None)
    arguments = parser.parse_args(argv)
    output: dict[str, Any] = {
        "benchmark": "graph_bench",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpu_count": os.cpu_count() or 0, "platform": platform.platform()},
        "python": platform.python_version(),
        "recalld": recalld.__version__,
        "seed": arguments.seed,
    }
    with tempfile.TemporaryDirectory(dir=arguments.db_dir) as directory:
        if not arguments.skip_extraction:
            output["extraction"] = {
                "n": arguments.extract_n,
                "results": measure_extraction(arguments.extract_n, arguments.seed, directory),
            }
        sizes = [int(size) for size in arguments.channel_n.split(",") if size.strip()]
        output["channel"] = [
            measure_channel(size, arguments.seed, arguments.queries, directory) for size in sizes
        ]
        if arguments.locomo is not None:
            output["locomo"] = measure_locomo(arguments.locomo, arguments.embedder, directory)
    output["load_average_at_end"] = [round(value, 2) for value in os.getloadavg()]
    print(json.dumps(output))


if __name__ == "__main__":
    main()
