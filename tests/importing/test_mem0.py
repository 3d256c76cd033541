"""mem0 exports at their edges: JSON lines with a line that is no memory."""

from __future__ import annotations

import json

import pytest

from recalld.service import MemoryService


@pytest.mark.parametrize(
    ("bad", "kind"), [("null", "null"), ('"oops"', "str"), ("42", "int"), ("true", "bool")]
)
def test_mem0_lines_with_a_scalar_line_report_that_line_and_import_the_rest(
    service: MemoryService, bad: str, kind: str
) -> None:
    # The scalar made the whole file one error at "line 1", writing nothing.
    lines = [
        json.dumps({"id": "1", "memory": "Likes green tea"}),
        bad,
        json.dumps({"id": "2", "memory": "Walks to work"}),
    ]
    report = service.import_text("\n".join(lines) + "\n", format="mem0")
    assert [(error.line, error.item) for error in report.errors] == [(2, 2)]
    assert report.errors[0].error.endswith(f"a line is a memory or a page of them, got {kind}")
    assert report.created == 2
    contents = sorted(memory.content for memory in service.list_memories().memories)
    assert contents == ["Likes green tea", "Walks to work"]


def test_mem0_refused_field_is_named_as_mem0_names_it(service: MemoryService) -> None:
    # Adversarial pass e60: a memory too long was "content: is 70000 bytes", a category
    # too long "tags: ...", a NUL in metadata "meta.k: ...": fields the export does not have.
    items = [
        {"id": "long", "memory": "x" * 70_000},
        {"id": "category", "memory": "ok", "categories": ["y" * 300]},
        {"id": "metadata", "memory": "ok too", "metadata": {"k": "\u0000"}},
        {"id": "fine", "memory": "kept"},
    ]
    report = service.import_text(json.dumps(items), format="mem0")
    assert [error.error.split(":")[0] for error in report.errors] == [
        "memory",
        "categories",
        "metadata.k",
    ]
    assert report.created == 1


def test_mem0_reimport_keeps_an_edit_made_here_until_mem0_changes_the_text(
    service: MemoryService,
) -> None:
    # Adversarial pass e60: importing the same export again reverted a memory edited
    # here since (reported "updated"), though the same file is to change nothing.
    for hash_given in (True, False):
        memory_id = f"tea-{hash_given}"
        item = {"id": memory_id, "memory": "Likes green tea"}
        if hash_given:
            item["hash"] = "h1"
        service.import_text(json.dumps([item]), format="mem0")
        service.update(f"mem0-{memory_id}", content="Likes green tea, never black")
        again = service.import_text(json.dumps([item]), format="mem0")
        assert (again.updated, again.unchanged) == (0, 1)
        assert service.get(f"mem0-{memory_id}").content == "Likes green tea, never black"
        # Changed in mem0 (its text, so its hash): the new text comes in.
        changed = {**item, "memory": "Likes oolong"}
        if hash_given:
            changed["hash"] = "h2"
        later = service.import_text(json.dumps([changed]), format="mem0")
        assert later.updated == 1
        assert service.get(f"mem0-{memory_id}").content == "Likes oolong"
        assert service.import_text(json.dumps([changed]), format="mem0").unchanged == 1
