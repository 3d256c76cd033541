"""An export with nothing in it imports nothing, whatever tool wrote it."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.service import MemoryService


@pytest.mark.parametrize("text", ["[]", "[ ]\n", "\ufeff[]", "\n[\n]\n"])
def test_an_empty_json_list_imports_nothing(
    service: MemoryService, tmp_path: Path, text: str
) -> None:
    # Adversarial pass e60: the conversations.json of an account without chats (or mem0's
    # export of no memories) is "[]"; --format auto answered "cannot tell the format from
    # the content" (exit 1) from a file, and over HTTP "line 1: a line must be a JSON
    # object".
    path = tmp_path / "conversations.json"
    path.write_text(text, encoding="utf-8")
    report = service.import_file(path)
    assert (report.created, report.errors) == (0, [])
    uploaded = service.import_text(text.encode("utf-8"))
    assert (uploaded.created, uploaded.errors) == (0, [])
    assert service.import_text(text).errors == []


def test_a_hermes_file_holding_brackets_is_an_entry_not_empty(
    service: MemoryService, tmp_path: Path
) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("[]\n", encoding="utf-8")
    assert service.import_file(path).created == 1
    assert service.import_text(b"[ ]", name="USER.md").created == 1
