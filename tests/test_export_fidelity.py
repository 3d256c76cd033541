"""An export imported into an empty database exports again as the same file, line for line,
on each store and from one store to the other (adversarial pass a63)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.recollection.cue import Cue
from recalld.service import MemoryService
from recalld.store.intentions import ReminderDraft
from tests.conftest import FakeClock


def _fill(service: MemoryService) -> None:
    """Notes and reminders interleaved, in two namespaces, with text that must not change."""
    service.remember("before the reminders\r\nwith a CRLF and trailing spaces  ", tags=["B", "a"])
    service.remind("call the plumber", mention=["plumber"])
    service.remember("e\u0301 written apart, \u00e9 written whole", key="spelling")
    service.remind("water the plants", at="tomorrow at 9", every="weekly", namespace="home")
    service.remember("a note at home", namespace="home", at="2026-01-02T03:04:05.123456+05:30")
    service.remind("buy bread", place={"lat": 48.85, "lon": 2.35}, radius_m=100)
    service.remember("after the reminders", title="last  ")
    service.core.apply("memory", [{"action": "add", "content": "the user likes tea"}])


def _open(db: Path | str, clock: FakeClock) -> MemoryService:
    return MemoryService.open(Settings(db=db, embedder="none", graph_extractor="none"), clock=clock)


def _fresh_database(request: pytest.FixtureRequest, any_database: Path | str) -> Path | str:
    """Another empty database on the same store as ``any_database``."""
    if isinstance(any_database, Path):
        return any_database.with_name("copy.db")
    new_database: Callable[[], str] = request.getfixturevalue("postgres_database")
    return new_database()


def test_an_imported_export_exports_as_the_same_lines(
    request: pytest.FixtureRequest, any_database: Path | str, clock: FakeClock
) -> None:
    # A reminder's memory line was exported in its seq order among the notes, but an
    # import writes it with its recalld.intention line, after every note: the second
    # export listed the reminders after the notes, so the two files differed.
    with _open(any_database, clock) as source:
        _fill(source)
        first = list(source.export(["default", "home"]))
    assert sum('"recalld.intention"' in line for line in first) == 3
    with _open(_fresh_database(request, any_database), clock) as copy:
        report = copy.import_lines(first)
        assert report.errors == []
        second = list(copy.export(["default", "home"]))
    assert second == first


@pytest.mark.postgres
def test_sqlite_to_postgresql_and_back_keeps_every_line(
    postgres_url: str, tmp_path: Path, clock: FakeClock
) -> None:
    with _open(tmp_path / "source.db", clock) as source:
        _fill(source)
        # Fired and not handed out: its channels and why came back in jsonb's key order.
        source.remind("buy milk", mention=["grocery"], tags=["shopping"])
        fired = source.recollections.sense(Cue(text="grocery", tags=("shopping",)))
        assert [item.reminder and item.reminder.action for item in fired] == ["buy milk"]
        first = list(source.export(["default", "home"]))
    assert sum('"recalld.pending"' in line for line in first) == 1
    with _open(postgres_url, clock) as middle:
        assert middle.import_lines(first).errors == []
        second = list(middle.export(["default", "home"]))
    with _open(tmp_path / "back.db", clock) as back:
        assert back.import_lines(second).errors == []
        third = list(back.export(["default", "home"]))
    assert second == first
    assert third == first


def test_a_reminder_memory_line_comes_with_its_intention_line(
    service: MemoryService,
) -> None:
    reminder = service.remind("call the plumber", mention=["plumber"])
    service.remember("a later note")
    lines = [json.loads(line) for line in service.export()]
    where = [index for index, line in enumerate(lines) if line["id"] == reminder.id]
    assert len(where) == 2
    memory_line, intention_line = (lines[index] for index in where)
    assert where[1] == where[0] + 1
    assert (memory_line.get("type"), memory_line["kind"]) == (None, "intention")
    assert intention_line["type"] == "recalld.intention"


def test_an_older_keyed_line_without_id_leaves_a_newer_memory_as_it_is(
    service: MemoryService, clock: FakeClock
) -> None:
    # A line without an id overwrote the memory under its key whatever its time: the
    # stored text went back to the older one, and its created_at and updated_at to 2020
    # (a line with an id replaces a memory only when it is newer).
    stored = service.remember("the region is australiaeast", key="region")
    older = {
        "content": "the region is westeurope",
        "key": "region",
        "created_at": "2020-01-01T00:00:00Z",
        "updated_at": "2020-01-02T00:00:00Z",
    }
    report = service.import_lines([json.dumps(older)])
    assert (report.created, report.updated, report.unchanged, report.errors) == (0, 0, 1, [])
    kept = service.get(key="region")
    assert (kept.id, kept.content) == (stored.id, "the region is australiaeast")
    assert (kept.created_at, kept.updated_at) == (clock.now, clock.now)
    newer = {**older, "updated_at": "2030-01-01T00:00:00Z"}
    assert service.import_lines([json.dumps(newer)]).updated == 1
    assert service.get(key="region").content == "the region is westeurope"


def test_a_reminder_fired_and_not_yet_delivered_is_delivered_from_the_copy(
    request: pytest.FixtureRequest, any_database: Path | str, clock: FakeClock
) -> None:
    # The scheduler fired it (state done) and queued it for pending; the export carried
    # its state but not the queued item: the copy never fired it again, nor handed it out.
    with _open(any_database, clock) as source:
        source.remind("take the pills", at=(clock.now + timedelta(minutes=5)).isoformat())
        fired_at = clock.now + timedelta(minutes=6)
        assert [item.memory.content for item in source.intentions.run_due(fired_at)] == [
            "take the pills"
        ]
        lines = list(source.export())
        queued = source.recollections.pending(drain=False)
    with _open(_fresh_database(request, any_database), clock) as copy:
        report = copy.import_lines(lines)
        assert report.errors == []
        assert copy.intentions.counts() == {"done": 1}
        assert list(copy.export()) == lines
        delivered = copy.recollections.pending(drain=True)
        assert [item.model_dump() for item in delivered] == [item.model_dump() for item in queued]
        assert not any('"recalld.pending"' in line for line in copy.export())
        # Importing the file again queues nothing again: it was delivered here.
        again = copy.import_lines(lines)
        assert (again.created, again.errors) == (0, [])
        assert copy.recollections.pending(drain=True) == []


def test_a_queued_reminder_line_of_the_wrong_shape_is_refused_naming_the_field(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    service.remind("take the pills", at=(clock.now + timedelta(minutes=5)).isoformat())
    service.intentions.run_due(clock.now + timedelta(minutes=6))
    lines = [json.loads(line) for line in service.export()]
    queued = lines[-1]
    assert queued["type"] == "recalld.pending"
    wrong = [
        ({**queued, "score": 2}, "score:"),
        ({**queued, "channels": {"time": "1"}}, "channels.time:"),
        (
            {**queued, "details": {**queued["details"], "intention_id": "other"}},
            "details.intention_id:",
        ),
        ({**queued, "fired_at": "yesterday-ish"}, "fired_at:"),
    ]
    for line, field in wrong:
        with _open(tmp_path / f"copy-{field}.db", clock) as copy:
            report = copy.import_lines([json.dumps(item) for item in [*lines[:-1], line]])
            assert [error.error.split(" ")[0] for error in report.errors] == [field]
            assert report.errors[0].line == len(lines)
            assert copy.recollections.pending(drain=False) == []
    # Alone, without the reminder it names (refused, or never sent): not counted unchanged.
    with _open(tmp_path / "alone.db", clock) as copy:
        report = copy.import_lines([json.dumps(queued)])
        assert [error.error.split(" ")[0] for error in report.errors] == ["id:"]
        assert report.unchanged == 0


def test_a_reminder_that_fired_after_an_earlier_copy_is_delivered_from_that_copy(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    # The copy held the reminder active; the source fired it since: the newer export moves
    # the copy's to done, and its queued item must come with it (or nobody hands it out).
    service.remind("take the pills", at=(clock.now + timedelta(minutes=5)).isoformat())
    with _open(tmp_path / "copy.db", clock) as copy:
        assert copy.import_lines(list(service.export())).errors == []
        service.intentions.run_due(clock.now + timedelta(minutes=6))
        report = copy.import_lines(list(service.export()))
        assert report.errors == []
        assert copy.intentions.counts() == {"done": 1}
        delivered = copy.recollections.pending(drain=True)
        assert [item.memory.content for item in delivered] == ["take the pills"]
        assert copy.import_lines(list(service.export())).errors == []
        assert copy.recollections.pending(drain=True) == []


def test_a_queued_reminder_stored_in_another_shape_still_gets_its_line(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    # Every row gets its line: one the export cannot read as a reminder's why is written
    # as stored (not a failed export), and the importer names what is wrong with it.
    reminder = service.remind("call the plumber", mention=["plumber"])
    seq = service.get(reminder.id).seq
    draft = ReminderDraft(seq, "default", 1.0, {"mention": 1.0}, "p", {"why": "plumber"})
    service.store.intentions.session(lambda session: session.queue(draft, clock.now))
    lines = [json.loads(line) for line in service.export()]
    assert lines[-1]["type"] == "recalld.pending"
    assert lines[-1]["details"] == {"why": "plumber"}
    with _open(tmp_path / "copy.db", clock) as copy:
        report = copy.import_lines([json.dumps(line) for line in lines])
        assert [error.error.split(" ")[0] for error in report.errors] == ["details.intention_id:"]
        assert copy.intentions.counts() == {"active": 1}


@pytest.mark.parametrize(
    ("given", "refusal"),
    [
        ({"content": "x" * 70_000}, "content: is 70000 bytes; the limit is 65536 bytes"),
        ({"tags": [f"t{number}" for number in range(65)]}, "tags: 65 tags; the limit is 64"),
        ({"title": "a\x00b"}, "title:"),
    ],
)
def test_an_older_keyed_line_without_id_past_a_limit_is_refused_naming_it(
    service: MemoryService, given: dict[str, object], refusal: str
) -> None:
    # Review of pass a63: the older time was read before the fields were checked, so a line
    # past a limit was counted unchanged (a line with an id is refused naming the field).
    service.remember("the region is australiaeast", key="region")
    older = {"content": "westeurope", "key": "region", "updated_at": "2020-01-02T00:00:00Z"}
    report = service.import_lines([json.dumps({**older, **given})])
    assert (report.unchanged, len(report.errors)) == (0, 1)
    assert report.errors[0].error.startswith(refusal)
    assert service.get(key="region").content == "the region is australiaeast"
