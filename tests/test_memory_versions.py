"""A memory's version is made of the fields it was made of: a release adding a field keeps it."""

from __future__ import annotations

from datetime import UTC, datetime

from recalld.model import Memory
from recalld.versions import READ_ONLY_FIELDS, VERSIONED_FIELDS, memory_version

WHEN = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


class _NextRelease(Memory):
    """Memory as a later release might have it: one more field, with a value."""

    mood: str = "calm"


def _memory(model: type[Memory] = Memory) -> Memory:
    return model(
        id="01M987WHQNGZD2R6QXCWHCFTDK",
        seq=7,
        namespace="default",
        content="The boat leaves at nine",
        kind="note",
        created_at=WHEN,
        updated_at=WHEN,
    )


def test_memory_version_is_kept_when_a_release_adds_a_memory_field() -> None:
    assert memory_version(_memory(_NextRelease)) == memory_version(_memory())


def test_memory_version_still_changes_with_every_versioned_field() -> None:
    memory = _memory()
    assert memory_version(memory.model_copy(update={"content": "at ten"})) != memory_version(memory)
    later = memory.model_copy(update={"updated_at": datetime(2026, 12, 8, tzinfo=UTC)})
    assert memory_version(later) != memory_version(memory)
    read = memory.model_copy(update={"access_count": 3, "index_state": "indexed"})
    assert memory_version(read) == memory_version(memory)


def test_memory_versioned_fields_are_memory_fields_none_read_only() -> None:
    # A field renamed away would silently stop counting; a read-only one would make a
    # recall look like an edit.
    assert set(Memory.model_fields) >= VERSIONED_FIELDS
    assert not VERSIONED_FIELDS & READ_ONLY_FIELDS
