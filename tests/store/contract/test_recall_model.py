"""Keyword and hybrid recall against a model of the store: random writes with and without a
TTL, edits, forgets, time passing, reopenings and another process's writes, in two
namespaces. Each memory holds a word of its own; after each step that word must find the
memory, with its current content, while it lives, in its namespace only, and never once it
has expired (the candidate rows kept between recalls must follow every change). On every
store kind (``database``: a SQLite file, or PostgreSQL with ``--postgres``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from recalld.retrieval.pool import Mode
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

NAMESPACES = ("default", "north")
WORDS = [f"w{index}" for index in range(40)]


@dataclass
class Expected:
    namespace: str
    word: str
    content: str
    expires: datetime | None


class Model:
    """The memories a store should hold, each with a word no other memory holds."""

    def __init__(self, rng: random.Random, clock: FakeClock) -> None:
        self.rng = rng
        self.clock = clock
        self.memories: dict[str, Expected] = {}
        self._words = 0

    def content(self) -> tuple[str, str]:
        self._words += 1
        word = f"own{self._words}x"
        filler = " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(1, 5)))
        return word, f"{word} {filler}"

    def alive(self, memory_id: str) -> bool:
        expires = self.memories[memory_id].expires
        return expires is None or expires > self.clock()

    def any_alive(self) -> str | None:
        living = [memory_id for memory_id in sorted(self.memories) if self.alive(memory_id)]
        return self.rng.choice(living) if living else None


def _step(service: MemoryService, model: Model, database: str | Path, clock: FakeClock) -> None:
    rng = model.rng
    operation = rng.choices(
        ["remember", "forget", "update", "other process", "time"], [5, 2, 3, 2, 1]
    )[0]
    if operation == "remember":
        namespace = rng.choice(NAMESPACES)
        items, expected = [], []
        for _ in range(rng.randint(1, 6)):
            word, content = model.content()
            ttl = rng.choice([None, None, 60.0, 3_600.0])
            item: dict[str, object] = {"content": content}
            if ttl is not None:
                item["ttl_seconds"] = ttl
            items.append(item)
            expires = None if ttl is None else clock() + timedelta(seconds=ttl)
            expected.append(Expected(namespace, word, content, expires))
        for receipt, memory in zip(
            service.remember_many(items, namespace=namespace), expected, strict=True
        ):
            model.memories[receipt.id] = memory
    elif operation == "forget" and model.memories:
        memory_id = rng.choice(sorted(model.memories))
        service.forget(memory_id, namespace=model.memories.pop(memory_id).namespace)
    elif operation == "update":
        edited = model.any_alive()
        if edited is not None:
            memory = model.memories[edited]
            memory.word, memory.content = model.content()
            service.update(edited, namespace=memory.namespace, content=memory.content)
    elif operation == "other process":
        settings = semantic_settings(database, worker_batch_size=8)
        with MemoryService.open(settings, clock=clock) as other:
            edited = model.any_alive()
            if edited is not None and rng.random() < 0.5:
                memory = model.memories[edited]
                memory.word, memory.content = model.content()
                other.update(edited, namespace=memory.namespace, content=memory.content)
            else:
                namespace = rng.choice(NAMESPACES)
                word, content = model.content()
                receipt = other.remember(content, namespace=namespace)
                model.memories[receipt.id] = Expected(namespace, word, content, None)
    elif operation == "time":
        clock.advance(rng.choice([30, 120, 4_000]))


def _check(service: MemoryService, model: Model, mode: Mode, step: int) -> None:
    rng = model.rng
    for memory_id in rng.sample(sorted(model.memories), min(len(model.memories), 6)):
        memory = model.memories[memory_id]
        hits = service.search(
            memory.word, mode=mode, limit=5, min_score=0, namespace=memory.namespace
        )
        found = {hit.memory.id: hit.memory.content for hit in hits}
        if model.alive(memory_id):
            assert found.get(memory_id) == memory.content, step
        else:
            assert memory_id not in found, step
        elsewhere = next(name for name in NAMESPACES if name != memory.namespace)
        leaked = service.search(memory.word, mode=mode, limit=5, min_score=0, namespace=elsewhere)
        assert memory_id not in {hit.memory.id for hit in leaked}, step


@pytest.mark.parametrize(("seed", "mode"), [(1, "keyword"), (2, "keyword"), (3, "hybrid")])
def test_recall_follows_random_changes(
    database: str | Path, clock: FakeClock, seed: int, mode: Mode
) -> None:
    model = Model(random.Random(seed), clock)
    settings = semantic_settings(database, worker_batch_size=8)
    service = MemoryService.open(settings, clock=clock)
    try:
        for step in range(120):
            _step(service, model, database, clock)
            if model.rng.random() < 0.1:  # a new process: nothing kept from the old one
                service.close()
                service = MemoryService.open(settings, clock=clock)
            if mode == "hybrid" and model.rng.random() < 0.3:
                service.new_worker().run_until_idle()
            _check(service, model, mode, step)
    finally:
        service.close()
