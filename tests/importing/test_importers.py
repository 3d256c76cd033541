"""Importers: every format's fixture (written from its published description), auto-detection,
the report's counts and numbered errors, and idempotent re-imports."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from recalld.errors import ValidationError
from recalld.importing import detect_format
from recalld.model import Filters
from recalld.service import MemoryService
from tests.conftest import FakeClock

FIXTURES = Path(__file__).parent.parent / "fixtures" / "imports"


def _contents(service: MemoryService, namespace: str | None = None) -> list[str]:
    page = service.list_memories(limit=100, namespace=namespace)
    return sorted(memory.content for memory in page.memories)


def _lines(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def test_import_recalld_lines_without_ids(service: MemoryService) -> None:
    report = service.import_file(FIXTURES / "recalld.jsonl")
    assert report.format == "recalld"
    assert report.created == 3
    assert [error.line for error in report.errors] == [4, 5]
    assert "Deploys happen on Tuesdays" in _contents(service)
    assert service.get("fixture-1").content == "The build cache lives on the shared volume"
    again = service.import_file(FIXTURES / "recalld.jsonl")
    assert again.created == 0  # the id-less lines repeat stored memories: nothing new
    assert len(_contents(service)) == 3


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc")
def test_import_of_an_unreadable_file_names_the_file(service: MemoryService) -> None:
    # Reading /proc/self/mem from its start fails with an I/O error.
    with pytest.raises(ValidationError) as raised:
        service.import_file(Path("/proc/self/mem"))
    assert raised.value.field == "file"
    assert "cannot read /proc/self/mem" in str(raised.value)
    assert _contents(service) == []


def test_import_mem0_maps_user_and_agent_ids_to_namespaces(service: MemoryService) -> None:
    report = service.import_file(FIXTURES / "mem0.json")
    assert report.format == "mem0"
    assert report.created == 3
    assert [error.item for error in report.errors] == [4]
    assert _contents(service, "user:alice") == ["Prefers tea over coffee"]
    assert _contents(service, "agent:writer") == ["Summarises reports in three bullet points"]
    assert _contents(service) == ["Keeps a vegetable garden"]
    tea = service.list_memories(namespace="user:alice").memories[0]
    assert "preferences" in tea.tags
    writer = service.list_memories(namespace="agent:writer").memories[0]
    assert "run:r42" in writer.tags
    again = service.import_file(FIXTURES / "mem0.json")
    assert (again.created, again.updated) == (0, 0)


def test_import_hermes_files_into_core_memory(service: MemoryService) -> None:
    report = service.import_file(FIXTURES / "MEMORY.md")
    assert report.format == "hermes"
    entries = service.core.state("memory").entries
    assert len(entries) == 3
    assert "Tests run with make test; they must pass before every commit" in entries
    service.import_file(FIXTURES / "USER.md")
    assert service.core.state("user").entries == [
        "Name: Sam; prefers short answers",
        "Works in UTC+10",
    ]
    again = service.import_file(FIXTURES / "MEMORY.md")
    assert again.created == 0
    assert len(service.core.state("memory").entries) == 3


def test_import_hermes_reports_what_does_not_fit(tmp_path: Path, service: MemoryService) -> None:
    limit = service.core.limit("user")
    big = tmp_path / "USER.md"
    big.write_text("short entry\n§\n" + "x" * (limit + 1) + "\n", encoding="utf-8")
    report = service.import_file(big)
    assert report.created == 1
    assert len(report.errors) == 1
    assert report.errors[0].line == 3
    assert service.core.state("user").entries == ["short entry"]


def test_import_hermes_directory_with_a_file_that_is_not_utf8_writes_nothing(
    tmp_path: Path, service: MemoryService
) -> None:
    (tmp_path / "USER.md").write_text("Prefers tea\n", encoding="utf-8")
    (tmp_path / "MEMORY.md").write_bytes("Caf\u00e9 on Fridays\n".encode("latin-1"))
    with pytest.raises(ValidationError, match=r"^MEMORY\.md: is not UTF-8 text"):
        service.import_file(tmp_path)
    assert service.core.state("user").entries == []


def test_import_hermes_directory_finds_its_files_whatever_their_case(
    tmp_path: Path, service: MemoryService
) -> None:
    # A file named memory.md given alone was read as Hermes; in a directory it was
    # "holds neither MEMORY.md nor USER.md".
    (tmp_path / "user.md").write_text("Prefers tea\n", encoding="utf-8")
    (tmp_path / "Memory.md").write_text("Deploys on Fridays\n", encoding="utf-8")
    report = service.import_file(tmp_path)
    assert (report.format, report.created) == ("hermes", 2)
    assert service.core.state("user").entries == ["Prefers tea"]
    assert service.core.state("memory").entries == ["Deploys on Fridays"]


def test_import_hermes_directory_with_two_spellings_of_one_file_is_refused(
    tmp_path: Path, service: MemoryService
) -> None:
    (tmp_path / "MEMORY.md").write_text("One\n", encoding="utf-8")
    (tmp_path / "memory.md").write_text("Two\n", encoding="utf-8")
    with pytest.raises(ValidationError, match=r"holds both MEMORY\.md and memory\.md"):
        service.import_file(tmp_path)
    assert service.core.state("memory").entries == []


def test_import_chatgpt_follows_the_shown_branch(service: MemoryService) -> None:
    report = service.import_file(FIXTURES / "chatgpt_conversations.json")
    assert report.format == "chatgpt"
    assert [error.item for error in report.errors] == [2]
    turns = service.list_memories(filters=Filters(kind="turn"), limit=100).memories
    contents = [turn.content for turn in turns]
    assert "Lettuce, spinach and kale tolerate partial shade." in contents
    assert "An answer the user regenerated." not in contents  # not on the current branch
    assert "search results" not in contents  # tool output is skipped unless asked for
    assert {turn.source for turn in turns} == {
        "chatgpt://conversation/c0ffee00-0000-4000-8000-000000000001"
    }
    again = service.import_file(FIXTURES / "chatgpt_conversations.json")
    assert again.created == 0


def test_import_claude_through_ingestion(service: MemoryService) -> None:
    report = service.import_file(FIXTURES / "claude_conversations.json")
    assert report.format == "claude"
    assert [error.item for error in report.errors] == [2]
    turns = service.list_memories(filters=Filters(kind="turn"), limit=100).memories
    assert {turn.content for turn in turns} == {
        "How long should rye dough proof?",
        "Rye dough usually proofs for two to three hours.",
    }
    with_tools = service.import_file(FIXTURES / "claude_conversations.json", include_tools=True)
    assert with_tools.created == 1  # the tool_use block, now kept


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("recalld.jsonl", "recalld"),
        ("mem0.json", "mem0"),
        ("MEMORY.md", "hermes"),
        ("chatgpt_conversations.json", "chatgpt"),
        ("claude_conversations.json", "claude"),
        ("../mcp_memory.jsonl", "mcp-memory"),
    ],
)
def test_detect_format_by_content(name: str, expected: str) -> None:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    # By content alone: the file name is not given.
    assert detect_format(text, None if expected != "hermes" else "notes.md") == expected


def test_detect_format_refuses_what_it_cannot_tell() -> None:
    with pytest.raises(ValidationError) as caught:
        detect_format('{"unrelated": true}')
    assert caught.value.field == "format"
    # JSON nested past the parser's stack is told apart from nothing either (it raised
    # RecursionError, a server error on POST /v1/import).
    for deep in ("[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000):
        with pytest.raises(ValidationError) as caught:
            detect_format(deep)
        assert caught.value.field == "format"


def test_import_of_deeply_nested_json_reports_the_line(service: MemoryService) -> None:
    report = service.import_text("[" * 5000 + "]" * 5000)
    assert (report.format, report.created) == ("recalld", 0)
    [error] = report.errors
    assert error.line == 1
    assert "nested deeper than" in error.error
    assert service.stats().count == 0


def test_import_of_a_number_too_long_to_convert_is_a_bad_line(service: MemoryService) -> None:
    # Python refuses to convert an integer of more than 4,300 digits: that ValueError
    # ended the whole import (and its message told the caller to change sys settings).
    huge = "1" * 5000
    lines = service.import_text(f'{{"content": "x", "salience": {huge}}}\n{{"content": "kept"}}\n')
    graph = service.import_text(f'{{"type": "entity", "name": {huge}}}', format="mcp-memory")
    mem0 = service.import_text(f'{{"results": [{{"memory": "x", "n": {huge}}}]}}')
    for report in (lines, graph, mem0):
        [error] = report.errors
        assert error.line == 1
        assert error.error.endswith("a number has more than 4300 digits"), error.error
    assert _contents(service) == ["kept"]


def test_import_of_an_mcp_memory_line_nested_past_the_stack_is_a_bad_line(
    service: MemoryService,
) -> None:
    # The reference graph's reader parsed without a depth bound: the parser recursed out
    # of the stack and the whole file failed, its good lines with it.
    deep = '{"type": "entity", "name": ' + "[" * 5000 + "]" * 5000 + "}"
    good = '{"type": "entity", "name": "Ada", "entityType": "person", "observations": []}'
    report = service.import_text(f"{deep}\n{good}\n", format="mcp-memory")
    [error] = report.errors
    assert (error.line, error.error.split(":")[0]) == (1, "line")
    assert "nested deeper than" in error.error
    assert [entity.name for entity in service.knowledge.read_graph().entities] == ["Ada"]


def test_import_of_an_access_count_past_64_bits_is_a_bad_line(service: MemoryService) -> None:
    # It passed the line's checks and overflowed in the store, ending its whole chunk.
    lines = [
        json.dumps({"content": "before"}),
        json.dumps({"content": "counted", "access_count": 2**63}),
        json.dumps({"id": "late", "content": "after", "access_count": 2**63 - 1}),
    ]
    report = service.import_lines(lines)
    [error] = report.errors
    assert (error.line, error.error.split(":")[0]) == (2, "access_count")
    assert sorted(_contents(service)) == ["after", "before"]
    assert service.get("late").access_count == 2**63 - 1


# -- a repeated id within one file: the first is kept, the later one refused ---------


def test_import_mem0_refuses_a_repeated_id_and_keeps_the_first(
    tmp_path: Path, service: MemoryService, clock: FakeClock
) -> None:
    export = tmp_path / "mem0.json"
    export.write_text(
        json.dumps([{"id": "d1", "memory": "first text"}, {"id": "d1", "memory": "second text"}]),
        encoding="utf-8",
    )
    report = service.import_file(export)
    assert (report.created, report.updated) == (1, 0)
    [error] = report.errors
    assert error.item == 2
    assert "'d1'" in error.error
    assert "item 1" in error.error
    assert service.get("mem0-d1").content == "first text"
    written = service.get("mem0-d1").updated_at
    clock.advance(60)
    again = service.import_file(export)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 1)
    assert [error.item for error in again.errors] == [2]
    assert service.get("mem0-d1").updated_at == written


def test_import_recalld_refuses_a_repeated_id_and_keeps_the_first(
    service: MemoryService,
) -> None:
    lines = _lines({"id": "r-1", "content": "first text"}, {"id": "r-1", "content": "second text"})
    report = service.import_text(lines, format="recalld")
    assert (report.created, report.updated) == (1, 0)
    [error] = report.errors
    assert error.line == 2
    assert "'r-1'" in error.error
    assert "line 1" in error.error
    assert service.get("r-1").content == "first text"
    again = service.import_lines(lines.splitlines())
    assert (again.created, again.updated, again.unchanged) == (0, 0, 1)
    assert [error.line for error in again.errors] == [2]


def _chatgpt_conversation(text: str) -> dict[str, Any]:
    message = {
        "id": "u1",
        "author": {"role": "user"},
        "create_time": 1_700_000_000,
        "content": {"content_type": "text", "parts": [text]},
    }
    return {
        "id": "g1",
        "title": "t",
        "create_time": 1_700_000_000,
        "current_node": "u1",
        "mapping": {"u1": {"id": "u1", "parent": None, "children": [], "message": message}},
    }


def _claude_conversation(*texts: str, uuids: tuple[str, ...] = ("m1", "m2")) -> dict[str, Any]:
    return {
        "uuid": "c1",
        "name": "t",
        "created_at": "2024-05-01T09:00:00Z",
        "chat_messages": [
            {"uuid": uuid, "sender": "human", "text": text, "created_at": "2024-05-01T09:00:00Z"}
            for uuid, text in zip(uuids, texts, strict=False)
        ],
    }


@pytest.mark.parametrize("chat_format", ["chatgpt", "claude"])
def test_import_chat_export_refuses_a_repeated_conversation_id(
    service: MemoryService, chat_format: str
) -> None:
    make = _chatgpt_conversation if chat_format == "chatgpt" else _claude_conversation
    export = json.dumps([make("hello one"), make("hello two")])
    report = service.import_text(export, format=chat_format)
    assert (report.created, report.updated) == (1, 0)
    [error] = report.errors
    assert error.item == 2
    assert "repeats item 1" in error.error
    assert _contents(service) == ["hello one"]
    again = service.import_text(export, format=chat_format)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 1)


def test_import_claude_leaves_out_a_repeated_message_id(service: MemoryService) -> None:
    export = json.dumps([_claude_conversation("hello one", "hello two", uuids=("m1", "m1"))])
    report = service.import_text(export, format="claude")
    assert (report.created, report.updated) == (1, 0)
    [error] = report.errors
    assert error.item == 1
    assert error.error.startswith("chat_messages[1].uuid: 'm1' repeats chat_messages[0]")
    assert _contents(service) == ["hello one"]
    again = service.import_text(export, format="claude")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 1)


@pytest.mark.parametrize("chat_format", ["chatgpt", "claude"])
def test_import_chat_splits_a_message_longer_than_a_memory(
    service: MemoryService, chat_format: str
) -> None:
    # One pasted log over the content limit dropped the whole conversation.
    log = "\n".join(f"2024-05-01 09:00:{index % 60:02d} worker {index} ok" for index in range(4000))
    assert len(log.encode()) > service.settings.max_content_bytes
    make = _chatgpt_conversation if chat_format == "chatgpt" else _claude_conversation
    export = json.dumps([make(log)])
    report = service.import_text(export, format=chat_format)
    assert report.errors == []
    parts = sorted(_contents(service), key=lambda text: int(text.split()[1]))
    assert len(parts) == report.created > 1
    assert all(part.startswith(f"[part {n} of {len(parts)}]") for n, part in enumerate(parts, 1))
    body = "\n".join(part.split("\n", 1)[1] for part in parts)
    assert body.split() == log.split()
    again = service.import_text(export, format=chat_format)
    assert (again.created, again.updated) == (0, 0)


def test_import_claude_refuses_one_conversation_past_a_limit_and_keeps_the_others(
    service: MemoryService,
) -> None:
    # The Conversation model's own limits raised pydantic's error out of the import: a
    # traceback from the CLI, a 500 from REST, and not one conversation imported.
    long_chat = _claude_conversation(
        *[f"message {index}" for index in range(10_001)],
        uuids=tuple(f"m{index}" for index in range(10_001)),
    )
    long_id = {**_claude_conversation("hello long id"), "uuid": "x" * 3000}
    good = {**_claude_conversation("hello kept"), "uuid": "c2"}
    report = service.import_text(json.dumps([long_chat, long_id, good]), format="claude")
    assert [(error.item, error.error.split(":")[0]) for error in report.errors] == [
        (1, "messages"),
        (2, "id"),
    ]
    assert "10001 messages; the limit is 10000" in report.errors[0].error
    assert _contents(service) == ["hello kept"]


# -- a byte-order mark at the start of a file or upload ---------------------------


BOM_FILES = {
    "recalld": _lines({"id": "bom-1", "content": "kept despite the mark"}),
    "mcp-memory": _lines(
        {"type": "entity", "name": "Bom Person", "entityType": "person", "observations": ["o"]}
    ),
    "mem0": json.dumps({"results": [{"id": "b1", "memory": "kept despite the mark"}]}, indent=2),
    "mem0 lines": _lines({"id": "b1", "memory": "kept despite the mark"}),
}


@pytest.mark.parametrize("how", ["file", "text", "bytes"])
@pytest.mark.parametrize("kind", sorted(BOM_FILES))
def test_import_ignores_a_byte_order_mark(
    tmp_path: Path, service: MemoryService, kind: str, how: str
) -> None:
    body = BOM_FILES[kind]
    chosen = kind.split()[0]
    if how == "file":
        path = tmp_path / "export.json"
        path.write_text(body, encoding="utf-8-sig")  # as Windows editors save UTF-8
        report = service.import_file(path)
    elif how == "bytes":  # an upload's body
        report = service.import_text(body.encode("utf-8-sig"))
    else:
        report = service.import_text("\ufeff" + body)
    assert report.format == chosen
    assert report.errors == []
    assert report.created >= 1
    again = service.import_text("\ufeff" + body, format=chosen)
    assert (again.created, again.updated, again.errors) == (0, 0, [])


def test_import_lines_ignores_a_byte_order_mark(service: MemoryService) -> None:
    report = service.import_lines(["\ufeff" + json.dumps({"id": "bom-1", "content": "kept"})])
    assert (report.created, report.errors) == (1, [])
    assert service.get("bom-1").content == "kept"


# -- Claude's attachments -----------------------------------------------------------


def _with_attachment(text: str, file_name: str = "itinerary.txt") -> str:
    conversation = _claude_conversation("Plan a trip to Kyoto")
    conversation["chat_messages"][0]["attachments"] = [
        {"file_name": file_name, "file_type": "txt", "extracted_content": text}
    ]
    return json.dumps([conversation])


def test_import_claude_keeps_attachment_text_as_its_own_turn(service: MemoryService) -> None:
    export = _with_attachment("Day 1: Fushimi Inari")
    report = service.import_text(export, format="claude")
    assert (report.created, report.skipped, report.errors) == (2, 0, [])
    turns = service.turns(service.list_memories(limit=10).memories[0].id)
    assert [(turn.speaker, turn.content) for turn in turns] == [
        ("user", "Plan a trip to Kyoto"),
        ("user", "[attachment: itinerary.txt]\nDay 1: Fushimi Inari"),
    ]
    again = service.import_text(export, format="claude")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 2)


def test_import_claude_splits_an_attachment_larger_than_a_memory(service: MemoryService) -> None:
    limit = service.settings.max_content_bytes
    text = "\n".join(f"line {number}: " + "é" * 60 for number in range(limit // 40))
    report = service.import_text(_with_attachment(text), format="claude")
    assert report.errors == []
    parts = [
        memory.content
        for memory in service.list_memories(limit=100).memories
        if memory.content.startswith("[attachment")
    ]
    assert len(parts) == report.created - 1 >= 2
    assert all(len(part.encode("utf-8")) <= limit for part in parts)
    assert all(", part " in part.split("\n", 1)[0] for part in parts)
    kept = "\n".join(part.split("\n", 1)[1] for part in sorted(parts, key=_part_number))
    assert kept == text


def test_import_claude_splits_an_attachment_without_line_breaks_between_words(
    service: MemoryService,
) -> None:
    # Without a line break in reach, a part ended inside a word ("... wor" / "d ...").
    limit = service.settings.max_content_bytes
    words = [f"word{number}" for number in range(limit // 4)]
    report = service.import_text(_with_attachment(" ".join(words)), format="claude")
    assert report.errors == []
    parts = sorted(
        (
            memory.content.split("\n", 1)[1]
            for memory in service.list_memories(limit=100).memories
            if memory.content.startswith("[attachment")
        ),
        key=lambda part: int(part.split()[0].removeprefix("word")),
    )
    assert len(parts) >= 2
    assert [word for part in parts for word in part.split(" ")] == words


def _part_number(content: str) -> int:
    return int(content.split(", part ", 1)[1].split(" ", 1)[0])


# -- mem0: a broken document, epoch times -------------------------------------------


def test_import_mem0_tells_a_truncated_document_from_json_lines(service: MemoryService) -> None:
    whole = json.dumps(
        {"results": [{"id": "t1", "memory": "cut short", "categories": ["food"]}]}, indent=2
    )
    report = service.import_text(whole[: whole.index("short") + 2], format="mem0")
    [error] = report.errors
    assert error.line == 1
    assert error.error.startswith("document: is not a JSON document: Unterminated string")
    assert "line 5 column" in error.error
    assert service.stats().count == 0
    # JSON lines whose first line is cut short are still lines: the rest imports.
    text = '{"id": "l1", "memory": \n' + json.dumps({"id": "l2", "memory": "second line"})
    report = service.import_text(text, format="mem0")
    assert report.created == 1
    assert [error.line for error in report.errors] == [1]
    assert service.get("mem0-l2").content == "second line"


def test_import_mem0_reads_created_at_in_unix_seconds(service: MemoryService) -> None:
    items = [
        {"id": "e1", "memory": "epoch seconds", "created_at": 1_700_000_000},
        {"id": "e2", "memory": "epoch milliseconds", "created_at": 1_700_000_000_000},
        {"id": "e3", "memory": "a flag", "created_at": True},
        {"id": "e4", "memory": "not a date", "created_at": "yesterday"},
    ]
    report = service.import_text(json.dumps(items), format="mem0")
    assert report.created == 1
    assert service.get("mem0-e1").at == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert [error.item for error in report.errors] == [2, 3, 4]
    assert all(error.error.startswith("created_at: ") for error in report.errors)


# -- a pipe, and bytes that are not UTF-8 ------------------------------------------


@contextmanager
def _through_a_pipe(body: bytes) -> Iterator[Path]:
    """A pipe's path that a thread fills with ``body``, as ``<(cat export.jsonl)`` gives."""
    read_end, write_end = os.pipe()

    def write() -> None:
        with os.fdopen(write_end, "wb") as sink:
            sink.write(body)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        yield Path(f"/proc/self/fd/{read_end}")
    finally:
        writer.join()
        os.close(read_end)


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("count", [3, 3000])
def test_import_from_a_pipe_reads_every_line(service: MemoryService, count: int) -> None:
    # The format was told from a first 64 KiB read, then the path opened again: from a
    # pipe those bytes were gone (3,000 lines imported 1,970; 3 imported none, no error).
    records = [{"id": f"m{index}", "content": f"memory number {index}"} for index in range(count)]
    with _through_a_pipe(_lines(*records).encode()) as pipe:
        report = service.import_file(pipe)
    assert (report.created, report.errors) == (count, [])
    assert service.get("m0").content == "memory number 0"
    assert service.stats().count == count


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs Linux's /proc")
def test_import_of_a_document_from_a_pipe(service: MemoryService) -> None:
    body = json.dumps({"results": [{"id": "p1", "memory": "read from a pipe"}]}, indent=2)
    with _through_a_pipe(body.encode()) as pipe:
        report = service.import_file(pipe)
    assert (report.format, report.created, report.errors) == ("mem0", 1, [])


