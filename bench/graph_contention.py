"""Mixed knowledge-graph traffic on one PostgreSQL database: how often a write is refused.

Six threads on two :class:`MemoryService` instances (two processes' worth of pools) share
a handful of entity names: they remember, update and forget memories naming them (graph
extraction by the rules extractor, run by a worker on each service), create and delete
entities, add relations. Every write refused ``database_busy`` (a deadlock or
serialization failure PostgreSQL broke) is counted; any other error stops the run. Prints
one JSON object: the deadlocks PostgreSQL broke, the writes refused and done, per operation.

    RECALLD_DB=postgresql://... python bench/graph_contention.py [seconds]
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from collections import Counter

import psycopg

from recalld import MemoryService, Settings
from recalld.errors import DatabaseBusyError, NotFoundError, ValidationError

NAMES = ["Alice Smith", "Bob Jones", "Carol White", "Dave Brown", "Erin Green", "Frank Black"]


def text(rng: random.Random) -> str:
    """A sentence naming two or three of the shared entities."""
    first, second, third = rng.sample(NAMES, 3)
    return f"{first} met {second} in Paris with {third} on day {rng.randrange(10**6)}."


class Tally:
    """What the clients' writes came to, by operation: done, refused, and the refusals' words."""

    def __init__(self) -> None:
        self.done: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        self.messages: Counter[str] = Counter()


def traffic(service: MemoryService, seed: int, stop: threading.Event, tally: Tally) -> None:
    """One client's writes until ``stop``: each one counted by operation in ``tally``."""
    rng = random.Random(seed)
    mine: list[str] = []
    while not stop.is_set():
        choice = rng.randrange(7)
        operation = ["remember", "update", "forget", "create", "delete", "relate", "observe"][
            choice
        ]
        try:
            if operation == "remember" or (not mine and operation in ("update", "forget")):
                operation = "remember"
                mine.append(service.remember(text(rng)).id)
            elif operation == "update":
                service.update(rng.choice(mine), content=text(rng))
            elif operation == "forget":
                service.forget(mine.pop(rng.randrange(len(mine))))
            elif operation == "create":
                service.knowledge.create_entities(
                    [
                        {"name": name, "entityType": "person", "observations": [text(rng)]}
                        for name in rng.sample(NAMES, 2)
                    ]
                )
            elif operation == "delete":
                service.knowledge.delete_entities(rng.sample(NAMES, 2))
            elif operation == "relate":
                first, second = rng.sample(NAMES, 2)
                try:
                    service.knowledge.create_relations(
                        [{"from": first, "to": second, "relationType": "knows"}]
                    )
                except ValidationError as error:  # an absent entity is the norm here
                    if "create it with create_entities" not in str(error):
                        raise
            else:
                first = rng.choice(NAMES)
                try:
                    service.knowledge.add_observations(
                        [{"entityName": first, "contents": [text(rng)]}]
                    )
                except ValidationError as error:  # an absent entity is the norm here
                    if "no entity named" not in str(error):
                        raise
            tally.done[operation] += 1
        except DatabaseBusyError as error:
            tally.refused[operation] += 1
            tally.messages[str(error)[:160]] += 1
        except NotFoundError:
            pass


def deadlocks(url: str) -> int:
    """How many deadlocks the server has broken in the database so far."""
    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return 0 if row is None else int(row[0])


def main() -> None:
    """Run the traffic for the given seconds (default 60) and print what it came to."""
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    url = os.environ["RECALLD_DB"]
    settings = Settings(db=url, embedder="none", graph_extractor="rules")
    services = [MemoryService.open(settings) for _ in range(2)]
    for service in services:
        service.start_worker()
    before = deadlocks(url)
    stop = threading.Event()
    tally = Tally()
    threads = [
        threading.Thread(target=traffic, args=(services[index % 2], index, stop, tally))
        for index in range(6)
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    stop.wait(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    for service in services:
        service.close()
    broken = deadlocks(url) - before
    refused = sum(tally.refused.values())
    result = {
        "benchmark": "graph_contention",
        "seconds": round(elapsed, 1),
        "clients": len(threads),
        "services": len(services),
        "deadlocks": broken,
        "deadlocks_per_minute": round(broken * 60 / elapsed, 2),
        "refused": refused,
        "refused_per_minute": round(refused * 60 / elapsed, 2),
        "done": dict(tally.done.most_common()),
        "refused_by_operation": dict(tally.refused.most_common()),
        "refusals": dict(tally.messages.most_common()),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
