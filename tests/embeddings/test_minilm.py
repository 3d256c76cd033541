"""The default offline embedder (real model, from the installed package; marked ``model``)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from recalld.embeddings.minilm import DEFAULT_MODEL_SHA256, MiniLMEmbedder, default_model_path
from recalld.embeddings.quantize import BLOCK_SIZE
from recalld.errors import EmbeddingError

REFERENCE = Path(__file__).parent / "minilm_reference.json"


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    """The installed model file run as it is (the reference vectors are its own)."""
    embedder = MiniLMEmbedder(variant="installed")
    embedder.load()
    return embedder


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> MiniLMEmbedder:
    """The dynamic int8 model derived from the installed file."""
    embedder = MiniLMEmbedder(
        variant="dynamic-int8", cache_directory=tmp_path_factory.mktemp("model-cache")
    )
    embedder.load()
    return embedder


@pytest.fixture(scope="module")
def blockwise(tmp_path_factory: pytest.TempPathFactory) -> MiniLMEmbedder:
    """The default: the blockwise int8 model derived from the installed file."""
    embedder = MiniLMEmbedder(cache_directory=tmp_path_factory.mktemp("model-cache"))
    embedder.load()
    return embedder


def _sentences(count: int) -> list[str]:
    words = (
        "coffee train rain market river bridge song dinner friend museum park bike dog garden"
        " bakery concert beach storm library school office kitchen password server backup"
        " invoice budget doctor birthday holiday mountain flight hotel camera guitar recipe"
    ).split()
    verbs = "visited bought cooked painted fixed planned moved started finished lost".split()
    generator = random.Random(13)
    return [
        f"I {generator.choice(verbs)} the "
        + " ".join(generator.choice(words) for _ in range(generator.randint(2, 20)))
        for _ in range(count)
    ]


@pytest.mark.model
def test_minilm_derived_model_keeps_the_installed_vectors(
    minilm: MiniLMEmbedder, derived: MiniLMEmbedder
) -> None:
    assert derived.name == "all-MiniLM-L6-v2-onnx-dynamic-int8"
    assert minilm.name == "all-MiniLM-L6-v2-onnx-int8"
    sentences = [*json.loads(REFERENCE.read_text())["sentences"], *_sentences(200)]
    installed = minilm.embed_batch(sentences)
    fast = derived.embed_batch(sentences)
    cosines = (installed * fast).sum(axis=1)
    assert cosines.min() >= 0.99
    # Its projections are integer GEMMs (the derivation quantised them).
    import onnx

    graph = onnx.load(str(derived._model_file)).graph
    operators = [node.op_type for node in graph.node]
    assert operators.count("MatMulInteger") >= 24


@pytest.mark.model
def test_minilm_default_is_the_blockwise_model_close_to_the_installed_vectors(
    minilm: MiniLMEmbedder, blockwise: MiniLMEmbedder
) -> None:
    assert blockwise.name == "all-MiniLM-L6-v2-onnx-blockwise-int8"
    sentences = [*json.loads(REFERENCE.read_text())["sentences"], *_sentences(200)]
    cosines = (minilm.embed_batch(sentences) * blockwise.embed_batch(sentences)).sum(axis=1)
    assert cosines.min() >= 0.995
    # Every projection is an 8-bit MatMulNBits (weights kept as int8, not folded to float).
    import onnx

    nodes = onnx.load(str(blockwise._model_file)).graph.node
    operators = [node.op_type for node in nodes]
    assert operators.count("MatMulNBits") == 36
    # The weights are quantised in blocks of BLOCK_SIZE input rows, 8 bits each.
    attributes = [
        {attribute.name: onnx.helper.get_attribute_value(attribute) for attribute in node.attribute}
        for node in nodes
        if node.op_type == "MatMulNBits"
    ]
    assert {(found["block_size"], found["bits"]) for found in attributes} == {(BLOCK_SIZE, 8)}
    # Each layer's attention is one fused operator (its exported form held ~25, two of
    # them the MatMuls of the attention products).
    assert operators.count("MultiHeadAttention") == 6
    assert "MatMul" not in operators
    assert "Softmax" not in operators


@pytest.mark.model
def test_minilm_derivation_failure_is_an_embedding_error(tmp_path: Path) -> None:
    from recalld.embeddings.quantize import derive

    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    target = tmp_path / "cache" / "out.onnx"
    with pytest.raises(EmbeddingError, match="blockwise-int8"):
        derive(broken, target, "blockwise-int8")
    assert not target.exists()


@pytest.mark.model
def test_minilm_vectors_match_the_stored_reference(minilm: MiniLMEmbedder) -> None:
    reference = json.loads(REFERENCE.read_text())
    assert reference["model_sha256"] == DEFAULT_MODEL_SHA256
    vectors = minilm.embed_batch(reference["sentences"])
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(vectors, np.array(reference["vectors"]), atol=1e-3)


@pytest.mark.model
@pytest.mark.parametrize("model", ["minilm", "blockwise"])
def test_minilm_batching_and_padding_do_not_change_vectors(
    model: str, request: pytest.FixtureRequest
) -> None:
    # The blockwise model's fused attention masks the padding itself.
    embedder: MiniLMEmbedder = request.getfixturevalue(model)
    short, long = "a cat", "a much longer sentence about a cat that sleeps in the sun all day"
    together = embedder.embed_batch([short, long])
    alone = np.vstack([embedder.embed_batch([short]), embedder.embed_batch([long])])
    np.testing.assert_allclose(together, alone, atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


@pytest.mark.model
def test_minilm_truncates_long_texts(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed_batch(["word " * 2000])
    assert vectors.shape == (1, 384)


def test_minilm_refuses_a_model_file_with_another_hash(tmp_path: Path) -> None:
    # The default path pins the sha256; a copy that differs by one byte is refused.
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(default_model_path(), tampered)
    with tampered.open("ab") as handle:
        handle.write(b"\0")
    embedder = MiniLMEmbedder(model_path=tampered, expected_sha256=DEFAULT_MODEL_SHA256)
    with pytest.raises(EmbeddingError, match="sha256"):
        embedder.embed_batch(["hello"])


def test_minilm_reports_a_missing_model_file(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder(model_path=tmp_path / "absent.onnx")
    with pytest.raises(EmbeddingError, match="not found"):
        embedder.embed_batch(["hello"])


@pytest.mark.model
def test_minilm_gives_the_arena_back_on_release_not_per_batch(
    minilm: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker's batches pad to varying shapes and onnxruntime's arena kept ~220 MB of
    # them; release_memory (called when the worker's queue drains) asks for it back once,
    # on a one-token run. Batches and queries run without asking (it cost a batch CPU).
    minilm.release_memory()  # what the module's earlier tests' batches grew
    session = minilm._session
    asked: list[tuple[int, str | None]] = []

    def run(outputs: object, feeds: dict[str, np.ndarray], options: object = None) -> object:
        entry = (
            None
            if options is None
            else options.get_run_config_entry(  # type: ignore[attr-defined]
                "memory.enable_memory_arena_shrinkage"
            )
        )
        asked.append((feeds["input_ids"].size, entry))
        return session.run(outputs, feeds, options)

    monkeypatch.setattr(minilm, "_session", SimpleNamespace(run=run))
    minilm.release_memory()  # no batch since: nothing to give back, nothing run
    assert asked == []
    vectors = minilm.embed_batch(["a cat", "a dog on a mat"])
    minilm.embed_batch(["where is the cat?"])
    assert [entry for _, entry in asked] == [None, None]
    minilm.release_memory()
    assert asked[2] == (2, "cpu:0")  # [CLS] [SEP]
    minilm.release_memory()  # once per burst
    assert len(asked) == 3
    minilm.embed_batch(["where is the cat?"])  # a query grows nothing
    minilm.release_memory()
    assert len(asked) == 4
    again = minilm.embed_batch(["a cat", "a dog on a mat"])
    assert np.array_equal(vectors, again)
