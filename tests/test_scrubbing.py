"""Scrubbing: every content-dropping path leaves no byte behind, or says it is pending.

Each test writes a marker, makes sure it reached the database files, drops it
through one path and scans every byte of the database files for it; the path
itself must scrub (the tests never checkpoint after the drop).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import apsw
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock

MARKER = "zqxscrubmarker4471"
# A valid geohash (no a, i, l or o) that nothing else in these databases spells.
PLACE_MARKER = "zqxs7k9mwv"


def database_bytes(db_path: Path) -> bytes:
    """Every byte of the database and its journals (the reserve file holds only zeros)."""
    data = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        candidate = Path(f"{db_path}{suffix}")
        if candidate.exists():
            data += candidate.read_bytes()
    return data


@pytest.fixture
def scrub_settings(db_path: Path) -> Settings:
    return Settings(db=db_path, embedder="none", scrub_wait_seconds=0.2, lock_retry_seconds=2)


@pytest.fixture
def memory(scrub_settings: Settings, clock: FakeClock) -> Iterator[MemoryService]:
    with MemoryService.open(scrub_settings, clock=clock) as opened:
        for index in range(30):
            opened.remember(f"unrelated filler memory number {index}", tags=["filler"])
        yield opened


def _written(memory: MemoryService, db_path: Path) -> None:
    memory.store.compact_after_forget()  # the marker is in the main file, not only in the log
    assert MARKER.encode() in database_bytes(db_path)


def _held_snapshot(db_path: Path) -> apsw.Connection:
    """Another process's reader in the middle of a read transaction."""
    reader = apsw.Connection(str(db_path))
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memories").fetchall()
    return reader


def test_forget_scrubs_before_it_returns(memory: MemoryService, db_path: Path) -> None:
    receipt = memory.remember(f"the secret is {MARKER}", title=MARKER, tags=[f"t{MARKER}"])
    _written(memory, db_path)
    forgotten = memory.forget(receipt.id)
    assert (forgotten.deleted, forgotten.scrubbed, forgotten.scrub) == (True, True, "done")
    assert MARKER.encode() not in database_bytes(db_path)
    assert memory.stats().pending_scrubs == 0


def test_forget_behind_a_reader_says_pending_then_finishes_in_the_background(
    memory: MemoryService, db_path: Path
) -> None:
    receipt = memory.remember(f"the secret is {MARKER}")
    _written(memory, db_path)
    reader = _held_snapshot(db_path)
    forgotten = memory.forget(receipt.id)
    assert (forgotten.deleted, forgotten.scrubbed, forgotten.scrub) == (True, False, "pending")
    assert memory.stats().pending_scrubs == 1
    assert memory.status().pending_scrubs == 1
    reader.execute("COMMIT")  # the reader lets go of its snapshot
    reader.close()
    assert memory.scrubber.wait_until_done(timeout=30)
    assert MARKER.encode() not in database_bytes(db_path)
    assert memory.stats().pending_scrubs == 0


def test_a_pending_scrub_is_finished_by_the_next_process_to_open(
    scrub_settings: Settings, clock: FakeClock, db_path: Path
) -> None:
    # Another program keeps the file open (no transaction): closing the reader is then not
    # the last close, which would let SQLite checkpoint by itself.
    with MemoryService.open(scrub_settings, clock=clock) as first:
        receipt = first.remember(f"the secret is {MARKER}")
        _written(first, db_path)
        bystander = apsw.Connection(str(db_path))
        bystander.execute("SELECT count(*) FROM memories").fetchall()
        reader = _held_snapshot(db_path)
        assert first.forget(receipt.id).scrub == "pending"
    reader.execute("COMMIT")
    reader.close()
    assert MARKER.encode() in database_bytes(db_path)  # nobody was left to finish it
    with MemoryService.open(scrub_settings, clock=clock) as second:
        assert second.stats().pending_scrubs == 0
        assert MARKER.encode() not in database_bytes(db_path)
    bystander.close()


