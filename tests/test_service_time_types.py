"""A time field given another JSON type than text is named as the field it is."""

from __future__ import annotations

from typing import Any

import pytest

from recalld.errors import ValidationError
from recalld.service import MemoryService


@pytest.mark.parametrize(("given", "kind"), [(1700000000, "int"), (True, "bool"), ([1], "list")])
def test_a_message_time_of_another_type_names_at_not_a_union_member(
    service: MemoryService, given: Any, kind: str
) -> None:
    # Adversarial pass e60: a transcript's Unix "timestamp" (read as at) was refused as
    # "messages[0].at.datetime: Input should be a valid datetime", a field that does not
    # exist, in pydantic's words.
    with pytest.raises(ValidationError) as caught:
        service.remember_conversation(
            [{"role": "user", "content": "hi", "at": given}], conversation="c1"
        )
    assert str(caught.value) == (
        f"messages[0].at: expected an ISO 8601 date-time as text, got {kind}"
    )
    assert service.list_memories(limit=10).memories == []


def test_a_memory_time_of_another_type_names_at(service: MemoryService) -> None:
    with pytest.raises(ValidationError) as caught:
        service.remember("hello", at=1700000000)  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.message) == (
        "at",
        "expected an ISO 8601 date-time as text, got int",
    )


def test_a_time_with_a_space_before_its_offset_says_a_url_only_as_a_possibility(
    service: MemoryService,
) -> None:
    # Review of pass d64: the library, CLI and MCP take a time as written, so the hint
    # for a "+" a query string read as a space must not claim the time came in a URL.
    with pytest.raises(ValidationError) as caught:
        service.remember("at ten", at="2026-10-25T10:00:00 02:00")
    assert caught.value.field == "at"
    assert caught.value.message == (
        "expected an ISO 8601 date-time such as 2026-10-25T16:20:00Z, got"
        " '2026-10-25T10:00:00 02:00': if it came in a URL's query string, an offset's +"
        " arrived as a space there: write it %2B (or give the time in UTC, ending in Z)"
    )
    assert service.list_memories(limit=10).memories == []
