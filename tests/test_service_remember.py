"""remember: receipts, key upserts, client ids, places, times and every size limit."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import apsw
import pytest

from recalld.config import Settings
from recalld.errors import ConflictError, ValidationError
from recalld.service import MemoryService
from tests.conftest import FakeClock


def test_remember_returns_durable_receipt(service: MemoryService) -> None:
    receipt = service.remember("first memory")
    assert receipt.status == "created"
    assert receipt.created is True
    assert receipt.seq >= 1
    memory = service.get(receipt.id)
    assert memory.content == "first memory"
    assert memory.kind == "note"
    assert memory.namespace == "default"


def test_remember_survives_reopen(settings: Settings, clock: FakeClock) -> None:
    with MemoryService.open(settings, clock=clock) as first:
        receipt = first.remember("durable", tags=["a"])
    with MemoryService.open(settings, clock=clock) as second:
        assert second.get(receipt.id).tags == ["a"]


def test_remember_key_upsert_keeps_created_at(service: MemoryService, clock: FakeClock) -> None:
    first = service.remember("Melbourne", key="staging.region", tags=["infra"])
    created_at = service.get(first.id).created_at
    clock.advance(60)
    second = service.remember("Sydney", key="staging.region", title="region")
    assert second.status == "overwritten"
    assert second.created is False
    assert (second.id, second.seq) == (first.id, first.seq)
    memory = service.get(key="staging.region")
    assert memory.content == "Sydney"
    assert memory.title == "region"
    assert memory.tags == []  # a key write replaces every field it is given, tags included
    assert memory.created_at == created_at
    assert memory.updated_at == created_at + timedelta(seconds=60)
    assert service.stats().count == 1


def test_remember_key_is_per_namespace(service: MemoryService) -> None:
    one = service.remember("A", key="k", namespace="one")
    two = service.remember("B", key="k", namespace="two")
    assert one.id != two.id
    assert service.get(key="k", namespace="one").content == "A"
    assert service.get(key="k", namespace="two").content == "B"


def test_remember_key_is_one_key_in_either_unicode_spelling(service: MemoryService) -> None:
    # "café" precomposed, and as "e" + U+0301 (what macOS file names and some tools send):
    # the same key to whoever reads it, so one memory, found by either spelling.
    composed, decomposed = "caf\u00e9.menu", "cafe\u0301.menu"
    first = service.remember("espresso", key=composed)
    second = service.remember("flat white", key=decomposed)
    assert second.status == "overwritten"
    assert second.id == first.id
    assert service.stats().count == 1
    assert service.get(key=decomposed).content == "flat white"
    assert service.get(key=composed).key == composed


def test_remember_client_id_is_idempotent(service: MemoryService) -> None:
    first = service.remember("same", id="client-1")
    again = service.remember("same", id="client-1")
    assert first.id == "client-1"
    assert again.status == "unchanged"
    assert service.stats().count == 1
    with pytest.raises(ConflictError) as caught:
        service.remember("different", id="client-1")
    assert caught.value.field == "id"
    assert service.get("client-1").content == "same"


def test_an_expired_client_id_is_free_again(service: MemoryService, clock: FakeClock) -> None:
    service.remember("Gate code is 4711", id="gate", ttl_seconds=1)
    service.remember("Gate code is 1234", id="door", ttl_seconds=1)
    clock.advance(2)  # expired, not purged yet
    # The same write again lands (it used to answer "unchanged" for nothing readable) ...
    again = service.remember("Gate code is 4711", id="gate")
    assert again.status == "created"
    assert service.get("gate").expires_at is None
    # ... and another text under the id is no conflict with a memory no read can see.
    other = service.remember("Door code is 9999", id="door")
    assert other.status == "created"
    assert service.get("door").content == "Door code is 9999"
    assert service.stats().count == 2


def test_remember_place_from_coordinates_stores_geohash(service: MemoryService) -> None:
    receipt = service.remember("café", place={"lat": 48.8566, "lon": 2.3522, "name": "Paris"})
    place = service.get(receipt.id).place
    assert place is not None
    assert len(place.geohash) >= 9
    assert place.geohash.startswith("u09tvw")
    assert (place.lat, place.lon, place.name) == (48.8566, 2.3522, "Paris")


def test_remember_place_from_geohash_stores_coordinates(service: MemoryService) -> None:
    receipt = service.remember("café", place={"geohash": "u09tvw0f6s"})
    place = service.get(receipt.id).place
    assert place is not None
    assert place.geohash == "u09tvw0f6s"
    assert place.lat == pytest.approx(48.8566, abs=1e-3)
    assert place.lon == pytest.approx(2.3522, abs=1e-3)


def test_remember_at_keeps_offset(service: MemoryService) -> None:
    receipt = service.remember("breakfast", at="2026-10-25T08:10:00+02:00")
    at = service.get(receipt.id).at
    assert at is not None
    assert at.isoformat() == "2026-10-25T08:10:00+02:00"


def test_remember_ttl_sets_expiry(service: MemoryService, clock: FakeClock) -> None:
    receipt = service.remember("short-lived", ttl_seconds=30)
    assert service.get(receipt.id).expires_at == clock.now + timedelta(seconds=30)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"content": ""}, "content"),
        ({"content": "   "}, "content"),
        ({"content": "x" * (64 * 1024 + 1)}, "content"),
        ({"content": "ok", "key": ""}, "key"),
        ({"content": "ok", "key": "k" * 201}, "key"),
        ({"content": "ok", "salience": 1.5}, "salience"),
        ({"content": "ok", "salience": -0.1}, "salience"),
        ({"content": "ok", "tags": [f"t{i}" for i in range(65)]}, "tags"),
        ({"content": "ok", "tags": ["x" * 101]}, "tags"),
        ({"content": "ok", "tags": [" "]}, "tags"),
        ({"content": "ok", "meta": {"blob": "x" * (16 * 1024)}}, "meta"),
        ({"content": "ok", "at": "yesterday"}, "at"),
        ({"content": "ok", "ttl_seconds": 0}, "ttl_seconds"),
        # Positive, yet under the microsecond times are kept to: expired at birth.
        ({"content": "ok", "ttl_seconds": 1e-7}, "ttl_seconds"),
        ({"content": "ok", "ttl_seconds": 5e-7}, "ttl_seconds"),
        ({"content": "ok", "place": {"lat": 91, "lon": 0}}, "place.lat"),
        ({"content": "ok", "place": {"lat": 10}}, "place.lon"),
        ({"content": "ok", "place": {"geohash": "abc!"}}, "place.geohash"),
        ({"content": "ok", "place": {"geohash": "u09", "lat": 1.0, "lon": 1.0}}, "place.geohash"),
        ({"content": "ok", "namespace": "has space"}, "namespace"),
        ({"content": "ok", "id": "bad id with spaces"}, "id"),
        ({"content": "ok", "id": ".."}, "id"),
        ({"content": "ok", "id": "."}, "id"),
        ({"content": "ok", "key": ".."}, "key"),
        ({"content": "ok", "key": "notes/../passwords"}, "key"),
        ({"content": "ok", "key": "./draft"}, "key"),
        ({"content": "ok", "speaker": ""}, "speaker"),
        ({"content": "ok", "speaker": "   "}, "speaker"),
        ({"content": "ok", "speaker": "nul\x00byte"}, "speaker"),
        ({"content": "ok", "speaker": "x" * 201}, "speaker"),
    ],
)
def test_remember_bad_input_names_field_and_changes_nothing(
    service: MemoryService, arguments: dict[str, object], field: str, db_path: Path
) -> None:
    service.remember("existing")
    before = service.stats()
    content = arguments.pop("content")
    assert isinstance(content, str)
    with pytest.raises(ValidationError) as caught:
        service.remember(content, **arguments)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert field.split(".")[0] in str(caught.value)
    assert service.stats().count == before.count
    assert [m.content for m in service.list_memories().memories] == ["existing"]


def test_remember_many_names_the_draft_whose_key_or_id_collides(service: MemoryService) -> None:
    service.remember("held", key="vault", id="holder")
    with pytest.raises(ConflictError) as caught:
        service.remember_many(
            [{"content": "fine", "key": "fresh"}, {"content": "b", "key": "vault", "id": "other"}]
        )
    assert caught.value.field == "[1].id"
    assert [memory.key for memory in service.list_memories().memories] == ["vault"]


def test_remember_limits_come_from_settings(db_path: Path, clock: FakeClock) -> None:
    settings = Settings(db=db_path, max_content_bytes=10, max_tags=1)
    with MemoryService.open(settings, clock=clock) as service:
        with pytest.raises(ValidationError, match="limit is 10 bytes"):
            service.remember("eleven byte")
        with pytest.raises(ValidationError, match="the limit is 1"):
            service.remember("ok", tags=["a", "b"])
        assert service.remember("ten bytes!").status == "created"


def test_remember_many_is_all_or_nothing(service: MemoryService) -> None:
    with pytest.raises(ValidationError) as caught:
        service.remember_many([{"content": "fine"}, {"content": "also fine", "salience": 7}])
    assert caught.value.field == "[1].salience"
    assert service.stats().count == 0
    receipts = service.remember_many([{"content": "one"}, {"content": "two"}])
    assert [receipt.status for receipt in receipts] == ["created", "created"]
    assert service.stats().count == 2


def test_remember_tags_are_trimmed_and_deduplicated(service: MemoryService) -> None:
    receipt = service.remember("tagged", tags=[" a ", "b", "a"])
    assert service.get(receipt.id).tags == ["a", "b"]


def test_remember_speaker_is_kept_trimmed_and_updatable(service: MemoryService) -> None:
    receipt = service.remember("see you at the bakery", speaker="  Caroline   Smith ")
    assert service.get(receipt.id).speaker == "Caroline Smith"
    # A speaker is a name: a line break (like any control character) is refused.
    with pytest.raises(ValidationError, match="speaker"):
        service.remember("two lines", speaker="Caroline\nSmith")
    hits = service.search("what did caroline say?")
    assert [hit.memory.id for hit in hits] == [receipt.id]
    assert service.update(receipt.id, speaker="Melanie").speaker == "Melanie"
    assert service.update(receipt.id, title="bakery").speaker == "Melanie"
    assert service.update(receipt.id, speaker=None).speaker is None


def _store_key_as_before(db_path: Path, memory_id: str, key: str) -> None:
    """Give a stored memory ``key`` as an older version could have written it (past the
    rules a write checks now)."""
    connection = apsw.Connection(str(db_path))
    connection.execute("UPDATE memories SET key = ? WHERE id = ?", (key, memory_id))
    connection.close()


def test_a_key_stored_before_the_dot_segment_rule_can_still_be_updated(
    service: MemoryService, db_path: Path
) -> None:
    receipt = service.remember("an old note", key="notes/old")
    _store_key_as_before(db_path, receipt.id, "notes/../old")
    updated = service.update(receipt.id, tags=["kept"])  # a tag-only change, as before
    assert (updated.key, updated.tags) == ("notes/../old", ["kept"])
    with pytest.raises(ValidationError) as caught:
        service.remember("a new note", key="other/../new")
    assert caught.value.field == "key"


def test_a_key_stored_decomposed_before_the_nfc_rule_is_still_found(
    service: MemoryService, db_path: Path
) -> None:
    receipt = service.remember("an old note", key="old.note")
    _store_key_as_before(db_path, receipt.id, "cafe\u0301")
    assert service.get(key="cafe\u0301").id == receipt.id


def test_a_key_stored_decomposed_before_the_nfc_rule_is_overwritten_not_twinned(
    service: MemoryService, db_path: Path
) -> None:
    # Written before the rule as "e" + U+0301: writing the key again (in either spelling)
    # must overwrite that memory, not add an NFC twin that shadows it until a forget.
    receipt = service.remember("the old menu", key="old.note")
    _store_key_as_before(db_path, receipt.id, "cafe\u0301")
    again = service.remember("the new menu", key="cafe\u0301")
    assert (again.status, again.id) == ("overwritten", receipt.id)
    assert [memory.content for memory in service.list_memories().memories] == ["the new menu"]
    assert service.get(key="caf\u00e9").key == "caf\u00e9"


def test_a_key_is_at_most_200_characters_once_composed(
    service: MemoryService, tmp_path: Path, clock: FakeClock
) -> None:
    # U+0958 (Devanagari qa) composes to two characters: a key of 150 of them is 300 in
    # NFC, past the 200 a key may hold, so an export of it could never be imported.
    with pytest.raises(ValidationError) as caught:
        service.remember("a note", key="\u0958" * 150)
    assert caught.value.field == "key"
    service.remember("a note", key="\u0958" * 100)
    lines = list(service.export())
    with MemoryService.open(Settings(db=tmp_path / "fresh.db"), clock=clock) as fresh:
        assert fresh.import_lines(lines).errors == []
        assert fresh.get(key="\u0958" * 100).content == "a note"
