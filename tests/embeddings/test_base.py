"""Vector helpers shared by the index and recall (:mod:`recalld.embeddings.base`)."""

from __future__ import annotations

import numpy as np

from recalld.embeddings.base import dot_rows


def test_dot_rows_is_the_matrix_product_for_a_vector_and_for_a_matrix() -> None:
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((300, 384)).astype(np.float32)
    vector = rng.standard_normal(384).astype(np.float32)
    others = rng.standard_normal((10, 384)).astype(np.float32)
    assert dot_rows(rows, vector).shape == (300,)
    np.testing.assert_allclose(dot_rows(rows, vector), rows @ vector, rtol=1e-5, atol=1e-4)
    assert dot_rows(rows, others).shape == (300, 10)
    np.testing.assert_allclose(dot_rows(rows, others), rows @ others.T, rtol=1e-5, atol=1e-4)
