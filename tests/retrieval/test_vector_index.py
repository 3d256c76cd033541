"""The vector index: exact and HNSW search, compaction, re-embedded rows, restarts.

Searches pass ``min_score=0``: these tests are about what the index holds and finds, not
about the reranker's threshold (under which a bare word like "entry3" falls).
"""

from __future__ import annotations

from pathlib import Path

from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings


def test_vector_index_compacts_after_many_deletes(db_path: Path, clock: FakeClock) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        receipts = service.remember_many(
            [{"content": f"entry{index} shared words"} for index in range(40)]
        )
        service.new_worker().run_until_idle()
        assert (
            service.search("entry3", mode="vector", limit=1, min_score=0)[0].memory.id
            == receipts[3].id
        )
        for receipt in receipts[:20]:
            service.forget(receipt.id)
        hits = service.search("entry33", mode="vector", limit=40, min_score=0)
        assert hits[0].memory.id == receipts[33].id
        assert len(hits) == 20
        index = service.status().index
        assert index is not None
        assert index.ann
        # Compacted (rebuilt from live rows) once dead rows passed a quarter of the graph.
        assert 20 <= index.ann_rows < 30


def test_vector_index_sees_re_embedded_rows(db_path: Path, clock: FakeClock) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        receipts = service.remember_many([{"content": f"entry{index}"} for index in range(30)])
        service.new_worker().run_until_idle()
        service.search("entry1", mode="vector", min_score=0)
        service.update(receipts[5].id, content="completely different zebra text")
        service.new_worker().run_until_idle()
        assert (
            service.search("zebra", mode="vector", limit=1, min_score=0)[0].memory.id
            == receipts[5].id
        )
        hits = service.search("entry5", mode="vector", limit=30, min_score=0)
        assert receipts[5].id != hits[0].memory.id
        assert len({hit.memory.id for hit in hits}) == len(hits)


def _saved_index_bytes(db_path: Path) -> bytes:
    return b"".join(path.read_bytes() for path in db_path.parent.glob(f"{db_path.name}-vectors-*"))


def test_vector_index_forget_erases_the_vector_from_the_saved_graph(
    db_path: Path, clock: FakeClock
) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        receipts = service.remember_many([{"content": f"note{index} words"} for index in range(30)])
        service.new_worker().run_until_idle()
        service.search("note1", mode="vector", min_score=0)
        assert service.embedder is not None
        vector = service.embedder.embed_batch(["note7 words"])[0].tobytes()
        service._retriever.close()  # saves the graph beside the database
        assert vector in _saved_index_bytes(db_path)
        assert service.forget(receipts[7].id) is True
        assert vector not in _saved_index_bytes(db_path)
        assert receipts[7].id not in [
            hit.memory.id for hit in service.search("note7", mode="vector", min_score=0)
        ]


def test_vector_index_forget_in_another_process_drops_the_saved_graph(
    db_path: Path, clock: FakeClock
) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        receipts = service.remember_many([{"content": f"item{index} words"} for index in range(30)])
        service.new_worker().run_until_idle()
        service.search("item1", mode="vector", min_score=0)
    assert _saved_index_bytes(db_path)  # closing saved the graph
    with MemoryService.open(settings, clock=clock) as other:  # has not loaded the index
        assert other.forget(receipts[3].id) is True
    assert _saved_index_bytes(db_path) == b""
    with MemoryService.open(settings, clock=clock) as again:
        hits = again.search("item4", mode="vector", limit=30, min_score=0)
        assert receipts[3].id not in [hit.memory.id for hit in hits]
        assert hits[0].memory.id == receipts[4].id
