"""An export's ``recalld.pending`` lines under attack: ids of the wrong type, a line given
twice, a forget racing the import (review of pass a63)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.base import StoreTransaction
from tests.conftest import FakeClock

CORE = {"type": "recalld.core", "target": "memory", "entries": ["the user likes tea"]}


def _open(db: Path | str, clock: FakeClock) -> MemoryService:
    return MemoryService.open(Settings(db=db, embedder="none", graph_extractor="none"), clock=clock)


def _fired_export(service: MemoryService, clock: FakeClock) -> tuple[str, list[str]]:
    """A reminder the scheduler fired and nobody collected: its id and the export's lines."""
    reminder = service.remind("take the pills", at=(clock.now + timedelta(minutes=5)).isoformat())
    service.intentions.run_due(clock.now + timedelta(minutes=6))
    lines = list(service.export())
    assert json.loads(lines[-1])["type"] == "recalld.pending"
    return reminder.id, lines


@pytest.mark.parametrize("given", [["x"], {"id": "x"}, 7, None])
def test_a_pending_line_whose_id_is_not_text_is_a_bad_line(
    service: MemoryService, given: Any
) -> None:
    # A list or an object as the id was looked up in a set of (namespace, id) pairs before
    # it was checked: "unhashable type", and the import ended there (the core line after
    # it, and the report, were lost).
    line = {
        "type": "recalld.pending",
        "id": given,
        "fired_at": "2026-10-25T16:20:00Z",
        "score": 1.0,
        "channels": {},
        "details": {},
    }
    report = service.import_lines(['{"content": "a note"}', json.dumps(line), json.dumps(CORE)])
    assert [(error.line, error.error.split(":")[0]) for error in report.errors] == [(2, "id")]
    assert report.details == {"memories": 1, "core entries": 1}


def test_a_pending_line_given_twice_is_queued_once(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    # The same export twice in one file (`cat export.jsonl export.jsonl`): every memory line
    # of the second copy is refused as a repeat, but each pending line was queued again,
    # so `pending` handed the same reminder out twice.
    reminder_id, lines = _fired_export(service, clock)
    with _open(tmp_path / "copy.db", clock) as copy:
        report = copy.import_lines([*lines, *lines])
        pending = len(lines)
        assert f"fired_at: repeats line {pending} (reminder {reminder_id!r}" in str(report.errors)
        assert report.details["queued reminders"] == 1
        delivered = copy.recollections.pending(drain=True)
        assert [item.memory.id for item in delivered] == [reminder_id]


def test_a_forget_racing_the_import_of_a_pending_line_does_not_end_the_import(
    request: pytest.FixtureRequest, any_database: Path | str, clock: FakeClock, tmp_path: Path
) -> None:
    # The reminder was looked up in one transaction and queued in another: forgotten in
    # between, the queued item named a memory no longer there, a foreign-key failure that
    # ended the whole import (StorageError), the core line after it never imported.
    with _open(tmp_path / "source.db", clock) as source:
        reminder_id, lines = _fired_export(source, clock)
    with _open(any_database, clock) as copy:
        store = copy.store
        original = store.transaction
        finds: list[str] = []

        @contextmanager
        def racing() -> Iterator[StoreTransaction]:
            with original() as tx:
                found = tx.find

                def find(namespace: str, **given: Any) -> Any:
                    if given.get("id") == reminder_id:
                        finds.append(reminder_id)
                    return found(namespace, **given)

                tx.find = find  # type: ignore[method-assign]
                yield tx
            # Its memory line, its intention line, then its pending line looked it up:
            # the forget comes right after that lookup's transaction.
            if len(finds) == 3:
                finds.append("forgotten")
                store.transaction = original  # type: ignore[method-assign]
                assert copy.forget(reminder_id)

        store.transaction = racing  # type: ignore[method-assign]
        report = copy.import_lines([*lines, json.dumps(CORE)])
        assert finds[-1] == "forgotten"
        assert report.errors == []
        assert report.details["core entries"] == 1
        assert copy.recollections.pending(drain=True) == []
        assert copy.intentions.counts() == {}


def test_a_pending_line_looks_its_reminder_up_where_it_is_queued(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    # The other order of the race: forgotten before the line is read, it is refused naming
    # the id, and the rest of the file imports.
    reminder_id, lines = _fired_export(service, clock)
    with _open(tmp_path / "copy.db", clock) as copy:
        assert copy.import_lines(lines[:-1]).errors == []
        assert copy.forget(reminder_id)
        report = copy.import_lines([lines[-1], json.dumps(CORE)])
        assert [error.error for error in report.errors] == [
            f"id: no reminder {reminder_id!r} in 'default'"
        ]
        assert report.details == {"core entries": 1}


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        ({"channels": {"x" * 300: 1.0}}, "channels: a channel is a trigger type"),
        ({"channels": {"time": 1e300}}, "channels.time: must be between 0 and 1, got 1e+300"),
        ({"channels": {"time": -1}}, "channels.time: must be between 0 and 1"),
        ({"why": "x" * 70_000}, "details.why: holds 70000 bytes of text; the limit is 65536"),
        ({"trigger": "telepathy"}, "details.matched.0.trigger: must be a trigger type"),
        ({"detail": "x" * 70_000}, "details.matched: holds 70000 bytes of text; the limit is"),
        ({"matched": 2_000}, "details.matched: holds 80000 bytes of text; the limit is"),
    ],
)
def test_a_pending_line_no_firing_writes_is_refused_naming_the_field(
    service: MemoryService, clock: FakeClock, tmp_path: Path, change: dict[str, Any], refusal: str
) -> None:
    # A firing gives each trigger that held a channel of 1.0, and a why of a few words:
    # a line with a channel named anything, scored 1e300, or a why or matches of 60 MB
    # (handed out in the prompt line and by pending) was queued as it came.
    _, lines = _fired_export(service, clock)
    queued = json.loads(lines[-1])
    details = queued["details"]
    if "channels" in change:
        queued["channels"] = change["channels"]
    elif "why" in change:
        details["why"] = change["why"]
    elif "matched" in change:  # many small matches: 40 bytes each
        details["matched"] = [{"trigger": "time", "detail": "x" * 40}] * change["matched"]
    else:
        details["matched"] = [{**details["matched"][0], **change}]
    with _open(tmp_path / "copy.db", clock) as copy:
        report = copy.import_lines([*lines[:-1], json.dumps(queued)])
        assert [error.error[: len(refusal)] for error in report.errors] == [refusal]
        assert copy.recollections.pending(drain=False) == []
