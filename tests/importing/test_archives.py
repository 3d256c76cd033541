"""An archive given where an export's text is expected (ChatGPT's and Claude's exports come
as a zip): refused naming what it is, whatever the format, with nothing written."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import zipfile
from pathlib import Path

import pytest

from recalld import _validate as check
from recalld.errors import ValidationError
from recalld.service import MemoryService

CONVERSATION = {
    "uuid": "c1",
    "name": "n",
    "chat_messages": [{"uuid": "m1", "sender": "human", "text": "hello"}],
}


def _zipped(name: str, text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, text)
    return buffer.getvalue()


ARCHIVES = {
    "zip archive": _zipped("conversations.json", json.dumps([CONVERSATION])),
    "gzip file": gzip.compress(b'{"content": "hello"}\n'),
    "bzip2 file": bz2.compress(b'{"content": "hello"}\n'),
    "xz file": lzma.compress(b'{"content": "hello"}\n'),
}


@pytest.mark.parametrize("kind", sorted(ARCHIVES))
@pytest.mark.parametrize("format", ["auto", "claude", "recalld"])
def test_import_file_of_an_archive_names_what_it_is(
    service: MemoryService, tmp_path: Path, kind: str, format: str
) -> None:
    # Adversarial pass e60: ChatGPT's export (a zip) was "cannot tell the format from the
    # content; give it", and given --format chatgpt "line 1: document: is not UTF-8 text
    # (byte 0xaa at offset 11)"; a gzipped export failed line by line.
    path = tmp_path / "export.bin"
    path.write_bytes(ARCHIVES[kind])
    with pytest.raises(ValidationError) as caught:
        service.import_file(path, format=format)
    assert caught.value.field == "file"
    assert f"{path} is a {kind}, not the text inside it: unpack it" in caught.value.message
    assert ("conversations.json" in caught.value.message) == (kind == "zip archive")
    assert service.list_memories(limit=10).memories == []


@pytest.mark.parametrize("kind", sorted(ARCHIVES))
def test_import_text_of_an_archive_names_what_it_is(service: MemoryService, kind: str) -> None:
    with pytest.raises(ValidationError) as caught:
        service.import_text(ARCHIVES[kind])
    assert caught.value.field == "file"
    assert caught.value.message.startswith(f"the upload is a {kind}, not the text inside it")
    assert service.list_memories(limit=10).memories == []


def test_utf8_text_of_an_archive_names_it_not_its_bytes() -> None:
    # recalld ingest (and a core apply file) read through it: "is not UTF-8 text (byte
    # 0x8b at offset 1, line 1)" said nothing of the cause.
    with pytest.raises(ValidationError) as caught:
        check.utf8_text(ARCHIVES["gzip file"], "chat.json.gz", lines=True)
    assert str(caught.value) == (
        "chat.json.gz: is a gzip file, not the text inside it: unpack it and give the file it holds"
    )


def test_a_text_starting_like_bzip2_is_no_archive(service: MemoryService) -> None:
    assert check.archive_kind(b"BZh is a word") is None
    report = service.import_text(b"BZh is a word\n", format="hermes")
    assert (report.created, report.errors) == (1, [])


@pytest.mark.parametrize("format", ["auto", "chatgpt"])
def test_import_of_an_unpacked_chat_export_names_its_conversations_json(
    service: MemoryService, tmp_path: Path, format: str
) -> None:
    # Adversarial pass e60: the directory of an unpacked export was refused as holding
    # neither MEMORY.md nor USER.md (or "only hermes imports one"), nothing said more.
    (tmp_path / "conversations.json").write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        service.import_file(tmp_path, format=format)
    assert caught.value.message.endswith(
        f"; import the chat export's {tmp_path / 'conversations.json'}"
    )


def test_import_of_a_sqlite_database_says_a_backup_is_restored(
    service: MemoryService, tmp_path: Path
) -> None:
    # Adversarial pass e60: a `recalld backup` given to `recalld import` was "cannot tell
    # the format", and with --format recalld hundreds of "line N: not UTF-8" errors.
    service.remember("kept in the backup")
    copy = tmp_path / "backup.db"
    service.backup(copy)
    for format in ("auto", "recalld"):
        with pytest.raises(ValidationError) as caught:
            service.import_file(copy, format=format)
        assert caught.value.field == "file"
        assert "is a SQLite database, not an export (a `recalld backup` is restored" in str(
            caught.value
        )