@pytest.mark.parametrize("how", ["file", "bytes"])
def test_import_refuses_text_that_is_not_utf8(
    tmp_path: Path, service: MemoryService, how: str
) -> None:
    # Read with replacement, "café" in Latin-1 was stored as "caf\ufffd" and reported fine.
    lines = _lines({"id": "ok-1", "content": "café"}, {"id": "bad-2", "content": "café"})
    latin = lines.split("\n", 1)[0].encode() + b"\n" + lines.split("\n", 1)[1].encode("latin-1")
    document = json.dumps({"results": [{"id": "d1", "memory": "café"}]}, ensure_ascii=False)
    document_bytes = document.encode("latin-1")
    if how == "file":
        (tmp_path / "lines.jsonl").write_bytes(latin)
        (tmp_path / "mem0.json").write_bytes(document_bytes)
        lined = service.import_file(tmp_path / "lines.jsonl")
        whole = service.import_file(tmp_path / "mem0.json")
    else:
        lined = service.import_text(latin)
        whole = service.import_text(document_bytes)
    assert lined.created == 1
    assert [(error.line, error.error) for error in lined.errors] == [
        (2, "line: is not UTF-8 text (byte 0xe9 at offset 31)")
    ]
    assert whole.created == 0
    assert [(error.line, error.error) for error in whole.errors] == [
        (1, "document: is not UTF-8 text (byte 0xe9 at offset 40)")
    ]
    assert _contents(service) == ["café"]
