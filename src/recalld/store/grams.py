"""The ``fts_grams`` column of memories (migration 32, both stores): the characters and
character pairs of a memory's Chinese, Japanese and Korean text, which keyword search
finds a word inside such a run by (:func:`recalld._text.grams_column`).

Written with every insert and replace of a memory; migration 32 fills it for the
memories stored before it. NULL for text without such characters, so English text
stores and indexes nothing more.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from recalld._text import grams_column
from recalld.store.base import MemoryRecord

__all__ = ["GRAMS_COLUMN", "GRAMS_SOURCE", "fill_grams", "record_grams"]

GRAMS_COLUMN = "fts_grams"
# The columns of memories the pairs are made of, in order (tags as their JSON text).
GRAMS_SOURCE = ("title", "content", "tags", "speaker", "place_name", "key")


def record_grams(record: MemoryRecord) -> str | None:
    """The ``fts_grams`` value of ``record``."""
    place = record.place
    return grams_column(
        record.title,
        record.content,
        " ".join(record.tags),
        record.speaker,
        None if place is None else place.name,
        record.key,
    )


def fill_grams(rows: Iterable[tuple[Any, ...]], write: Callable[[int, str], None]) -> int:
    """Write the ``fts_grams`` of each ``(seq, *GRAMS_SOURCE)`` row that holds such text
    (``write(seq, grams)``; tags as the JSON text or list the store keeps); how many were
    written. What :func:`record_grams` writes for the same memory."""
    written = 0
    for seq, title, content, tags, speaker, place_name, key in rows:
        listed = json.loads(tags) if isinstance(tags, str) else tags
        grams = grams_column(
            title, content, " ".join(str(tag) for tag in listed or ()), speaker, place_name, key
        )
        if grams is not None:
            write(int(seq), grams)
            written += 1
    return written
