"""The knowledge graph at scale (adversarial pass f64): what its reads cost and weigh.

One JSON object on the last line of stdout. On a fresh SQLite file (no embedder, rules
extractor), through the library:

* **hub**: one entity given ``--observations`` observations (default 10,000, in calls of
  1,000): the time to add them, then ``open_nodes``, ``read_graph`` (default page) and
  the entity's detail (``graph.entity``), each with the size of its JSON;
* **wide**: ``--entities`` declared entities (default 50,000, one observation each,
  1,000 a call) in another namespace: the time to create them, a walk of every
  ``read_graph`` page of 1,000 (pages, seconds, bytes), ``search_nodes`` of a common, a
  rare and an absent word, and one poll of the graph's version (what a
  ``memory://knowledge-graph`` watcher pays every 0.25 s) when nothing changed, and one
  after a write (the namespace counted again);
* the process's peak RSS.

Run it from the repository root::

    .venv/bin/python bench/knowledge_scale.py [--entities 50000] [--observations 10000]

Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import recalld
from recalld import MemoryService, Settings


def _timed(read: Callable[[], BaseModel]) -> dict[str, Any]:
    started = time.perf_counter()
    answer = read()
    seconds = time.perf_counter() - started
    return {"ms": round(1000 * seconds, 2), "bytes": len(answer.model_dump_json(by_alias=True))}


def measure_hub(service: MemoryService, observations: int) -> dict[str, Any]:
    """One entity of ``observations`` observations: adding them and reading it back."""
    knowledge = service.knowledge
    knowledge.create_entities([{"name": "Hub", "entityType": "person", "observations": []}])
    started = time.perf_counter()
    for start in range(0, observations, 1000):
        contents = [
            f"Hub fact {number} about the harbour ledger"
            for number in range(start, min(start + 1000, observations))
        ]
        knowledge.add_observations([{"entityName": "Hub", "contents": contents}])
    return {
        "observations": observations,
        "add_seconds": round(time.perf_counter() - started, 2),
        "open_nodes": _timed(lambda: knowledge.open_nodes(["Hub"])),
        "read_graph": _timed(knowledge.read_graph),
        "entity_detail": _timed(lambda: service.graph.entity("Hub")),
    }


def measure_wide(service: MemoryService, entities: int) -> dict[str, Any]:
    """``entities`` declared entities in namespace ``wide``: paging and searching them."""
    knowledge = service.knowledge
    started = time.perf_counter()
    for start in range(0, entities, 1000):
        knowledge.create_entities(
            [
                {
                    "name": f"Person {number} Smith",
                    "entityType": "person",
                    "observations": [f"lives in Town{number % 300}"],
                }
                for number in range(start, min(start + 1000, entities))
            ],
            namespace="wide",
        )
    created = time.perf_counter() - started
    print(f"created {entities} entities in {created:.1f} s; walking ...", file=sys.stderr)
    started = time.perf_counter()
    pages = total = size = 0
    cursor = None
    while True:
        page = knowledge.read_graph(limit=1000, cursor=cursor, namespace="wide")
        pages += 1
        total += len(page.entities)
        size += len(page.model_dump_json(by_alias=True))
        if not page.has_more:
            break
        cursor = page.next_cursor
    walk = {"pages": pages, "entities": total, "seconds": round(time.perf_counter() - started, 2)}
    walk["bytes"] = size
    searches: dict[str, Any] = {}
    for query in ("smith", "Town17", "nowhere"):

        def search(query: str = query) -> BaseModel:
            return knowledge.search_nodes(query, namespace="wide")

        searches[query] = _timed(search)
    knowledge.version(namespace="wide")
    started = time.perf_counter()
    for _ in range(100):
        knowledge.version(namespace="wide")
    poll_ms = round(10 * (time.perf_counter() - started), 4)
    # After a write the namespace is counted again (migration 30's index serves its newest
    # ``updated_at``): one small write elsewhere, then one timed poll, 20 times.
    recount = 0.0
    for number in range(20):
        knowledge.add_observations([{"entityName": "Hub", "contents": [f"recount {number}"]}])
        started = time.perf_counter()
        knowledge.version(namespace="wide")
        recount += time.perf_counter() - started
    return {
        "entities": entities,
        "create_seconds": round(created, 2),
        "read_graph_walk": walk,
        "search_nodes": searches,
        "version_poll_ms": poll_ms,
        "version_recount_ms": round(1000 * recount / 20, 3),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Run the measurements and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=50_000)
    parser.add_argument("--observations", type=int, default=10_000)
    arguments = parser.parse_args(argv)
    output: dict[str, Any] = {
        "benchmark": "knowledge_scale",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
        "python": platform.python_version(),
        "recalld": recalld.__version__,
    }
    with tempfile.TemporaryDirectory(prefix="knowledge-scale-") as directory:
        settings = Settings(
            db=Path(directory) / "knowledge.db",
            synchronous="NORMAL",
            embedder="none",
            graph_extractor="rules",
            purge_interval_seconds=3600,
        )
        with MemoryService.open(settings) as service:
            print(f"hub of {arguments.observations} observations ...", file=sys.stderr)
            output["hub"] = measure_hub(service, arguments.observations)
            output["wide"] = measure_wide(service, arguments.entities)
    output["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    output["load_average_at_end"] = [round(value, 2) for value in os.getloadavg()]
    print(json.dumps(output))


if __name__ == "__main__":
    main()
