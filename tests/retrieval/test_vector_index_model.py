"""The vector index against a model of it: random writes, forgets, edits, reopenings and a
second process's writes in two namespaces, with small bounds (ANN threshold, tail, rows
re-scored from memory, quantiser relearning, load pages) so that every transition happens
within a few dozen memories. After each step a vector recall in each namespace must see
exactly that namespace's live embedded memories, with the cosines of their stored vectors,
and a keyword recall only its memories.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from recalld.retrieval import vector_index
from recalld.service import MemoryService
from recalld.store.semantic import decode_vectors
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

WORDS = [f"w{index}" for index in range(60)]
NAMESPACES = ("default", "north")
# (seed, ANN threshold, tail limit, rows re-scored from memory, rows before the quantiser is
# relearnt, rows read per page, worker batch): each crosses the bounds in another order.
# The rows re-scored from memory are the bound that broke at 150,000 rows in life.
CASES = [
    (1, 10, 4, 20, 15, 5, 3),
    (2, 30, 16, 45, 40, 13, 8),
    (3, 60, 64, 80, 1_000, 20_000, 32),
    (4, 10, 16, 10_000, 40, 7, 8),
]
LIVE_LIMIT = 90  # the check compares whole answers: keep them under the vector depth (100)


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))


def _check(
    service: MemoryService, live: dict[str, str], namespace: str, query: str, step: int
) -> None:
    """A recall (and the index under it) sees every live embedded memory of ``namespace``,
    and only those."""
    keyword = service.search(query, mode="keyword", limit=100, min_score=0, namespace=namespace)
    assert all(live.get(hit.memory.id) == namespace for hit in keyword), step
    rows = service.store._read(  # type: ignore[attr-defined]
        "SELECT m.id, m.seq, v.vector FROM vectors v JOIN memories m ON m.seq = v.seq", ()
    )
    stored = {memory_id: (seq, blob) for memory_id, seq, blob in rows}
    expected = {memory_id for memory_id in stored if live.get(memory_id) == namespace}
    hits = service.search(query, mode="vector", limit=100, min_score=0, namespace=namespace)
    # Near-duplicates come back once, saying how many others they stand for.
    stood_for = sum(1 + int(hit.channels.get("duplicates", 0)) for hit in hits)
    assert {hit.memory.id for hit in hits} <= expected, step
    assert stood_for == len(expected), step
    embedder = service.embedder
    assert embedder is not None
    vector = np.asarray(embedder.embed_batch([query])[0], dtype=np.float32)
    index = service.indexing.retriever.index()
    assert index is not None
    found = dict(index.search(vector, [namespace], 100))
    assert set(found) == {stored[memory_id][0] for memory_id in expected}, step
    for memory_id in expected:
        seq, blob = stored[memory_id]
        exact = float(decode_vectors([blob], len(vector))[0] @ vector)
        assert found[seq] == pytest.approx(exact, abs=1e-4), step


@pytest.mark.parametrize(
    ("seed", "threshold", "tail", "in_memory", "relearn", "page", "batch"), CASES
)
def test_vector_index_follows_random_changes(
    db_path: Path,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    threshold: int,
    tail: int,
    in_memory: int,
    relearn: int,
    page: int,
    batch: int,
) -> None:
    monkeypatch.setattr(vector_index, "EXACT_MEMORY_ROWS", in_memory)
    monkeypatch.setattr(vector_index, "TAIL_LIMIT", tail)
    monkeypatch.setattr(vector_index, "TRAIN_MINIMUM", relearn)
    monkeypatch.setattr(vector_index, "LOAD_PAGE", page)
    rng = random.Random(seed)
    settings = semantic_settings(db_path, vector_ann_threshold=threshold, worker_batch_size=batch)
    live: dict[str, str] = {}  # memory id: namespace
    service = MemoryService.open(settings, clock=clock)
    try:
        for step in range(150):
            operation = rng.choices(
                ["remember", "forget", "update", "worker", "reopen", "other process"],
                [5, 2, 2, 3, 1, 1],
            )[0]
            if operation == "remember":
                texts = [{"content": _text(rng)} for _ in range(rng.randint(1, 25))]
                namespace = rng.choice(NAMESPACES)
                for receipt in service.remember_many(texts, namespace=namespace):
                    live[receipt.id] = namespace
            elif operation == "forget" and live:
                for memory_id in rng.sample(sorted(live), min(len(live), rng.randint(1, 10))):
                    service.forget(memory_id, namespace=live.pop(memory_id))
            elif operation == "update" and live:
                for memory_id in rng.sample(sorted(live), min(len(live), rng.randint(1, 5))):
                    service.update(memory_id, namespace=live[memory_id], content=_text(rng))
            elif operation == "worker":
                service.new_worker().run_until_idle()
            elif operation == "reopen":  # the graph comes back from its file
                service.close()
                service = MemoryService.open(settings, clock=clock)
            elif operation == "other process":  # writes, a forget and embedding elsewhere
                with MemoryService.open(settings, clock=clock) as other:
                    texts = [{"content": _text(rng)} for _ in range(rng.randint(1, 20))]
                    namespace = rng.choice(NAMESPACES)
                    for receipt in other.remember_many(texts, namespace=namespace):
                        live[receipt.id] = namespace
                    memory_id = rng.choice(sorted(live))
                    other.forget(memory_id, namespace=live.pop(memory_id))
                    other.new_worker().run_until_idle()
            if len(live) > LIVE_LIMIT:
                for memory_id in rng.sample(sorted(live), 30):
                    service.forget(memory_id, namespace=live.pop(memory_id))
            for namespace in NAMESPACES:
                _check(service, live, namespace, _text(rng), step)
    finally:
        service.close()
