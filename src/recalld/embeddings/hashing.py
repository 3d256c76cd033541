"""A deterministic hashing embedder for fast unit tests (never the default outside tests).

Each word and each character trigram of a word is hashed (blake2b, so the
vectors are the same in every process and on every machine) into a signed
bucket; the row is then L2-normalised. Texts that share words or word pieces
get similar vectors; it knows nothing about meaning.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from recalld.embeddings.base import Vectors, normalize_rows

__all__ = ["HashingEmbedder"]

WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Feature hashing of words and character trigrams into ``dimension`` buckets."""

    def __init__(self, dimension: int = 256) -> None:
        if dimension < 8:
            raise ValueError("dimension must be at least 8")
        self._dimension = dimension

    @property
    def name(self) -> str:
        """``hashing-<dimension>``."""
        return f"hashing-{self._dimension}"

    @property
    def dimension(self) -> int:
        """The number of hash buckets."""
        return self._dimension

    def _features(self, text: str) -> list[str]:
        features = []
        for word in WORD.findall(text.lower()):
            features.append(f"w:{word}")
            padded = f"#{word}#"
            features.extend(f"t:{padded[index : index + 3]}" for index in range(len(padded) - 2))
        return features

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Hash every text; the same text gives the same vector everywhere."""
        matrix = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                weight = 1.0 if feature.startswith("w:") else 0.5
                sign = 1.0 if value >> 63 else -1.0
                matrix[row, value % self._dimension] += sign * weight
        return normalize_rows(matrix)
