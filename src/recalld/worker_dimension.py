"""The embedder's dimension as the backfill may trust it (split from :mod:`recalld.worker`,
which had grown past the house limit)."""

from __future__ import annotations

import logging

import numpy as np

from recalld.embeddings.base import Embedder
from recalld.errors import EmbeddingError
from recalld.store.base import Store
from recalld.store.semantic import VECTOR_BYTES

__all__ = ["known_dimension"]

logger = logging.getLogger("recalld.worker")


def known_dimension(store: Store, embedder: Embedder) -> int | None:
    """The embedder's dimension, for the backfill to re-embed vectors of another
    length stored under its name; None when it cannot say now (an http endpoint
    asked for it is down: its jobs then fail and retry as usual), or when the stored
    vectors are of another length and a real embedding does not bear that dimension
    out (a wrong RECALLD_EMBEDDER_DIMENSION: dropping them on its word deleted every
    vector a rightly configured process had made, then failed every job)."""
    try:
        claimed = embedder.dimension
    except EmbeddingError as error:
        logger.warning("the embedder's dimension is unknown for now: %s", error)
        return None
    model = embedder.name
    first = store.semantic.vector_rows(model, 0, 1)
    if not first or len(first[0][2]) == claimed * VECTOR_BYTES:
        return claimed  # nothing of another length to drop
    stored = len(first[0][2]) // VECTOR_BYTES
    try:
        actual = np.asarray(embedder.embed_batch(["dimension check"])).shape[-1]
    except EmbeddingError as error:
        logger.warning(
            "the stored %s vectors are %d long, the embedder says %d; kept until an"
            " embedding shows its length: %s",
            model,
            stored,
            claimed,
            error,
        )
        return None
    if actual != claimed:
        logger.error(
            "embedder %s says its dimension is %d but embeds %d numbers a text"
            " (RECALLD_EMBEDDER_DIMENSION): its stored vectors (%d long) are kept",
            model,
            claimed,
            actual,
            stored,
        )
        return None
    logger.warning(
        "the stored %s vectors are %d long and the embedder's %d (a model served under"
        " the same name with another dimension): they are dropped and re-embedded",
        model,
        stored,
        claimed,
    )
    return claimed
