"""A memory's version is made of the fields it was made of: a release adding a field keeps it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from recalld.model import Memory, Place
from recalld.versions import (
    READ_ONLY_FIELDS,
    VERSIONED_FIELDS,
    VERSIONED_PLACE_FIELDS,
    memory_version,
)

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


class _NextPlace(Place):
    """Place as a later release might have it: one more field, with a value."""

    accuracy_m: float = 5.0


class _NextReleasePlace(Memory):
    place: _NextPlace | None = None


def _placed(model: type[Memory] = Memory, place: type[Place] = Place) -> Memory:
    """A memory with every field set, its place too."""
    return model(
        id="01M987WHQNGZD2R6QXCWHCFTDK",
        seq=7,
        namespace="crew",
        key="ferry.time",
        title="Ferry",
        content="The boat leaves at nine — é",
        kind="kv",
        category="fact",
        tags=["boat", "ferry"],
        salience=0.75,
        source="https://example.org/timetable",
        speaker="user",
        at=datetime(2026, 12, 7, 9, 0, tzinfo=timezone(timedelta(hours=2))),
        created_at=WHEN,
        updated_at=WHEN + timedelta(seconds=5),
        expires_at=WHEN + timedelta(days=1),
        place=place(lat=59.91, lon=10.75, geohash="ukq8x", name="Oslo pier"),
        meta={"order": 12345678901234567891, "nested": {"a": [1, 2.5, None, "x"]}},
        access_count=3,
        last_accessed_at=WHEN,
        index_state="indexed",
    )


def test_memory_version_is_the_one_stop_64_answered() -> None:
    # Stop 64's memory_version (every field but the read-only ones) of the same memory:
    # a client holding that ETag across the upgrade must not be refused 412.
    assert memory_version(_placed()) == "9f05de0543b9e0cce3249b42d48e9c98"
    bare = _placed().model_copy(update={"place": None, "meta": {}, "tags": []})
    assert memory_version(bare) == "ca01a9bf1d77ca9ed8f740626b30aa61"


def test_memory_version_is_kept_when_a_release_adds_a_place_field() -> None:
    # The place was hashed whole: a field added to Place changed every placed memory's.
    assert set(Place.model_fields) == VERSIONED_PLACE_FIELDS
    later = _placed(_NextReleasePlace, _NextPlace)
    assert memory_version(later) == memory_version(_placed())
    moved = later.model_copy(update={"place": _NextPlace(lat=59.0, lon=10.75, geohash="ukq8")})
    assert memory_version(moved) != memory_version(later)
