"""Embedders: the protocol, the offline default, a hashing one for tests, and HTTP.

:func:`create_embedder` builds the one the settings ask for; an entrypoint calls
it once and injects the result (nothing here is global).
"""

from __future__ import annotations

from recalld.config import Settings
from recalld.embeddings.base import Embedder, Vectors, normalize_rows
from recalld.embeddings.hashing import HashingEmbedder
from recalld.errors import EmbeddingError

__all__ = ["Embedder", "HashingEmbedder", "Vectors", "create_embedder", "normalize_rows"]


def create_embedder(settings: Settings) -> Embedder | None:
    """The embedder ``settings.embedder`` names, or ``None`` for keyword-only recall.

    Creating it loads nothing: model files are read on the first embedding.
    """
    choice = settings.embedder
    if choice == "none":
        return None
    if choice == "hashing":
        return HashingEmbedder(settings.embedder_dimension or 256)
    if choice == "minilm":
        from recalld.embeddings.minilm import MiniLMEmbedder

        if settings.embedder_model_path is None:
            return MiniLMEmbedder(
                threads=settings.embedder_threads,
                variant=settings.embedder_variant,
                cache_directory=settings.cache_dir,
            )
        return MiniLMEmbedder(
            model_path=settings.embedder_model_path,
            tokenizer_path=settings.embedder_tokenizer_path,
            name=settings.embedder_model,
            dimension=settings.embedder_dimension or 384,
            expected_sha256=settings.embedder_model_sha256,
            threads=settings.embedder_threads,
        )
    if choice == "http":
        from recalld.embeddings.http import HTTPEmbedder

        if settings.embedder_url is None or settings.embedder_model is None:
            raise EmbeddingError("embedder 'http' needs embedder_url and embedder_model")
        return HTTPEmbedder(
            base_url=settings.embedder_url,
            model=settings.embedder_model,
            api_key=(
                None
                if settings.embedder_api_key is None
                else settings.embedder_api_key.get_secret_value()
            ),
            dimension=settings.embedder_dimension,
            timeout_seconds=settings.embedder_timeout_seconds,
        )
    from recalld.embeddings.torch_backend import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(
        model_path=settings.embedder_model_path, dimension=settings.embedder_dimension or 384
    )
