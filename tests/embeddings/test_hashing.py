"""The hashing embedder: deterministic, normalised, similar for shared words."""

from __future__ import annotations

import numpy as np

from recalld.embeddings import HashingEmbedder, create_embedder
from recalld.embeddings.base import Embedder
from tests.semantic_support import semantic_settings


def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    embedder = HashingEmbedder(128)
    first = embedder.embed_batch(["the staging database", "kitchen door"])
    second = HashingEmbedder(128).embed_batch(["the staging database", "kitchen door"])
    assert first.dtype == np.float32
    assert first.shape == (2, 128)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)


def test_hashing_embedder_ranks_shared_words_higher() -> None:
    vectors = HashingEmbedder().embed_batch(["staging database", "staging databases", "roses"])
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])


def test_hashing_embedder_satisfies_the_protocol(tmp_path: object) -> None:
    embedder = HashingEmbedder()
    assert isinstance(embedder, Embedder)
    assert embedder.name == "hashing-256"
    assert embedder.embed_batch([]).shape == (0, 256)


def test_create_embedder_follows_settings(tmp_path: object) -> None:
    from pathlib import Path

    base = Path(str(tmp_path)) / "m.db"
    assert create_embedder(semantic_settings(base, embedder="none")) is None
    hashing = create_embedder(semantic_settings(base, embedder="hashing", embedder_dimension=32))
    assert hashing is not None
    assert hashing.dimension == 32
    default = create_embedder(semantic_settings(base, embedder="minilm"))
    assert default is not None
    assert (default.name, default.dimension) == ("all-MiniLM-L6-v2-onnx-blockwise-int8", 384)
    installed = create_embedder(
        semantic_settings(base, embedder="minilm", embedder_variant="installed")
    )
    assert installed is not None
    assert installed.name == "all-MiniLM-L6-v2-onnx-int8"
    fast = create_embedder(
        semantic_settings(base, embedder="minilm", embedder_variant="dynamic-int8")
    )
    assert fast is not None
    assert fast.name == "all-MiniLM-L6-v2-onnx-dynamic-int8"
    # A custom sentence-transformers model takes its dimension from the settings, as a
    # custom ONNX model does (it was 384 whatever the model: every vector refused).
    custom = create_embedder(
        semantic_settings(
            base, embedder="torch", embedder_model_path=base.parent, embedder_dimension=768
        )
    )
    assert custom is not None
    assert (custom.name, custom.dimension) == (f"st:{base.parent.name}", 768)
