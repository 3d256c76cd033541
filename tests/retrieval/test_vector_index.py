"""The vector index: exact and HNSW search, compaction, re-embedded rows, restarts.

Searches pass ``min_score=0``: these tests are about what the index holds and finds, not
about the reranker's threshold (under which a bare word like "entry3" falls).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from recalld.config import Settings
from recalld.retrieval import vector_index
from recalld.retrieval.vector_graph import code_view
from recalld.retrieval.vector_index import HNSW_EF_SEARCH, ef_search
from recalld.service import MemoryService
from recalld.store.semantic import encode_vector
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
        for forgotten, receipt in enumerate(receipts[:20], start=1):
            service.forget(receipt.id)
            live = receipts[forgotten:]
            hits = service.search("entry33 shared words", mode="vector", limit=40, min_score=0)
            # Forgotten vectors never come back, and every live one still does.
            assert {hit.memory.id for hit in hits} == {receipt.id for receipt in live}
            index = service.status().index
            assert index is not None
            assert index.ann
            assert index.ann_rows is not None  # null only for a confined caller
            assert index.vectors == len(live)
            # The documented bound: the graph is rebuilt from the live rows before more
            # than a quarter of its rows are dead, so deletes never pile up in it.
            assert index.ann_rows - index.vectors <= index.ann_rows / 4
        assert (
            service.search("entry33", mode="vector", limit=1, min_score=0)[0].memory.id
            == receipts[33].id
        )


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


def _stored_forms(vector: np.ndarray) -> list[bytes]:
    """Every form a vector could take in a file: float32, float16, and its first values."""
    return [
        vector.astype(np.float32).tobytes(),
        encode_vector(vector),
        vector.astype(np.float32)[:8].tobytes(),
        encode_vector(vector)[:16],
    ]


def _memory_codes(service: MemoryService) -> bytes:
    index = service.indexing.retriever.loaded_index()
    assert index is not None
    stores = [index._graph_store, index._tail]  # the in-memory 8-bit codes
    return b"".join(code_view(store).tobytes() for store in stores if store is not None)


def test_vector_index_saved_graph_holds_no_vector_and_forget_erases_the_codes(
    db_path: Path, clock: FakeClock
) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        receipts = service.remember_many([{"content": f"note{index} words"} for index in range(30)])
        service.new_worker().run_until_idle()
        service.search("note1", mode="vector", min_score=0)
        assert service.embedder is not None
        vectors = service.embedder.embed_batch([f"note{index} words" for index in range(30)])
        service.indexing.retriever.close()  # saves the graph beside the database
        saved = _saved_index_bytes(db_path)
        assert saved  # the graph file exists ...
        for vector in vectors:  # ... and holds links and seqs, never a vector
            assert not any(form in saved for form in _stored_forms(vector))
        index = service.indexing.retriever.loaded_index()
        assert index is not None
        store = index._graph_store
        row = index._row_of[service.get(receipts[7].id).seq]
        codes = code_view(store)[row].tobytes()
        assert codes in _memory_codes(service)
        assert service.forget(receipts[7].id).deleted is True
        assert not code_view(store)[row].any()  # the forgotten row's codes are zeroed
        assert receipts[7].id not in [
            hit.memory.id for hit in service.search("note7", mode="vector", min_score=0)
        ]


def test_vector_index_forget_deletes_legacy_graph_files(db_path: Path, clock: FakeClock) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        receipts = service.remember_many([{"content": f"item{index} words"} for index in range(30)])
        service.new_worker().run_until_idle()
        service.search("item1", mode="vector", min_score=0)
    assert _saved_index_bytes(db_path)  # closing saved the graph
    # A float32 graph written by an earlier version holds vectors: forget removes it.
    legacy = Path(f"{db_path}-vectors-hashing-256.faiss")
    legacy.write_bytes(b"old graph with vectors")
    with MemoryService.open(settings, clock=clock) as other:  # has not loaded the index
        assert other.forget(receipts[3].id).deleted is True
    assert not legacy.exists()
    with MemoryService.open(settings, clock=clock) as again:
        hits = again.search("item4", mode="vector", limit=30, min_score=0)
        assert receipts[3].id not in [hit.memory.id for hit in hits]
        assert hits[0].memory.id == receipts[4].id


def test_vector_index_restored_from_its_file_and_rewritten_only_after_a_change(
    db_path: Path, clock: FakeClock
) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        service.remember_many([{"content": f"item{index} words"} for index in range(30)])
        service.new_worker().run_until_idle()
        # Ids, scores and order: the fake embedder gives many exact ties, and their order
        # must not depend on the process (it followed SQLite's plan of a row lookup).
        before = [
            (hit.memory.id, hit.score)
            for hit in service.search("item4", mode="vector", limit=10, min_score=0)
        ]
        codes = _memory_codes(service)
    (graph_file,) = db_path.parent.glob(f"{db_path.name}-vectors-*.npz")
    written = graph_file.stat()
    with MemoryService.open(settings, clock=clock) as service:
        after = [
            (hit.memory.id, hit.score)
            for hit in service.search("item4", mode="vector", limit=10, min_score=0)
        ]
        index = service.indexing.retriever.loaded_index()
        assert index is not None
        assert index.describe()["ann_rows"] == 30  # read from the file
        # The codes were rebuilt in place from the database: the same bytes as before.
        assert _memory_codes(service) == codes
    assert after == before
    # Nothing changed: closing left the file as it was (no 100s of MB rewritten per exit).
    unchanged = graph_file.stat()
    assert (unchanged.st_ino, unchanged.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
    with MemoryService.open(settings, clock=clock) as service:
        new = service.remember("item99 fresh words")
        service.new_worker().run_until_idle()
        service.search("item99", mode="vector", min_score=0)
    assert graph_file.stat().st_ino != written.st_ino  # a change: the file was replaced
    with MemoryService.open(settings, clock=clock) as service:
        hits = service.search("item99 fresh words", mode="vector", limit=1, min_score=0)
        index = service.indexing.retriever.loaded_index()
        assert hits[0].memory.id == new.id
        assert index is not None
        assert index.describe()["ann_rows"] == 31


def test_hnsw_beam_widens_with_the_graph() -> None:
    # Recall at a fixed beam falls as the graph grows (0.87 at 1M rows with 256).
    assert ef_search(10_000) == HNSW_EF_SEARCH
    assert ef_search(128_000) == HNSW_EF_SEARCH
    assert ef_search(1_000_000) == 1_428
    assert ef_search(2_100_000) == 2 * ef_search(1_050_000)


def test_vector_index_re_scores_from_memory_as_from_the_database(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        receipts = service.remember_many(
            [{"content": f"entry{index} shared words"} for index in range(30)]
        )
        service.new_worker().run_until_idle()
        service.search("entry1", mode="vector", min_score=0)  # loaded: what follows is applied
        service.update(receipts[4].id, content="a re-embedded zebra")
        service.forget(receipts[7].id)
        service.new_worker().run_until_idle()
        in_memory = {
            hit.memory.id: hit.channels["text"]
            for hit in service.search("entry9 shared words", mode="vector", limit=30, min_score=0)
        }
        index = service.indexing.retriever.loaded_index()
        assert index is not None
        assert index._stored is not None
        # The forgotten memory's row is zeroed in memory too.
        dead = ~index._alive[: index._count]
        assert dead.sum() == 2  # the forgotten row and the re-embedded one's old row
        assert not index._stored[: index._count][dead].any()
    # The same file with every vector re-scored from the database.
    monkeypatch.setattr(vector_index, "EXACT_MEMORY_ROWS", 0)
    with MemoryService.open(settings, clock=clock) as service:
        from_database = {
            hit.memory.id: hit.channels["text"]
            for hit in service.search("entry9 shared words", mode="vector", limit=30, min_score=0)
        }
        index = service.indexing.retriever.loaded_index()
        assert index is not None
        assert index._stored is None
    assert from_database == in_memory
    assert receipts[7].id not in in_memory
    assert len(in_memory) == 29


# Memories per namespace written by _saved_two_namespaces.
SIZES = {"north": 20, "south": 12}


def _saved_two_namespaces(db_path: Path, clock: FakeClock) -> Settings:
    """Write :data:`SIZES` memories to each namespace, embed them and leave the graph file
    (above the ANN threshold of 10 of the returned settings) saved by the service's close."""
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        for namespace, size in SIZES.items():
            service.remember_many(
                [{"content": f"{namespace} item{index} words"} for index in range(size)],
                namespace=namespace,
            )
        service.new_worker().run_until_idle()
        service.search("item4", mode="vector", namespace="north", min_score=0)
    return settings


