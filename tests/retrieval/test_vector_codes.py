"""The signed 8-bit codes the vector index searches: they must rank vectors as the true
inner product does, closely enough that re-scoring a few extra candidates recovers the
exact top k, through the exact scan and the HNSW graph alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recalld.retrieval.vector_graph import (
    CODE_MAX,
    Quantiser,
    code_view,
    new_code_store,
    new_graph,
    trained_ranges,
)
from recalld.service import MemoryService
from recalld.store import semantic
from recalld.store.semantic import (
    decode_stored_vectors,
    decode_vectors,
    encode_vector,
    widen_half,
)
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

DIMENSION = 384


def _unit(rng: np.random.Generator, rows: int, mean: np.ndarray) -> np.ndarray:
    # Sentence embeddings share a common direction and differ by dimension in spread.
    spread = np.linspace(0.3, 1.5, DIMENSION, dtype=np.float32)
    vectors = (rng.standard_normal((rows, DIMENSION)).astype(np.float32) * spread) + mean
    unit: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


@pytest.fixture(scope="module")
def corpus() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    mean = rng.standard_normal(DIMENSION).astype(np.float32)
    return _unit(rng, 3_000, mean), _unit(rng, 40, mean)


def test_query_weights_are_int8_and_a_zero_query_stays_zero(
    corpus: tuple[np.ndarray, np.ndarray],
) -> None:
    vectors, queries = corpus
    quantiser = Quantiser(trained_ranges(vectors))
    weights = quantiser.query(queries[0])
    assert weights.shape == (1, DIMENSION)
    assert np.array_equal(weights, np.rint(weights))
    assert np.abs(weights).max() == CODE_MAX
    assert not quantiser.query(np.zeros(DIMENSION, np.float32)).any()
    codes = quantiser.codes(vectors)
    assert np.array_equal(codes, np.rint(codes))
    assert np.abs(codes).max() <= CODE_MAX


@pytest.mark.parametrize("structure", ["scan", "graph"])
def test_codes_put_the_exact_top_ten_among_forty_two_candidates(
    corpus: tuple[np.ndarray, np.ndarray], structure: str
) -> None:
    import faiss

    parameters: Any = None
    vectors, queries = corpus
    quantiser = Quantiser(trained_ranges(vectors))
    if structure == "scan":
        index = store = new_code_store(DIMENSION)
    else:
        index, store = new_graph(DIMENSION, 32, 128)
        parameters = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]
        parameters.efSearch = 256
    index.add(quantiser.codes(vectors))
    assert int(store.ntotal) == len(vectors)
    exact = vectors @ queries.T
    for column, query in enumerate(queries):
        _, rows = index.search(quantiser.query(query), 42, params=parameters)
        best = set(np.argsort(-exact[:, column])[:10].tolist())
        assert best <= set(rows[0].tolist()), column


@pytest.mark.parametrize("threshold", [100_000, 50])
def test_vector_index_top_ten_is_the_exact_top_ten(
    db_path: Path, clock: FakeClock, threshold: int
) -> None:
    """Through the index (exact scan, or the graph): more memories than candidates, and
    the ten it returns are the ten nearest of the stored vectors."""
    settings = semantic_settings(db_path, vector_ann_threshold=threshold, worker_batch_size=64)
    words = [f"word{index}" for index in range(200)]
    rng = np.random.default_rng(3)
    texts = [" ".join(rng.choice(words, size=6)) for _ in range(600)]
    with MemoryService.open(settings, clock=clock) as service:
        service.remember_many([{"content": text} for text in texts])
        service.new_worker().run_until_idle()
        service.search("word1", mode="vector", min_score=0)
        index = service.indexing.retriever.loaded_index()
        assert index is not None
        assert index.uses_ann is (threshold == 50)
        rows = service.store._read("SELECT seq, vector FROM vectors", ())  # type: ignore[attr-defined]
        seqs = np.array([seq for seq, _ in rows])
        assert service.embedder is not None
        dimension = service.embedder.dimension
        stored = decode_vectors([blob for _, blob in rows], dimension)
        for query in [" ".join(rng.choice(words, size=3)) for _ in range(20)]:
            vector = np.asarray(service.embedder.embed_batch([query])[0], dtype=np.float32)
            found = index.search(vector, ["default"], 10)
            cosines = stored @ vector
            expected = np.sort(cosines)[::-1][:10]
            assert [score for _, score in found] == pytest.approx(expected.tolist(), abs=1e-5)
            for seq, score in found:
                assert cosines[seqs == seq][0] == pytest.approx(score, abs=1e-5)


def test_a_row_forgotten_in_the_tail_stays_zero_once_the_graph_absorbs_it(
    db_path: Path, clock: FakeClock
) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10, worker_batch_size=64)
    with MemoryService.open(settings, clock=clock) as service:
        service.remember_many([{"content": f"first{index} words"} for index in range(20)])
        service.new_worker().run_until_idle()
        service.search("first1", mode="vector", min_score=0)  # the graph holds these 20
        later = service.remember_many([{"content": f"later{index} words"} for index in range(5)])
        service.new_worker().run_until_idle()
        service.search("later1", mode="vector", min_score=0)  # these 5 wait in the tail
        index = service.indexing.retriever.loaded_index()
        assert index is not None
        row = index._row_of[service.get(later[2].id).seq]
        assert row >= index.describe()["ann_rows"]  # still in the tail
        assert service.forget(later[2].id).deleted is True
        index.save()  # the tail joins the graph
        assert index.describe()["ann_rows"] == 25
        assert not code_view(index._graph_store)[row].any()
        assert code_view(index._graph_store)[row - 1].any()


def test_codes_from_the_stored_float16_equal_those_from_float32(
    corpus: tuple[np.ndarray, np.ndarray],
) -> None:
    # A cold start encodes the stored float16 matrix directly (no float32 copy of each
    # page): the codes must be those of the float32 vectors decoded from it.
    vectors, _ = corpus
    blobs = [encode_vector(vector) for vector in vectors[:500]]
    stored = decode_stored_vectors(blobs, DIMENSION)
    decoded = decode_vectors(blobs, DIMENSION)
    assert stored.dtype == np.float16
    assert decoded.dtype == np.float32
    quantiser = Quantiser(trained_ranges(decoded))
    assert np.array_equal(quantiser.codes(stored), quantiser.codes(decoded))
    # A page holding a float32 vector of an older database decodes as float32.
    legacy = np.asarray(vectors[0], dtype="<f4").tobytes()
    mixed = decode_stored_vectors([*blobs[:3], legacy], DIMENSION)
    assert mixed.dtype == np.float32
    assert np.array_equal(mixed[3], vectors[0].astype(np.float32))
    assert np.array_equal(mixed[:3], decoded[:3])


def test_widen_half_gives_numpys_float32_for_every_float16(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every one of the 65,536 float16 bit patterns: zeros of both signs, subnormals,
    # normals, and inf and NaN (which take numpy's own path), bit for bit.
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    finite = every[np.isfinite(every)]
    assert np.array_equal(
        widen_half(finite).view(np.uint32), finite.astype(np.float32).view(np.uint32)
    )
    assert np.array_equal(widen_half(every), every.astype(np.float32), equal_nan=True)
    # A matrix keeps its shape (a recall's re-scored rows), an empty one too.
    rows = finite[: 40 * 384].reshape(40, 384)
    before = rows.copy()
    widened = widen_half(rows)
    assert widened.dtype == np.float32
    assert widened.shape == (40, 384)
    assert np.array_equal(widened, rows.astype(np.float32))
    assert widen_half(np.zeros((0, 384), dtype=np.float16)).shape == (0, 384)
    # An array larger than one block is widened block by block into one result.
    monkeypatch.setattr(semantic, "_WIDEN_BLOCK", 1000)
    assert np.array_equal(widen_half(rows), rows.astype(np.float32))
    assert np.array_equal(widen_half(every), every.astype(np.float32), equal_nan=True)
    monkeypatch.undo()
    # The input is left as it was (bit for bit: the steps work on a widened copy).
    assert np.array_equal(rows.view(np.uint16), before.view(np.uint16))
    # A thread that reads subnormal inputs as zero goes through numpy, subnormals kept.
    monkeypatch.setattr(semantic, "_subnormals_kept", lambda: False)
    tiny = every[1:1024]  # the positive subnormals
    assert np.array_equal(widen_half(tiny), tiny.astype(np.float32))
    assert (widen_half(tiny) > 0).all()
