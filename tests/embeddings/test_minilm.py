"""The default offline embedder (real model, from the installed package; marked ``model``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from recalld.embeddings.minilm import DEFAULT_MODEL_SHA256, MiniLMEmbedder, default_model_path
from recalld.errors import EmbeddingError

REFERENCE = Path(__file__).parent / "minilm_reference.json"


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


@pytest.mark.model
def test_minilm_vectors_match_the_stored_reference(minilm: MiniLMEmbedder) -> None:
    reference = json.loads(REFERENCE.read_text())
    assert reference["model_sha256"] == DEFAULT_MODEL_SHA256
    vectors = minilm.embed_batch(reference["sentences"])
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(vectors, np.array(reference["vectors"]), atol=1e-3)


@pytest.mark.model
def test_minilm_batching_and_padding_do_not_change_vectors(minilm: MiniLMEmbedder) -> None:
    short, long = "a cat", "a much longer sentence about a cat that sleeps in the sun all day"
    together = minilm.embed_batch([short, long])
    alone = np.vstack([minilm.embed_batch([short]), minilm.embed_batch([long])])
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