def test_vector_index_restored_from_its_file_keeps_each_namespace_apart(
    db_path: Path, clock: FakeClock
) -> None:
    settings = _saved_two_namespaces(db_path, clock)
    with MemoryService.open(settings, clock=clock) as service:
        service.search("item4", mode="vector", namespace="north", min_score=0)
        index = service.indexing.retriever.loaded_index()
        assert index is not None
        assert index.describe()["ann_rows"] == 32  # read from the file
        assert service.embedder is not None
        query = service.embedder.embed_batch(["south item4 words"])[0]
        for namespace, size in SIZES.items():
            assert len(index.search(query, [namespace], 40)) == size


def test_vector_index_restored_from_an_older_file_adds_the_rows_written_since(
    db_path: Path, clock: FakeClock
) -> None:
    # The file holds 32 rows; 6 more (in both namespaces) are embedded by a process that
    # never loads the index, so the next load meets pages of known and unknown rows.
    settings = _saved_two_namespaces(db_path, clock)
    later: dict[str, tuple[str, str]] = {}
    with MemoryService.open(settings, clock=clock) as service:
        for namespace in SIZES:
            for number in range(3):
                text = f"{namespace} later{number} note"
                later[text] = (namespace, service.remember(text, namespace=namespace).id)
        service.new_worker().run_until_idle()
        assert service.indexing.retriever.loaded_index() is None
    with MemoryService.open(settings, clock=clock) as service:
        for text, (namespace, memory_id) in later.items():
            hits = service.search(text, mode="vector", namespace=namespace, limit=1, min_score=0)
            assert [hit.memory.id for hit in hits] == [memory_id]
        index = service.indexing.retriever.loaded_index()
        assert index is not None
        assert index.describe()["ann_rows"] == 32  # read from the file
        assert index.describe()["vectors"] == 38
        assert service.embedder is not None
        query = service.embedder.embed_batch(["south later1 note"])[0]
        for namespace, size in SIZES.items():
            assert len(index.search(query, [namespace], 40)) == size + 3


