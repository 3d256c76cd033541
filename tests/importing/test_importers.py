"""Importers: every format's fixture (written from its published description), auto-detection,
the report's counts and numbered errors, and idempotent re-imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.errors import ValidationError
from recalld.importing import detect_format
from recalld.model import Filters
from recalld.service import MemoryService

FIXTURES = Path(__file__).parent.parent / "fixtures" / "imports"


def _contents(service: MemoryService, namespace: str | None = None) -> list[str]:
    page = service.list_memories(limit=100, namespace=namespace)
    return sorted(memory.content for memory in page.memories)


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