def _overwrite_key(memory: MemoryService) -> None:
    memory.remember(f"old value {MARKER}", key="k")
    memory.remember("new value", key="k")


def _update_content(memory: MemoryService) -> None:
    receipt = memory.remember(f"old content {MARKER}", title=f"old title {MARKER}")
    memory.update(receipt.id, content="new content", title="new title")


def _update_meta(memory: MemoryService) -> None:
    receipt = memory.remember("with meta", meta={"note": MARKER})
    memory.update(receipt.id, meta={"note": "replaced"})


def _update_speaker(memory: MemoryService) -> None:
    receipt = memory.remember("said in the meeting", speaker=f"Dr {MARKER}")
    memory.update(receipt.id, speaker="someone else")


def _update_place(memory: MemoryService) -> None:
    # A given geohash is stored as given: the marker here is the place itself.
    receipt = memory.remember("where it happened", place={"geohash": PLACE_MARKER})
    memory.update(receipt.id, place={"lat": 1.5, "lon": 2.5})


def _core_remove(memory: MemoryService) -> None:
    memory.core.apply("user", [{"action": "add", "content": f"Name: {MARKER}"}])
    memory.core.apply("user", [{"action": "add", "content": "Prefers tea"}])
    memory.core.apply("user", [{"action": "remove", "old_text": MARKER}])


def _core_patch(memory: MemoryService) -> None:
    memory.core.apply("memory", [{"action": "add", "content": f"Host is {MARKER}.local"}])
    memory.core.apply(
        "memory", [{"action": "patch", "old_text": f"{MARKER}.local", "content": "db.local"}]
    )


def _ttl_purge(memory: MemoryService) -> None:
    memory.remember(f"ephemeral {MARKER}", ttl_seconds=5)


def _import_replace(memory: MemoryService) -> None:
    receipt = memory.remember(f"imported {MARKER}")
    line = json.loads(next(line for line in memory.export() if receipt.id in line))
    line.update(content="replaced by a newer import", updated_at="2030-01-01T00:00:00Z")
    memory.import_lines([json.dumps(line)])


def _expired_key_rewritten(memory: MemoryService) -> None:
    memory.remember(f"old expiring value {MARKER}", key="e", ttl_seconds=5)