def test_vector_index_orders_equal_cosines_by_seq_in_memory_and_from_the_database(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same words in another order embed alike (the hashing embedder counts words), so
    # these memories tie on cosine: both re-scoring paths rank them by seq, and agree.
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    tied = ["alpha beta gamma", "gamma beta alpha", "beta gamma alpha", "alpha gamma beta"]
    others = [f"entry{index} other words" for index in range(30)]
    answers = []
    for rows_in_memory in (True, False):
        if not rows_in_memory:
            monkeypatch.setattr(vector_index, "EXACT_MEMORY_ROWS", 0)
        with MemoryService.open(settings, clock=clock) as service:
            if rows_in_memory:
                service.remember_many([{"content": text} for text in others + tied])
                service.new_worker().run_until_idle()
            index = service.indexing.retriever.index()
            embedder = service.indexing.retriever.embedder
            assert index is not None
            assert embedder is not None
            assert (index._stored is not None) is rows_in_memory
            query = embedder.embed_batch(["alpha beta gamma"])[0]
            answers.append(index.search(query, ["default"], 8))
    in_memory, from_database = answers
    assert in_memory == from_database
    seqs = [seq for seq, _ in in_memory]
    cosines = [cosine for _, cosine in in_memory]
    assert cosines == sorted(cosines, reverse=True)
    top = seqs[: len(tied)]
    assert top == sorted(top)  # the tied memories, by seq
    assert len({round(cosine, 6) for cosine in cosines[: len(tied)]}) == 1


def test_vector_index_growing_past_the_stored_rows_re_scores_from_the_database(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The row arrays grow by half at least, the stored vectors stop at EXACT_MEMORY_ROWS:
    # a batch that crosses that bound while the row arrays still have room used to write
    # a batch into a shorter slice of the stored vectors and break every recall.
    monkeypatch.setattr(vector_index, "EXACT_MEMORY_ROWS", 40)
    settings = semantic_settings(db_path, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        service.remember_many([{"content": f"entry{index} shared words"} for index in range(30)])
        service.new_worker().run_until_idle()
        service.search("entry1", mode="vector", min_score=0)  # loaded with 30 rows
        index = service.indexing.retriever.loaded_index()
        assert index is not None
        assert index._stored is not None
        late = service.remember_many(
            [{"content": f"late{index} zebra words"} for index in range(20)]
        )
        service.new_worker().run_until_idle()
        hits = service.search("late7 zebra words", mode="vector", limit=50, min_score=0)
        assert hits[0].memory.id == late[7].id
        assert len(hits) == 50
        assert index._stored is None  # 50 rows: re-scored from the database from now on


@pytest.mark.parametrize("ann_threshold", [20_000, 100])
def test_vector_index_scans_few_visible_rows_copied_out_as_the_bitmap_scan_does(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, ann_threshold: int
) -> None:
    # Few visible rows are copied out of the code stores in blocks and scanned alone
    # (GATHER_SHARE); they must find what the bitmap scan over every row finds, in the
    # graph's store and in the tail, under a namespace and under a list of rows.
    settings = semantic_settings(db_path, vector_ann_threshold=ann_threshold, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        service.remember_many([{"content": f"entry{index} common words"} for index in range(240)])
        service.remember_many(
            [{"content": f"few{index} rare words {index % 7}"} for index in range(90)],
            namespace="few",
        )
        service.new_worker().run_until_idle()
        index = service.indexing.retriever.index()
        embedder = service.indexing.retriever.embedder
        assert index is not None
        assert embedder is not None
        if ann_threshold == 100:
            # Rows added after the graph was built stay in the tail: both stores are read.
            service.remember_many(
                [{"content": f"few late{index} rare words"} for index in range(30)],
                namespace="few",
            )
            service.new_worker().run_until_idle()
            index.refresh()
            assert index.uses_ann
            assert 0 < index._graph_rows < index._count
        seqs = [seq for seq in index._row_of if seq % 3 == 0]  # a third, of both namespaces
        query = embedder.embed_batch(["few5 rare words 5"])[0]
        scanned: list[int] = []
        scan = index._scan

        def spy(*arguments: object, **keywords: object) -> object:
            scanned.append(1)
            return scan(*arguments, **keywords)  # type: ignore[arg-type]

        monkeypatch.setattr(index, "_scan", spy)
        monkeypatch.setattr(vector_index, "EXACT_SHARE", 0.5)  # a scan, not a graph search
        answers = {}
        for share in (0.0, 0.5):
            monkeypatch.setattr(vector_index, "GATHER_SHARE", share)
            monkeypatch.setattr(vector_index, "GATHER_BLOCK", 16)
            scanned.clear()
            answers[share] = (
                index.search(query, ["few"], 10),
                index.search(query, ["few", "default"], 10, allowed_seqs=seqs),
            )
            assert bool(scanned) is (share == 0.0)
        assert answers[0.5] == answers[0.0]
        by_namespace, listed = answers[0.5]
        assert len(by_namespace) == len(listed) == 10
        few = {seq for seq, row in index._row_of.items() if index._namespace_ids[row] == 1}
        assert {seq for seq, _ in by_namespace} <= few
        assert {seq for seq, _ in listed} <= set(seqs)
        # The copied codes are zeroed once scanned.
        assert not code_view(index._block).any()


def test_vector_index_reads_cosines_from_the_database_while_a_search_holds_it(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Above EXACT_MEMORY_ROWS a recall reads its keyword candidates' vectors from the
    # database while its vector search runs: that read must not wait for the index.
    monkeypatch.setattr(vector_index, "EXACT_MEMORY_ROWS", 0)
    settings = semantic_settings(db_path, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        service.remember_many([{"content": f"entry{index} shared words"} for index in range(20)])
        service.new_worker().run_until_idle()
        index = service.indexing.retriever.index()
        embedder = service.indexing.retriever.embedder
        assert index is not None
        assert embedder is not None
        assert index.reads_database
        query = embedder.embed_batch(["entry3 shared words"])[0]
        seqs = [seq for seq, _ in index.search(query, ["default"], 20)]
        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with index._lock:  # as a search in another thread does
                held.set()
                release.wait(timeout=30)

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert held.wait(timeout=30)
            with ThreadPoolExecutor(1) as pool:
                cosines = pool.submit(index.similarities, query, seqs).result(timeout=30)
        finally:
            release.set()
            holder.join()
        assert sorted(cosines) == sorted(seqs)
        assert max(cosines.values()) == pytest.approx(1.0, abs=1e-3)


def test_vector_index_small_namespace_rows_follow_every_change(
    db_path: Path, clock: FakeClock
) -> None:
    # A small namespace's rows are kept with its mask between searches: a vector added,
    # re-embedded or forgotten in it must show at the next search.
    settings = semantic_settings(db_path, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        service.remember_many([{"content": f"entry{index} common words"} for index in range(60)])
        few = service.remember_many(
            [{"content": f"few{index} rare words"} for index in range(5)], namespace="few"
        )
        service.new_worker().run_until_idle()
        index = service.indexing.retriever.index()
        embedder = service.indexing.retriever.embedder
        assert index is not None
        assert embedder is not None
        query = embedder.embed_batch(["few rare words"])[0]

        def found() -> set[int]:
            index.refresh()
            return {seq for seq, _ in index.search(query, ["few"], 50)}

        seq_of = {receipt.id: service.get(receipt.id, namespace="few").seq for receipt in few}
        assert found() == set(seq_of.values())
        assert ("few",) in index._mask_rows  # kept for the next search
        late = service.remember("few late rare words", namespace="few")
        service.new_worker().run_until_idle()
        late_seq = service.get(late.id, namespace="few").seq
        assert found() == {*seq_of.values(), late_seq}
        service.forget(few[0].id, namespace="few")
        assert found() == {*list(seq_of.values())[1:], late_seq}
        # Re-embedded: the memory's old row dies and a new one is appended; the search
        # must read the new row (a stale list of rows would give it the zeroed old one).
        service.update(few[1].id, content="zebra stripes at dawn", namespace="few")
        service.new_worker().run_until_idle()
        index.refresh()
        zebra = embedder.embed_batch(["zebra stripes at dawn"])[0]
        best_seq, best_cosine = index.search(zebra, ["few"], 50)[0]
        assert best_seq == seq_of[few[1].id]
        assert best_cosine == pytest.approx(1.0, abs=1e-2)


def test_vector_index_forget_leaves_another_databases_files_alone(
    tmp_path: Path, clock: FakeClock
) -> None:
    # "notes[1].db" was read as a pattern: a forget deleted notes1.db's files.
    database = tmp_path / "notes[1].db"
    settings = semantic_settings(database)
    other = Path(f"{tmp_path / 'notes1.db'}-vectors-hashing-256.npz")
    other.write_bytes(b"another database's file")
    # Nor those of a database whose name starts with this one's prefix.
    alike = Path(f"{database}-vectors-x.db-vectors-hashing-256.npz")
    alike.write_bytes(b"another database's file")
    legacy = Path(f"{database}-vectors-hashing-256.faiss")
    legacy.write_bytes(b"old graph with vectors")
    with MemoryService.open(settings, clock=clock) as service:
        receipt = service.remember("a note")
        assert service.forget(receipt.id).deleted is True
    assert other.exists()
    assert alike.exists()
    assert not legacy.exists()
