"""An import the disk fills during says where it stopped and what it kept (adversarial
pass c63): it writes a chunk of lines per transaction, so the chunks before the full one
stay imported, while the error said "the disk holding the database is full; nothing was
written"; and importing the file again skips what is there."""

from __future__ import annotations

import json
import re

import pytest

from recalld.errors import DiskFullError
from recalld.service import MemoryService
from recalld.transfer import IMPORT_CHUNK_LINES

LINES = [
    json.dumps({"content": f"imported memory number {index}: " + "words " * 40})
    for index in range(IMPORT_CHUNK_LINES + 200)
]


def test_an_import_stopped_by_a_full_disk_says_what_it_kept(service: MemoryService) -> None:
    connection = service.store._database.connection()  # type: ignore[attr-defined]

    def fill_the_disk(_: int) -> None:
        # After the first chunk: the file may not grow by one page more (SQLITE_FULL, as
        # a full disk is to SQLite).
        (pages,) = connection.execute("PRAGMA page_count").fetchone()
        connection.execute(f"PRAGMA max_page_count = {pages}")

    with pytest.raises(DiskFullError) as stopped:
        service.import_lines(LINES, progress=fill_the_disk)
    message = str(stopped.value)
    assert f"stopped at line {IMPORT_CHUNK_LINES + 1}" in message, message
    assert f"{IMPORT_CHUNK_LINES} created" in message
    assert "nothing was written" in message  # of the chunk that met the full disk
    assert service.stats().count == IMPORT_CHUNK_LINES
    connection.execute("PRAGMA max_page_count = 4294967294")  # room again
    again = service.import_lines(LINES)
    assert (again.created, again.skipped) == (200, IMPORT_CHUNK_LINES)
    assert service.stats().count == len(LINES)


def test_an_import_the_disk_refuses_from_its_first_line_says_nothing_was_written(
    service: MemoryService,
) -> None:
    connection = service.store._database.connection()  # type: ignore[attr-defined]
    (pages,) = connection.execute("PRAGMA page_count").fetchone()
    connection.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(DiskFullError) as refused:
        service.import_lines(LINES)
    assert "stopped at line" not in str(refused.value)
    assert service.stats().count == 0


def test_an_import_the_disk_fills_after_its_memories_says_they_are_kept(
    service: MemoryService,
) -> None:
    """The lines written after every memory (here the declared graph) met the full disk:
    the error said "nothing was written" while every memory line was imported and kept."""
    memories = [json.dumps({"content": f"a memory before the graph {index}"}) for index in range(5)]
    entities = [
        json.dumps({"type": "recalld.entity", "name": f"Person {index}", "entity_type": "person"})
        for index in range(300)
    ]
    connection = service.store._database.connection()  # type: ignore[attr-defined]

    def fill_the_disk(_: int) -> None:  # after the last chunk of memory lines
        (pages,) = connection.execute("PRAGMA page_count").fetchone()
        connection.execute(f"PRAGMA max_page_count = {pages}")

    with pytest.raises(DiskFullError) as stopped:
        service.import_lines([*memories, *entities], progress=fill_the_disk)
    message = str(stopped.value)
    where = re.search(r"stopped at line (\d+)", message)
    assert where is not None, message
    assert int(where.group(1)) > len(memories), message
    assert "Every line written before it is imported and kept" in message
    assert service.stats().count == len(memories)
