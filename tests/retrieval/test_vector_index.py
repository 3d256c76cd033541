"""The vector index: exact and HNSW search, compaction, re-embedded rows, restarts."""

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
        assert service.search("entry3", mode="vector", limit=1)[0].memory.id == receipts[3].id
        for forgotten, receipt in enumerate(receipts[:20], start=1):
            service.forget(receipt.id)
            live = receipts[forgotten:]
            hits = service.search("entry33 shared words", mode="vector", limit=40)
            # Forgotten vectors never come back, and every live one still does.
            assert {hit.memory.id for hit in hits} == {receipt.id for receipt in live}
            index = service.status().index
            assert index is not None
            assert index.ann
            assert index.vectors == len(live)
            # The documented bound: the graph is rebuilt from the live rows before more
            # than a quarter of its rows are dead, so deletes never pile up in it.
            assert index.ann_rows - index.vectors <= index.ann_rows / 4
        assert service.search("entry33", mode="vector", limit=1)[0].memory.id == receipts[33].id


def test_vector_index_sees_re_embedded_rows(db_path: Path, clock: FakeClock) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        receipts = service.remember_many([{"content": f"entry{index}"} for index in range(30)])
        service.new_worker().run_until_idle()
        service.search("entry1", mode="vector")
        service.update(receipts[5].id, content="completely different zebra text")
        service.new_worker().run_until_idle()
        assert service.search("zebra", mode="vector", limit=1)[0].memory.id == receipts[5].id
        hits = service.search("entry5", mode="vector", limit=30)
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
        service.search("note1", mode="vector")
        assert service.embedder is not None
        vector = service.embedder.embed_batch(["note7 words"])[0].tobytes()
        service.indexing.retriever.close()  # saves the graph beside the database
        assert vector in _saved_index_bytes(db_path)
        assert service.forget(receipts[7].id).deleted is True
        assert vector not in _saved_index_bytes(db_path)
        assert receipts[7].id not in [
            hit.memory.id for hit in service.search("note7", mode="vector")
        ]


def test_vector_index_forget_in_another_process_drops_the_saved_graph(
    db_path: Path, clock: FakeClock
) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        receipts = service.remember_many([{"content": f"item{index} words"} for index in range(30)])
        service.new_worker().run_until_idle()
        service.search("item1", mode="vector")
    assert _saved_index_bytes(db_path)  # closing saved the graph
    with MemoryService.open(settings, clock=clock) as other:  # has not loaded the index
        assert other.forget(receipts[3].id).deleted is True
    assert _saved_index_bytes(db_path) == b""
    with MemoryService.open(settings, clock=clock) as again:
        hits = again.search("item4", mode="vector", limit=30)
        assert receipts[3].id not in [hit.memory.id for hit in hits]
        assert hits[0].memory.id == receipts[4].id
