"""A memory's version: what an edit made from an earlier read must still find.

``memory_version`` hashes every field a write can change (content, title, tags,
place, meta, expiry … and ``updated_at``), and none that reading changes
(``access_count``, ``last_accessed_at``) or that the worker changes
(``index_state``): a recall or the indexing of the memory does not make an
editor's copy stale, another edit does. REST sends it as the ``ETag`` of
``GET``/``PATCH /v1/memories/{id}`` and checks it against ``If-Match``;
:meth:`MemoryService.update` takes it as ``expected_version``.
"""

from __future__ import annotations

import hashlib
import json

from recalld.model import Memory

__all__ = ["ANY_VERSION", "READ_ONLY_FIELDS", "entity_tag", "memory_version"]

# An expected version that asks only that the memory exists (HTTP's ``If-Match: *``).
ANY_VERSION = "*"

# Fields reading or indexing change without anyone editing the memory.
READ_ONLY_FIELDS = frozenset({"access_count", "last_accessed_at", "index_state"})


def memory_version(memory: Memory) -> str:
    """The version of ``memory``: 32 hex digits that change with every write to it."""
    fields = memory.model_dump(mode="json", exclude=set(READ_ONLY_FIELDS))
    canonical = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def entity_tag(memory: Memory) -> str:
    """The HTTP ``ETag`` of ``memory`` (a strong entity tag: its version in quotes)."""
    return f'"{memory_version(memory)}"'
