"""A value holding one list or dict in several places (a library caller's, never JSON
parsed from text) is walked once per list or dict, not once per place it is held: the
walks answered in time exponential in its depth (adversarial pass a67)."""

from __future__ import annotations

from typing import Any

import pytest

from recalld import MemoryService, ValidationError
from recalld._validate_walk import WALK_VALUES, text_problem


def doubled(times: int) -> list[Any]:
    """``x = [x, x]`` ``times`` times: ``times`` lists, 2**times lists written out."""
    value: list[Any] = []
    for _ in range(times):
        value = [value, value]
    return value


def test_walk_refuses_a_value_whose_shared_parts_come_to_too_many_values() -> None:
    # 2**21 lists once each place is counted, past WALK_VALUES: refused (it was walked
    # place by place, seconds here, and passed; forty times took for ever).
    assert WALK_VALUES < 2**21
    found = text_problem(doubled(21), "meta")
    assert found is not None
    assert found[0] == "meta"
    assert f"holds more than {WALK_VALUES} values" in found[1]


def test_meta_tags_and_filters_of_forty_doublings_are_refused_at_once(
    service: MemoryService,
) -> None:
    value = doubled(40)
    with pytest.raises(ValidationError, match="holds more than") as meta_error:
        service.remember("hello", meta={"shared": value})
    assert meta_error.value.field == "meta"
    with pytest.raises(ValidationError, match="holds more than"):
        service.remember("hello", tags=value)
    with pytest.raises(ValidationError, match="holds more than"):
        service.search("hello", filters={"tags_any": value})
    with pytest.raises(ValidationError, match="holds more than"):
        service.list_memories(filters={"meta": {"shared": value}})
    assert service.list_memories().memories == []


def test_a_small_shared_part_is_kept_in_each_place(service: MemoryService) -> None:
    shared = {"k": [1, 2, "three"]}
    receipt = service.remember("hello", meta={"a": shared, "b": shared, "c": [shared] * 3})
    assert service.get(receipt.id).meta == {"a": shared, "b": shared, "c": [shared] * 3}


def test_a_value_that_holds_itself_is_still_refused(service: MemoryService) -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(ValidationError, match="does it hold itself"):
        service.remember("hello", meta={"c": cycle})
    listed: list[Any] = []
    listed.append([listed])
    assert text_problem(listed, "tags") is not None


def test_a_problem_under_a_shared_part_is_named_at_its_first_place() -> None:
    shared = ["fine", "bad\ud800"]
    found = text_problem({"a": [1], "b": shared, "c": shared}, "meta")
    assert found is not None
    assert found[0] == "meta.b[1]"
