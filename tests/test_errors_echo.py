"""An error repeats a value it refuses or cannot find in at most 80 characters.

A 100,000-character id, key or time came back whole in the error (and in every log or
HTTP answer carrying it): enough of it to recognise it is kept, with its length.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from recalld._text import MAX_ECHO_CHARS, shown
from recalld.errors import NotFoundError, RecalldError, ValidationError
from recalld.service import MemoryService

HUGE = "x" * 100_000


def _message(call: Callable[[], object], error: type[RecalldError]) -> str:
    with pytest.raises(error) as caught:
        call()
    return str(caught.value)


@pytest.mark.parametrize(
    ("name", "call", "error"),
    [
        ("get by id", lambda memory: memory.get(HUGE), NotFoundError),
        ("get by key", lambda memory: memory.get(key=HUGE), NotFoundError),
        ("update", lambda memory: memory.update(HUGE, content="new"), NotFoundError),
        ("explain", lambda memory: memory.explain("cat", HUGE), NotFoundError),
        ("cancel", lambda memory: memory.cancel(HUGE), NotFoundError),
        ("entity", lambda memory: memory.graph.entity(HUGE[:200]), NotFoundError),
        ("memory's entities", lambda memory: memory.graph.entities_of_memory(HUGE), NotFoundError),
        ("since", lambda memory: memory.search("cat", filters={"since": HUGE}), ValidationError),
        ("at", lambda memory: memory.remember("cat", at=HUGE), ValidationError),
        ("core target", lambda memory: memory.core.state(HUGE), ValidationError),
        (
            "core operation key",
            lambda memory: memory.core.apply("user", [{"action": "add", HUGE: 1}]),
            ValidationError,
        ),
        (
            "memory key",
            lambda memory: memory.remember_many([{"content": "x", HUGE: 1}]),
            ValidationError,
        ),
        (
            "core edit target",
            lambda memory: memory.core.apply(HUGE, [{"action": "add", "content": "x"}]),
            ValidationError,
        ),
    ],
)
def test_an_error_repeats_a_huge_value_cut_with_its_length(
    service: MemoryService,
    name: str,
    call: Callable[[MemoryService], object],
    error: type[RecalldError],
) -> None:
    service.remember("the cat sleeps on the sofa")
    message = _message(lambda: call(service), error)
    assert "xxxx" in message, name  # enough of it to recognise
    assert "characters)" in message, name
    assert len(message) < 300, (name, len(message))


def test_shown_keeps_a_short_value_as_its_repr() -> None:
    assert shown("abc") == "'abc'"
    assert shown(12) == "12"
    long = shown("y" * 500)
    assert long.startswith("'" + "y" * (MAX_ECHO_CHARS - 1))
    assert long.endswith("... (500 characters)")


def test_an_imported_core_line_with_a_huge_target_is_reported_cut(service: MemoryService) -> None:
    line = {"type": "recalld.core", "namespace": "default", "target": HUGE, "entries": ["x"]}
    report = service.import_lines([json.dumps(line)])
    [error] = report.errors
    assert error.error.startswith("target: must be 'user' or 'memory', got 'xxxx")
    assert "characters)" in error.error
    assert len(error.error) < 300