PATHS: dict[str, Callable[[MemoryService], None]] = {
    "key overwrite": _overwrite_key,
    "update content": _update_content,
    "update meta": _update_meta,
    "update speaker": _update_speaker,
    "update place": _update_place,
    "core remove": _core_remove,
    "core patch": _core_patch,
    "import replace": _import_replace,
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_content_dropping_path_scrubs(
    memory: MemoryService, db_path: Path, path: str
) -> None:
    dropped = PATHS[path]
    # The write that stores the marker and the write that drops it are one step here;
    # check that the marker reached the files in between by replaying the first half.
    dropped(memory)
    data = database_bytes(db_path)
    assert MARKER.encode() not in data
    assert PLACE_MARKER.encode() not in data
    assert memory.stats().pending_scrubs == 0


def test_paths_really_wrote_the_marker_first(memory: MemoryService, db_path: Path) -> None:
    """The byte scans above would pass vacuously if the marker never reached a file."""
    memory.remember(f"plain {MARKER}")
    memory.core.apply("user", [{"action": "add", "content": f"Name: {MARKER}"}])
    memory.remember("somewhere", speaker=MARKER, place={"geohash": PLACE_MARKER})
    _written(memory, db_path)
    assert PLACE_MARKER.encode() in database_bytes(db_path)


def test_ttl_purge_scrubs(memory: MemoryService, db_path: Path, clock: FakeClock) -> None:
    _ttl_purge(memory)
    _expired_key_rewritten(memory)
    _written(memory, db_path)
    clock.advance(10)
    memory.remember("new value after expiry", key="e")
    assert memory.purge_expired() == 1
    assert memory.scrubber.wait_until_done(timeout=30)
    assert MARKER.encode() not in database_bytes(db_path)


def test_an_import_over_expired_memories_scrubs_them(
    memory: MemoryService, db_path: Path, clock: FakeClock
) -> None:
    # An import line taking the id or key of an expired memory (not purged yet) deletes
    # it, but only an import that updated something scrubbed: these created, so the old
    # text stayed in the files, a scrub pending until some later write or open.
    memory.remember(f"expiring note {MARKER}", id="note-1", ttl_seconds=5)
    memory.remember(f"expiring value {MARKER}", key="door.code", ttl_seconds=5)
    _written(memory, db_path)
    clock.advance(10)
    lines = [
        json.dumps({"id": "note-1", "content": "written again"}),
        json.dumps({"id": "code-2", "key": "door.code", "content": "a new code"}),
    ]
    assert (memory.import_lines(lines).created, memory.stats().pending_scrubs) == (2, 0)
    assert MARKER.encode() not in database_bytes(db_path)


def test_overwrite_behind_a_reader_reports_pending(memory: MemoryService, db_path: Path) -> None:
    memory.remember(f"old value {MARKER}", key="k")
    _written(memory, db_path)
    reader = _held_snapshot(db_path)
    receipt = memory.remember("new value", key="k")
    assert (receipt.status, receipt.scrub) == ("overwritten", "pending")
    reader.execute("COMMIT")
    reader.close()
    assert memory.scrubber.wait_until_done(timeout=30)
    assert MARKER.encode() not in database_bytes(db_path)


CAFE = {"lat": 48.86420, "lon": 2.34750}


def test_a_rewritten_memory_leaves_no_old_text_in_the_pending_queue(
    memory: MemoryService, db_path: Path, clock: FakeClock
) -> None:
    # The queue keeps a prompt line (and a reminder its action) from when the memory fired;
    # a write that changes the memory rewrites that copy, so the scrub finds nothing old.
    yesterday = (clock.now - timedelta(days=1)).isoformat()
    fired = memory.recollections.remember(f"vault code {MARKER}", place=CAFE, at=yesterday)
    memory.recollections.sense(memory.recollections.cue(place=CAFE, at=clock.now.isoformat()))
    intention = memory.remind(f"call the bank about {MARKER}", at="in 1 minute")
    clock.advance(120)
    assert len(memory.intentions.run_due()) == 1
    queued = memory.recollections.pending(drain=False)
    assert [item.kind for item in queued] == ["recollection", "reminder"]
    assert all(MARKER in item.prompt_line for item in queued)

    memory.update(fired.id, content="nothing here", title="the vault")
    memory.update(intention.id, content="call the dentist")
    assert memory.stats().pending_scrubs == 0
    assert MARKER.encode() not in database_bytes(db_path)
    recollection, reminder = memory.recollections.pending()
    assert recollection.prompt_line.endswith("] the vault: nothing here")
    assert reminder.prompt_line.startswith("[reminder] call the dentist (")
    assert reminder.reminder is not None
    assert reminder.reminder.action == "call the dentist"


def test_a_write_over_an_expired_key_or_id_scrubs_it(
    memory: MemoryService, db_path: Path, clock: FakeClock, tmp_path: Path
) -> None:
    # The write deletes the expired memory (not purged yet) holding its key or id, but
    # its receipt said nothing was dropped: remember and a mem0 import left the old
    # text in the files, a scrub pending until some later write or open.
    memory.remember(f"expiring value {MARKER}", key="door.code", ttl_seconds=5)
    memory.remember(f"expiring note {MARKER}", id="mem0-abc", ttl_seconds=5)
    _written(memory, db_path)
    clock.advance(10)
    receipt = memory.remember("a new code", key="door.code")
    assert (receipt.status, receipt.scrub) == ("created", "done")
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps({"results": [{"id": "abc", "memory": "written again"}]}))
    report = memory.import_file(source, format="mem0")
    assert (report.created, report.errors) == (1, [])
    assert memory.stats().pending_scrubs == 0
    assert MARKER.encode() not in database_bytes(db_path)
