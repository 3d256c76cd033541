"""export and import: a lossless, idempotent JSONL round trip with per-line errors."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.model import Filters
from recalld.service import MemoryService
from tests.conftest import FakeClock


def _fill(service: MemoryService, clock: FakeClock) -> None:
    service.remember(
        "café visit",
        key="cafe",
        title="Café",
        kind="experience",
        category="spatial",
        tags=["food", "paris"],
        salience=0.75,
        source="file:///notes/today.md",
        speaker="Ana",
        at="2026-10-25T08:10:00+02:00",
        ttl_seconds=86_400,
        place={"lat": 48.8566, "lon": 2.3522, "name": "Le Café"},
        meta={"weather": "rain", "nested": {"n": [1, 2]}},
    )
    clock.advance(1)
    plain = service.remember("plain note")
    service.recall("plain")
    service.update(plain.id, tags=["edited"])
    service.remember("elsewhere", namespace="other")


def _comparable(service: MemoryService, namespace: str = "default") -> list[dict[str, object]]:
    memories = service.list_memories(namespace=namespace, filters=Filters(), limit=100).memories
    return [memory.model_dump(exclude={"seq"}) for memory in memories]


def test_export_import_round_trip_is_lossless(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    _fill(service, clock)
    lines = list(service.export())
    assert len(lines) == 2
    with MemoryService.open(
        Settings(db=tmp_path / "fresh.db", embedder="none"), clock=clock
    ) as fresh:
        for _ in range(3):  # also seed seq numbers differently
            fresh.remember("padding", namespace="pad")
        report = fresh.import_lines(lines)
        assert (report.created, report.updated, report.unchanged, report.errors) == (2, 0, 0, [])
        assert _comparable(fresh) == _comparable(service)
        again = fresh.import_lines(lines)
        assert (again.created, again.unchanged) == (0, 2)
        assert _comparable(fresh) == _comparable(service)


def test_import_keeps_each_record_namespace(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    _fill(service, clock)
    lines = list(service.export(["default", "other"]))
    with MemoryService.open(Settings(db=tmp_path / "fresh.db"), clock=clock) as fresh:
        fresh.import_lines(lines)
        assert fresh.stats(["default", "other"]).by_namespace == {"default": 2, "other": 1}


def test_import_refuses_an_empty_namespace_instead_of_writing_the_default(
    service: MemoryService,
) -> None:
    # "" was read as "no namespace": the line replaced the default namespace's memory of
    # that id, which it never named (adversarial pass j57).
    service.remember("the default namespace's own note", id="n1")
    lines = [
        json.dumps(
            {
                "namespace": "",
                "id": "n1",
                "content": "written over",
                "updated_at": "2030-01-01T00:00:00Z",
            }
        ),
        json.dumps({"type": "recalld.core", "namespace": "", "target": "user", "entries": ["x"]}),
    ]
    report = service.import_lines(lines)
    assert (report.created, report.updated) == (0, 0)
    assert [error.line for error in report.errors] == [1, 2]
    assert all(error.error.startswith("namespace: must be 1-100") for error in report.errors)
    assert service.get("n1").content == "the default namespace's own note"


def test_import_newer_record_updates_older_is_unchanged(
    service: MemoryService, clock: FakeClock
) -> None:
    receipt = service.remember("v1")
    line = json.loads(next(service.export()))
    line["content"] = "v2"
    line["updated_at"] = "2030-01-01T00:00:00Z"
    report = service.import_lines([json.dumps(line)])
    assert report.updated == 1
    assert service.get(receipt.id).content == "v2"
    line["content"] = "stale"
    line["updated_at"] = "2020-01-01T00:00:00Z"
    assert service.import_lines([json.dumps(line)]).unchanged == 1
    assert service.get(receipt.id).content == "v2"


def test_import_line_without_id_keeps_its_times_speaker_and_expiry(
    service: MemoryService, clock: FakeClock
) -> None:
    lines = [
        json.dumps({"content": "expired long ago", "expires_at": "2000-01-01T00:00:00Z"}),
        json.dumps(
            {
                "content": "expires later",
                "speaker": "Ana",
                "created_at": "2020-01-01T00:00:00Z",
                "expires_at": "2100-01-01T00:00:00Z",
                "access_count": 3,
            }
        ),
        json.dumps({"content": "only updated", "updated_at": "2021-05-01T00:00:00Z"}),
    ]
    report = service.import_lines(lines)
    assert (report.created, report.skipped, report.errors) == (2, 1, [])
    found = {memory.content: memory for memory in service.list_memories().memories}
    assert set(found) == {"expires later", "only updated"}
    later = found["expires later"]
    assert later.speaker == "Ana"
    assert later.created_at.isoformat() == "2020-01-01T00:00:00+00:00"
    assert later.expires_at is not None
    assert later.expires_at.isoformat() == "2100-01-01T00:00:00+00:00"
    assert later.access_count == 3
    updated = found["only updated"]
    assert updated.updated_at.isoformat() == "2021-05-01T00:00:00+00:00"
    assert updated.created_at == updated.updated_at
    # The same lines again: the live ones repeat stored memories, the expired one is skipped.
    again = service.import_lines(lines)
    assert (again.created, again.skipped) == (0, 3)


def test_import_of_a_keyed_line_without_id_again_changes_nothing(
    service: MemoryService, clock: FakeClock
) -> None:
    # Each re-import reported it updated, moved its updated_at and queued it again.
    line = {"content": "Melbourne (australiaeast)", "key": "staging.region", "tags": ["infra"]}
    first = service.import_lines([json.dumps(line)])
    assert first.created == 1
    stored = service.get(key="staging.region")
    clock.advance(60)
    again = service.import_lines([json.dumps(line)])
    assert (again.created, again.updated, again.unchanged) == (0, 0, 1)
    assert service.get(key="staging.region").updated_at == stored.updated_at
    # A line that says something else under the key still updates it.
    changed = service.import_lines([json.dumps({**line, "tags": ["infra", "au"]})])
    assert changed.updated == 1
    assert service.get(key="staging.region").tags == ["infra", "au"]


def test_import_over_an_expired_id_writes_it_again(
    service: MemoryService, clock: FakeClock
) -> None:
    service.remember("short-lived", id="note-1", ttl_seconds=1)
    line = json.loads(next(service.export()))
    clock.advance(2)  # expired, not purged yet: the same line must not be "unchanged"
    line["expires_at"] = None
    report = service.import_lines([json.dumps(line)])
    assert (report.created, report.unchanged) == (1, 0)
    assert service.get("note-1").content == "short-lived"


def test_import_bad_lines_reported_and_not_written(service: MemoryService) -> None:
    good = {
        "id": "good-1",
        "content": "fine",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps([1, 2]),
        json.dumps({**good, "id": "bad-2", "salience": 9}),
        json.dumps({**good, "id": "bad-3", "content": ""}),
        "",
        json.dumps({**good, "id": "good-2", "key": "k"}),
        json.dumps({**good, "id": "bad-4", "key": "k"}),
        json.dumps({**good, "id": "bad 5"}),
    ]
    report = service.import_lines(lines)
    assert report.created == 2
    assert [error.line for error in report.errors] == [2, 3, 4, 5, 8, 9]
    assert "salience" in report.errors[2].error
    assert "key" in report.errors[4].error
    ids = sorted(memory.id for memory in service.list_memories().memories)
    assert ids == ["good-1", "good-2"]


def test_import_lines_as_bytes_are_read_as_utf8_one_by_one(service: MemoryService) -> None:
    good = {"id": "good-1", "content": "café", "updated_at": "2026-01-01T00:00:00Z"}
    # A file opened in binary mode yields bytes: each line is read as UTF-8 by itself, and
    # one that is not (a Latin-1 "é") is a bad line, never stored with a replaced byte.
    lines: list[object] = [
        json.dumps(good, ensure_ascii=False).encode(),
        None,
        json.dumps({**good, "id": "bad-3"}, ensure_ascii=False).encode("latin-1"),
        json.dumps({**good, "id": "good-4"}),
    ]
    report = service.import_lines(lines)  # type: ignore[arg-type]
    assert report.created == 2
    assert [(error.line, error.error) for error in report.errors] == [
        (2, "line: give text, got NoneType"),
        (3, "line: is not UTF-8 text (byte 0xe9 at offset 31)"),
    ]
    stored = {memory.id: memory.content for memory in service.list_memories().memories}
    assert stored == {"good-1": "café", "good-4": "café"}


def test_an_experiences_senses_survive_export_and_import(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    stored = service.recollections.remember(
        "Morning run along the river", biometrics={"heart_rate": 90.0, "steps": 1200.0}
    )
    service.remember("a plain note has no senses line")
    lines = list(service.export())
    senses = [json.loads(line) for line in lines if '"recalld.senses"' in line]
    assert senses == [
        {
            "type": "recalld.senses",
            "namespace": "default",
            "id": stored.id,
            "signals": {},
            "biometrics": {"heart_rate": 90.0, "steps": 1200.0},
        }
    ]
    with MemoryService.open(
        Settings(db=tmp_path / "fresh.db", embedder="none"), clock=clock
    ) as fresh:
        assert fresh.import_lines(lines).errors == []
        again = fresh.import_lines(lines)  # the same file again changes nothing
        assert (again.created, again.updated, again.unchanged) == (0, 0, len(lines))
        cue = fresh.recollections.cue(biometrics={"heart_rate": 90.0})
        found = fresh.recollections.recall(cue)
        assert [hit.memory.id for hit in found] == [stored.id]
        bad = [
            {**senses[0], "id": "missing"},
            {**senses[0], "signals": {"image": "not base64!"}},
            {**senses[0], "signals": {"smell": ""}},
            {**senses[0], "biometrics": {"heart_rate": "fast"}},
        ]
        report = fresh.import_lines([json.dumps(line) for line in bad])
        assert [error.line for error in report.errors] == [1, 2, 3, 4]
        assert "missing" in report.errors[0].error
        assert report.errors[1].error.startswith("signals.image:")
        assert fresh.store.context.biometrics([found[0].memory.seq]) == {
            found[0].memory.seq: {"heart_rate": 90.0, "steps": 1200.0}
        }
        # A name an older version kept with spaces at its ends comes back trimmed (the
        # whole line, every other reading with it, was refused).
        legacy = {**senses[0], "biometrics": {" heart_rate ": 91.0, "steps": 1200.0}}
        assert fresh.import_lines([json.dumps(legacy)]).errors == []
        assert fresh.store.context.biometrics([found[0].memory.seq]) == {
            found[0].memory.seq: {"heart_rate": 91.0, "steps": 1200.0}
        }
        twins = {**senses[0], "biometrics": {" steps": 1.0, "steps ": 2.0}}
        assert fresh.import_lines([json.dumps(twins)]).errors[0].error.startswith("biometrics:")


def test_reminders_survive_export_and_import(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    weekly = service.remind("send the weekly report", at="tomorrow at 9", every="weekly")
    errand = service.remind(
        "pick up the prescription", place={"lat": 48.85, "lon": 2.35}, radius_m=100
    )
    lines = list(service.export())
    intentions = [json.loads(line) for line in lines if '"recalld.intention"' in line]
    assert [line["id"] for line in intentions] == [weekly.id, errand.id]
    with MemoryService.open(
        Settings(db=tmp_path / "fresh.db", embedder="none"), clock=clock
    ) as fresh:
        assert fresh.import_lines(lines).errors == []
        copied = {item.id: item for item in fresh.intentions()}
        originals = {item.id: item for item in service.intentions()}
        assert set(copied) == {weekly.id, errand.id}
        for memory_id, original in originals.items():
            assert copied[memory_id].model_dump(exclude={"seq"}) == original.model_dump(
                exclude={"seq"}
            )
        again = fresh.import_lines(lines)
        assert (again.created, again.errors) == (0, [])
        time = intentions[0]["triggers"][0]
        place = intentions[1]["triggers"][0]
        bad = [
            {**intentions[0], "id": "missing"},
            {**intentions[0], "triggers": [{"type": "teleport"}]},
            {**intentions[0], "triggers": []},
            {**intentions[0], "min_interval_seconds": True},
            # What remind refuses is refused here too: a bad line must not reach the
            # scheduler, which fires every namespace's reminders in one batch.
            {**intentions[0], "triggers": [{**time, "zone": "Not/AZone"}]},
            {**intentions[0], "triggers": [{**time, "rrule": "GARBAGE"}]},
            {**intentions[0], "triggers": [{**time, "window_minutes": 1e12}]},
            {**intentions[1], "triggers": [{**place, "lat": 1e9}]},
            {**intentions[1], "triggers": [{**place, "radius_m": -5}]},
            {**intentions[1], "scheduled": True},
        ]
        report = fresh.import_lines([json.dumps(line) for line in bad])
        assert [error.line for error in report.errors] == list(range(1, 11))
        assert report.errors[3].error.startswith("min_interval_seconds")
        assert [error.error.split(":")[0] for error in report.errors[4:]] == [
            "triggers[0].zone",
            "triggers[0].rrule",
            "triggers[0].window_minutes",
            "triggers[0].lat",
            "triggers[0].radius_m",
            "scheduled",
        ]
        assert fresh.intentions.run_due(clock.now + timedelta(days=8)) != []
        # Its memory's TTL passed (not purged yet): the line is a bad line, not a
        # UNIQUE constraint failure that ended the whole import.
        fresh.update(errand.id, ttl_seconds=60)
        clock.advance(61)
        late = fresh.import_lines([json.dumps(intentions[1])])
        assert [(error.line, error.error.split(":")[0]) for error in late.errors] == [(1, "id")]
        # Cancelled at the source, the copy's reminder ends with the newer export (it went
        # on firing there); an older export never makes it active again.
        service.intentions.cancel(weekly.id)
        newer = fresh.import_lines(list(service.export()))
        assert (newer.updated, newer.errors) == (1, [])
        states = {item.id: item.state for item in fresh.intentions(state="all")}
        assert states == {weekly.id: "cancelled", errand.id: "active"}
        older = fresh.import_lines(lines)
        assert (older.updated, older.errors) == (0, [])
        assert {item.id: item.state for item in fresh.intentions(state="all")} == states


def test_an_offset_with_seconds_keeps_its_instant_through_export(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    # Amsterdam's local mean time in 1900 was +00:19:32; JSON wrote it to the minute, and
    # the imported memory was 32 seconds off.
    at = datetime(1900, 5, 1, 9, 0, tzinfo=ZoneInfo("Europe/Amsterdam"))
    receipt = service.remember("the first tram ran", at=at)
    stored = service.get(receipt.id)
    assert stored.at == at
    with MemoryService.open(
        Settings(db=tmp_path / "copy.db", embedder="none"), clock=clock
    ) as copy:
        assert copy.import_lines(list(service.export())).errors == []
        assert copy.get(receipt.id).at == at


def test_an_export_names_only_memories_it_holds_while_another_writer_goes_on(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    # Written after the memory lines were read, an observation of an older entity was named
    # by its entity line (and a new reminder got an intention line): the copy refused both
    # lines, and the entity, declared before the export began, was lost with its line.
    service.knowledge.create_entities(
        [{"name": "Alice", "entityType": "person", "observations": ["is nice"]}]
    )
    service.core.apply("user", [{"action": "add", "content": "prefers tea"}])
    lines = service.export()
    read = []
    for line in lines:
        read.append(line)
        if '"recalld.core"' in line:
            break
    service.knowledge.add_observations([{"entityName": "Alice", "contents": ["likes jazz"]}])
    service.remind("buy milk", mention=["milk"])
    read.extend(lines)
    assert not any('"recalld.intention"' in line for line in read)
    with MemoryService.open(
        Settings(db=tmp_path / "copy.db", embedder="none"), clock=clock
    ) as copy:
        report = copy.import_lines(read)
        assert report.errors == []
        graph = copy.knowledge.read_graph()
        assert [(entity.name, entity.observations) for entity in graph.entities] == [
            ("Alice", ["is nice"])
        ]


def test_import_refuses_structure_lines_of_the_wrong_shape(service: MemoryService) -> None:
    # Their fields were read with str(): a list became the entity "['Alice']", a number
    # namespace put a core entry in the default one, and unknown fields (a newer
    # export's) were dropped without a word, where a memory line refuses them.
    entity = {"type": "recalld.entity", "name": "Alice", "entity_type": "person"}
    lines = [
        {**entity, "name": ["Alice"]},
        {**entity, "entity_type": {"kind": "person"}},
        {"type": "recalld.core", "namespace": 123, "target": "user", "entries": ["tea"]},
        {"type": "recalld.core", "target": "user", "entries": ["tea"], "version": 2},
        {**entity, "aliases": ["Al"]},
        {"type": "recalld.relation", "from": 7, "to": "Bob", "relation_type": "knows"},
    ]
    report = service.import_lines([json.dumps(line) for line in lines])
    assert [error.line for error in report.errors] == [1, 2, 3, 4, 5, 6]
    assert [error.error.split(":")[0] for error in report.errors] == [
        "name",
        "entity_type",
        "namespace",
        "version",
        "aliases",
        "from",
    ]
    assert "got list" in report.errors[0].error
    assert "recalld.core" in report.errors[3].error
    assert (report.created, report.updated, report.unchanged) == (0, 0, 0)
    assert service.knowledge.read_graph().entities == []
    assert service.core.state("user").entries == []


def test_import_takes_a_key_whose_memory_expired(service: MemoryService, clock: FakeClock) -> None:
    # A write treats an expired key as free; an import line with an id was refused as a
    # conflict with the expired memory (not purged yet), naming an id no read shows.
    expired = service.remember("the old code", key="door.code", ttl_seconds=5)
    clock.advance(10)
    line = {"id": "code-2", "key": "door.code", "content": "the new code"}
    report = service.import_lines([json.dumps(line)])
    assert (report.created, report.errors) == (1, [])
    assert service.get(key="door.code").id == "code-2"
    every = service.list_memories(filters=Filters(include_expired=True)).memories
    assert [memory.id for memory in every] == ["code-2"]  # the expired one went, as on a write
    assert expired.id != "code-2"


def test_import_line_without_updated_at_that_changes_any_field_updates(
    service: MemoryService, clock: FakeClock
) -> None:
    # Without updated_at only content, title, key, tags and meta were compared: a line
    # raising the salience, naming a category or moving `at` to another offset was
    # reported unchanged and its fields dropped without a word.
    receipt = service.remember("the stove is hot", salience=0.25, at="2026-10-25T08:00:00Z")
    line = json.loads(next(service.export()))
    del line["updated_at"]
    assert service.import_lines([json.dumps(line)]).unchanged == 1
    changes: list[dict[str, object]] = [
        {"salience": 1.0},
        {"category": "hazard"},
        {"at": "2026-10-25T10:00:00+02:00"},  # the same instant, another local time
        {"speaker": "Ana"},
        {"place": {"geohash": "u09tvw"}},
        {"expires_at": "2100-01-01T00:00:00Z"},
    ]
    for change in changes:
        line.update(change)
        report = service.import_lines([json.dumps(line)])
        assert (report.updated, report.unchanged, report.errors) == (1, 0, []), change
        assert service.import_lines([json.dumps(line)]).unchanged == 1, change
    stored = service.get(receipt.id)
    assert (stored.salience, stored.category, stored.speaker) == (1.0, "hazard", "Ana")
    assert stored.at is not None
    assert stored.at.isoformat() == "2026-10-25T10:00:00+02:00"


def test_import_line_with_id_keeps_what_it_does_not_say(
    service: MemoryService, clock: FakeClock
) -> None:
    # A line with an id but no `at` stored none (no `since` filter found it), and one
    # replacing a memory moved its created_at to now and reset its access count.
    report = service.import_lines([json.dumps({"id": "new-1", "content": "no time given"})])
    assert (report.created, report.errors) == (1, [])
    new = service.get("new-1")
    assert new.at == new.created_at == clock.now
    since = Filters(since=(clock.now - timedelta(days=1)).isoformat())
    assert [memory.id for memory in service.list_memories(filters=since).memories] == ["new-1"]
    service.remember("first words", id="old-1", at="2026-10-01T09:00:00+02:00")
    service.recall("first words")
    before = service.get("old-1")
    clock.advance(86_400)
    report = service.import_lines([json.dumps({"id": "old-1", "content": "second words"})])
    assert (report.updated, report.errors) == (1, [])
    after = service.get("old-1")
    assert after.content == "second words"
    assert after.updated_at == clock.now
    assert (after.created_at, after.at, after.access_count, after.last_accessed_at) == (
        before.created_at,
        before.at,
        1,
        before.last_accessed_at,
    )
    assert after.at is not None
    assert after.at.isoformat() == "2026-10-01T09:00:00+02:00"


def test_an_export_of_every_namespace_holds_those_without_memories(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    # `recalld export --all-namespaces` exports service.namespaces(), which named only
    # namespaces holding memories: one with only core memory (a Hermes import) or only a
    # declared entity was left out of the backup without a word.
    service.remember("a note", namespace="notes")
    service.core.apply("user", [{"action": "add", "content": "prefers tea"}], namespace="core")
    service.knowledge.create_entities(
        [{"name": "Alice", "entityType": "person", "observations": []}], namespace="people"
    )
    service.core.apply("user", [{"action": "add", "content": "gone"}], namespace="emptied")
    service.core.apply("user", [{"action": "remove", "old_text": "gone"}], namespace="emptied")
    assert service.namespaces() == ["core", "notes", "people"]
    with MemoryService.open(
        Settings(db=tmp_path / "copy.db", embedder="none"), clock=clock
    ) as copy:
        assert copy.import_lines(service.export(service.namespaces())).errors == []
        assert copy.core.state("user", namespace="core").entries == ["prefers tea"]
        people = copy.knowledge.read_graph(namespace="people").entities
        assert [entity.name for entity in people] == ["Alice"]


def test_import_line_with_id_that_expired_already_is_skipped(
    service: MemoryService, clock: FakeClock
) -> None:
    # Reported created, it was written as a row no read shows, for the purge to delete;
    # the same line without an id is skipped.
    lines = [
        json.dumps({"id": "gone-1", "content": "long gone", "expires_at": "2000-01-01T00:00:00Z"}),
        json.dumps({"id": "gone-2", "content": "gone too", "expires_at": 946684800}),
    ]
    report = service.import_lines(lines)
    assert (report.created, report.skipped, report.errors) == (0, 2, [])
    every = service.list_memories(filters=Filters(include_expired=True)).memories
    assert every == []


def test_import_core_line_names_the_entry_it_refuses(service: MemoryService) -> None:
    # A core line's refused entry was reported by its line alone ("contains U+0000 at
    # position 1: ..."), without saying which of the line's entries it was.
    line = {"type": "recalld.core", "target": "user", "entries": ["tea", "a\u0000b", "x" * 5000]}
    report = service.import_lines([json.dumps(line)])
    assert [error.line for error in report.errors] == [1, 1]
    assert report.errors[0].error.startswith("entries[1]: contains U+0000 at position 1")
    assert report.errors[1].error.startswith("entries[2]: does not fit in core memory 'user'")
    assert "limit of 1375" in report.errors[1].error
    assert service.core.state("user").entries == ["tea"]


def test_an_export_names_no_memory_committed_behind_the_newest_it_holds(
    service: MemoryService, clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On PostgreSQL a seq is taken when a row is written, and transactions commit in any
    # order: a memory may become visible after the memory lines were read with a seq below
    # the newest of them. Cut at that newest seq, its observation (and its reminder's
    # intention line) were still exported, naming a memory the export does not hold, and
    # the copy refused the entity's line. Hidden from the memory lines here, as it was.
    service.knowledge.create_entities(
        [{"name": "Alice", "entityType": "person", "observations": ["is nice"]}]
    )
    reminder = service.remind("buy milk", mention=["milk"])
    service.remember("committed first")
    late = {"is nice", "buy milk"}
    iterate = service.store.iterate
    monkeypatch.setattr(
        service.store,
        "iterate",
        lambda scope: (memory for memory in iterate(scope) if memory.content not in late),
    )
    lines = list(service.export())
    assert not any(reminder.id in line for line in lines)
    entities = [json.loads(line) for line in lines if '"recalld.entity"' in line]
    assert [(entity["name"], entity["observations"]) for entity in entities] == [("Alice", [])]
    with MemoryService.open(
        Settings(db=tmp_path / "copy.db", embedder="none"), clock=clock
    ) as copy:
        report = copy.import_lines(lines)
        assert report.errors == []
        assert [entity.name for entity in copy.knowledge.read_graph().entities] == ["Alice"]


def test_an_export_names_only_entities_it_holds_in_its_relations(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    # Entities are read page by page in key order, relations after them: an entity
    # declared meanwhile before the page read last was left out, but a relation naming
    # it was exported, and the copy refused the relation's line ("no entity named").
    service.knowledge.create_entities(
        [
            {"name": "Alice", "entityType": "person", "observations": []},
            {"name": "Bob", "entityType": "person", "observations": []},
        ]
    )
    service.knowledge.create_relations([{"from": "Alice", "to": "Bob", "relationType": "knows"}])
    lines = service.export()
    read = []
    for line in lines:
        read.append(line)
        if '"recalld.entity"' in line:
            break
    service.knowledge.create_entities([{"name": "Aaron", "entityType": "person"}])
    service.knowledge.create_relations([{"from": "Aaron", "to": "Alice", "relationType": "knows"}])
    read.extend(lines)
    relations = [json.loads(line) for line in read if '"recalld.relation"' in line]
    assert [(relation["from"], relation["to"]) for relation in relations] == [("Alice", "Bob")]
    with MemoryService.open(
        Settings(db=tmp_path / "copy.db", embedder="none"), clock=clock
    ) as copy:
        report = copy.import_lines(read)
        assert report.errors == []
        assert [entity.name for entity in copy.knowledge.read_graph().entities] == [
            "Alice",
            "Bob",
        ]


def test_an_export_whose_reminder_expired_since_imports_without_error(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    # Its memory line, expired by the time of the import, is skipped; its intention line
    # then named a memory the copy did not hold ("no memory ..."), an error for a
    # reminder that merely expired, and `recalld import` exited 1.
    reminder = service.remind("buy milk", mention=["milk"])
    service.update(reminder.id, ttl_seconds=60)
    lines = list(service.export())
    clock.advance(120)
    with MemoryService.open(
        Settings(db=tmp_path / "copy.db", embedder="none"), clock=clock
    ) as copy:
        report = copy.import_lines(lines)
        assert (report.created, report.skipped, report.errors) == (0, 2, [])
        assert copy.intentions(state="all") == []


def test_import_reads_times_as_remember_does(service: MemoryService) -> None:
    # A leap second and a lower-case "t" and "z" are RFC 3339, which remember takes.
    times = {"at": "2016-12-31t23:59:60z", "created_at": "2017-01-01T00:00:00+01:00"}
    report = service.import_lines([json.dumps({"id": "leap", "content": "a leap", **times})])
    assert report.errors == []
    imported = service.get("leap")
    remembered = service.get(service.remember("a leap too", at=times["at"]).id)
    assert imported.at == remembered.at == datetime.fromisoformat("2016-12-31T23:59:59.999999Z")
    assert imported.created_at == datetime.fromisoformat("2016-12-31T23:00:00Z")


def test_import_reads_seconds_since_1970_written_as_text(service: MemoryService) -> None:
    # Earlier versions imported "at": "1700000000" (pydantic reads it); reading import times
    # as remember does refused it (review 56a).
    line = {"id": "epoch", "content": "an epoch", "at": "1700000000", "created_at": "0"}
    report = service.import_lines([json.dumps(line)])
    assert report.errors == []
    imported = service.get("epoch")
    assert imported.at == datetime.fromisoformat("2023-11-14T22:13:20Z")
    assert imported.created_at == datetime.fromisoformat("1970-01-01T00:00:00Z")


def test_a_time_whose_offset_has_minutes_past_59_is_refused_everywhere(
    service: MemoryService,
) -> None:
    # fromisoformat reads "+05:75" as +06:15 (review 56a): refused as an `at`, a filter
    # bound and an import line's time, and nothing is written.
    bad = "2026-01-01T10:00:00+05:75"
    with pytest.raises(ValidationError, match=r"at: offset .* minutes out of range"):
        service.remember("dog walk", at=bad)
    with pytest.raises(ValidationError, match="since: offset"):
        service.search("dog walk", filters={"since": bad})
    report = service.import_lines([json.dumps({"id": "o", "content": "dog walk", "at": bad})])
    assert len(report.errors) == 1
    assert "minutes out of range" in report.errors[0].error
    assert service.stats().count == 0
