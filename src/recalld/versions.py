"""A memory's version: what an edit made from an earlier read must still find.

``memory_version`` hashes the fields a write can change, as they are named in
:data:`VERSIONED_FIELDS` (content, title, tags, place, meta, expiry … and
``updated_at``), and none that reading changes (``access_count``,
``last_accessed_at``) or that the worker changes (``index_state``): a recall or
the indexing of the memory does not make an editor's copy stale, another edit
does. The list is fixed, not "every field but these": a field a later release adds
to :class:`~recalld.model.Memory` does not change every memory's version on
upgrade (a client holding an ETag from before it would get a 412 for an edit
nobody made), nor does one added to :class:`~recalld.model.Place`
(:data:`VERSIONED_PLACE_FIELDS`); a write of such a field still changes
``updated_at``. REST sends it as the ``ETag`` of ``GET``/``PATCH
/v1/memories/{id}`` and ``GET``/``PUT /v1/kv/{key}`` and checks it against
``If-Match``; :meth:`MemoryService.update` and :meth:`MemoryService.put` take it as
``expected_version``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from recalld.model import Memory

__all__ = [
    "ABSENT",
    "ANY_VERSION",
    "READ_ONLY_FIELDS",
    "VERSIONED_FIELDS",
    "VERSIONED_PLACE_FIELDS",
    "entity_tag",
    "memory_version",
]

# An expected version that asks only that the memory exists (HTTP's ``If-Match: *``).
ANY_VERSION = "*"
# An expected version that asks that the key holds no memory (HTTP's ``If-None-Match:
# *``): a create that never overwrites. No version is spelt so (they are hex digits).
ABSENT = "absent"

# Fields reading or indexing change without anyone editing the memory.
READ_ONLY_FIELDS = frozenset({"access_count", "last_accessed_at", "index_state"})
# The fields a version is made of: those of Memory when versions were introduced,
# less READ_ONLY_FIELDS. Never extended (see the module's docstring).
VERSIONED_FIELDS = frozenset(
    {
        "id",
        "seq",
        "namespace",
        "key",
        "title",
        "content",
        "kind",
        "category",
        "tags",
        "salience",
        "source",
        "speaker",
        "at",
        "created_at",
        "updated_at",
        "expires_at",
        "place",
        "meta",
    }
)
# The fields of a memory's place in its version, fixed for the same reason (a release
# adding one to Place would otherwise change the version of every memory with a place).
VERSIONED_PLACE_FIELDS = frozenset({"lat", "lon", "geohash", "name"})
# What model_dump includes: the place field by field, every other field whole.
_INCLUDED: dict[str, Any] = {
    name: set(VERSIONED_PLACE_FIELDS) if name == "place" else True for name in VERSIONED_FIELDS
}


def memory_version(memory: Memory) -> str:
    """The version of ``memory``: 32 hex digits that change with every write to it."""
    fields = memory.model_dump(mode="json", include=_INCLUDED)
    canonical = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def entity_tag(memory: Memory) -> str:
    """The HTTP ``ETag`` of ``memory`` (a strong entity tag: its version in quotes)."""
    return f'"{memory_version(memory)}"'
