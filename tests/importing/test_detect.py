"""Telling a pretty-printed document's format: by its keys, not by the words in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recalld.errors import ValidationError
from recalld.importing import detect_format
from recalld.service import MemoryService

CLAUDE_NAMED_MAPPING = [
    {
        "uuid": "c1",
        "name": "mapping",
        "created_at": "2024-03-01T09:00:00Z",
        "chat_messages": [{"uuid": "m1", "sender": "human", "text": "hi"}],
    }
]
MEM0_READING_MAPPING = [{"id": "1", "memory": "mapping", "user_id": "alice"}]
CHATGPT = [{"title": "memory", "id": "g1", "mapping": {}}]


@pytest.mark.parametrize(
    ("document", "expected"),
    [(CLAUDE_NAMED_MAPPING, "claude"), (MEM0_READING_MAPPING, "mem0"), (CHATGPT, "chatgpt")],
)
def test_detect_pretty_printed_document_by_its_keys_not_its_values(
    document: Any, expected: str
) -> None:
    # A value "mapping" was taken for ChatGPT's key: every item was then refused.
    assert detect_format(json.dumps(document, indent=2), "conversations.json") == expected


def test_import_file_in_utf16_says_so_under_auto(service: MemoryService, tmp_path: Path) -> None:
    # "cannot tell the format from the content" named no cause.
    path = tmp_path / "conversations.json"
    path.write_bytes(json.dumps(CHATGPT).encode("utf-16"))
    with pytest.raises(ValidationError) as raised:
        service.import_file(path)
    assert raised.value.field == "file"
    assert "UTF-16" in str(raised.value)
    assert "save it as UTF-8" in str(raised.value)


def test_detect_pretty_printed_claude_export_whose_tool_input_has_a_mapping_key() -> None:
    # "mapping" was looked for first, anywhere: a tool call's input made it ChatGPT's.
    tool = {"type": "tool_use", "name": "lookup", "input": {"mapping": {"a": 1}}}
    conversation = CLAUDE_NAMED_MAPPING[0] | {
        "chat_messages": [{"uuid": "m1", "sender": "assistant", "text": "", "content": [tool]}]
    }
    assert detect_format(json.dumps([conversation], indent=2), "conversations.json") == "claude"


def test_import_auto_reads_back_an_export_whose_first_line_is_longer_than_the_sample(
    service: MemoryService, tmp_path: Path
) -> None:
    # A memory near the content limit with some meta is a line past the 64 KiB the format
    # is told from: `recalld import` of recalld's own export said "cannot tell the format".
    long = service.remember("word " * 13_000, meta={"note": "z" * 2_000})
    service.remember("small")
    export = tmp_path / "export.jsonl"
    export.write_text("".join(line + "\n" for line in service.export()), encoding="utf-8")
    first_line = export.read_text(encoding="utf-8").split("\n", 1)[0]
    assert len(first_line.encode("utf-8")) > 65_536
    assert detect_format(first_line[:60_000], "export.jsonl") == "recalld"
    with MemoryService.open(service.settings.model_copy(update={"db": tmp_path / "b.db"})) as other:
        report = other.import_file(export)
        assert (report.format, report.created, report.errors) == ("recalld", 2, [])
        assert other.get(long.id).content == "word " * 13_000


@pytest.mark.parametrize(
    ("cut", "expected"),
    [
        ('{"results": [{"id": "1", "memory": "' + "m" * 70_000, "mem0"),
        ('{"title": "t", "create_time": 1.5e9, "mapping": {"a": "' + "m" * 70_000, "chatgpt"),
        ('{"type": "recalld.core", "target": "' + "m" * 70_000, "recalld"),
    ],
)
def test_detect_a_cut_first_line_by_the_keys_it_starts_with(cut: str, expected: str) -> None:
    assert detect_format(cut[:65_536]) == expected


@pytest.mark.parametrize("format", ["recalld", "mcp-memory", "mem0", "hermes"])
def test_import_file_in_utf16_says_so_under_every_format(
    service: MemoryService, tmp_path: Path, format: str
) -> None:
    # Adversarial pass a63: under a format of lines, a UTF-16 file was split at its 0x0a
    # bytes and each piece refused ("line 2: is not JSON"), one more line than it held.
    path = tmp_path / "export.jsonl"
    path.write_bytes('{"content": "héllo"}\n{"content": "second"}\n'.encode("utf-16"))
    with pytest.raises(ValidationError) as raised:
        service.import_file(path, format=format)
    assert raised.value.field == "file"
    assert str(raised.value) == (
        f"file: {path} is UTF-16 (it starts with its byte-order mark): save it as UTF-8"
    )
    assert service.list_memories().memories == []


LINES = '{"content": "héllo"}\n{"content": "second"}\n'


@pytest.mark.parametrize(
    ("data", "cause"),
    [
        (b"\xff\xfe\x00\x00" + LINES.encode("utf-32-le"), "is UTF-32 (it starts with its"),
        (b"\x00\x00\xfe\xff" + LINES.encode("utf-32-be"), "is UTF-32 (it starts with its"),
        (LINES.encode("utf-16-le"), "is UTF-16 or UTF-32 (NUL bytes between"),
        (LINES.encode("utf-16-be"), "is UTF-16 or UTF-32 (NUL bytes between"),
        (LINES.encode("utf-32-le"), "is UTF-16 or UTF-32 (NUL bytes between"),
    ],
    ids=["utf-32-le", "utf-32-be", "utf-16-le-unmarked", "utf-16-be-unmarked", "utf-32-unmarked"],
)
@pytest.mark.parametrize("format", ["auto", "recalld"])
def test_import_of_utf32_or_utf16_without_its_mark_is_refused_naming_it(
    service: MemoryService, tmp_path: Path, data: bytes, cause: str, format: str
) -> None:
    # Review of pass a63: UTF-32 LE was called UTF-16 (its mark starts with UTF-16 LE's);
    # UTF-32 BE, and UTF-16 without its mark, were split at their 0x0a bytes, each piece a
    # "line: is not UTF-8" or "is not JSON" error naming no cause (or "cannot tell the
    # format" for a file).
    path = tmp_path / "export.jsonl"
    path.write_bytes(data)
    with pytest.raises(ValidationError) as raised:
        service.import_file(path, format=format)
    assert str(raised.value).startswith(f"file: {path} {cause}")
    assert str(raised.value).endswith("save it as UTF-8")
    with pytest.raises(ValidationError) as raised:
        service.import_text(data, format=format)
    assert str(raised.value).startswith(f"file: the upload {cause}")
    assert service.list_memories().memories == []


def test_import_of_utf8_with_its_mark_still_imports(service: MemoryService, tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + LINES.encode())
    assert service.import_file(path).created == 2
    assert sorted(memory.content for memory in service.list_memories().memories) == [
        "héllo",
        "second",
    ]
