"""The walks over a JSON-like value (dicts, lists, tuples) that find its first string
that is not valid Unicode or holds a NUL: iterative, so no nesting overflows the stack,
and bounded, so a value that holds itself ends (split from :mod:`recalld._validate`,
which re-exports them)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from recalld.model import MAX_JSON_DEPTH

# A UTF-16 surrogate code point: in a Python string it is never paired (a pair is one
# character), so UTF-8 cannot encode it and the database driver would fail on it.
SURROGATE = re.compile(r"[\ud800-\udfff]")
NOT_UNICODE = "contains an unpaired UTF-16 surrogate (not valid Unicode)"


def unpaired_surrogate(value: Any, path: str = "") -> str | None:
    """The path of the first string in ``value`` holding a lone UTF-16 surrogate, if any.

    JSON escapes such as ``"\\ud800"`` decode to strings UTF-8 cannot encode; they
    are refused at the edge instead of failing deep in the database driver.
    """
    found = text_problem(value, path)
    return None if found is None else found[0] or "body"


def text_problem(value: Any, path: str = "") -> tuple[str, str] | None:
    """The path of the first string in ``value`` (a JSON-like value: dicts, lists,
    tuples) that is not valid Unicode, or of the first bytes, and what is wrong with it.

    Iterative, so no nesting can overflow the stack. A dict key's problem is reported
    at the dict's path ("" at the top).
    """

    def leaf(item: Any) -> str | None:
        if isinstance(item, str):
            return NOT_UNICODE if not item.isascii() and SURROGATE.search(item) else None
        if isinstance(item, bytes | bytearray):
            return f"must be text (a str), got {type(item).__name__}"
        return None

    def key(name: str) -> str | None:
        return NOT_UNICODE if not name.isascii() and SURROGATE.search(name) else None

    return _first_problem(value, path, leaf, key)


def nul_problem(value: Any, path: str = "") -> tuple[str, str] | None:
    """The path of the first key or string in ``value`` (a JSON-like value) that holds a
    NUL character, and what is wrong: PostgreSQL's ``jsonb`` cannot store one, so no
    store accepts one (the same rule on every store). As :func:`text_problem`; a key's
    NUL is reported at the dict's path."""

    def leaf(item: Any) -> str | None:
        if isinstance(item, str) and (position := item.find("\x00")) >= 0:
            return f"contains a NUL character (U+0000) at position {position}"
        return None

    def key(name: str) -> str | None:
        return f"has a key {name!r} holding a NUL character (U+0000)" if "\x00" in name else None

    return _first_problem(value, path, leaf, key)


# How deep the text checks below walk before they call a value nested too deep: far past
# MAX_JSON_DEPTH, which the models refuse with their own message, so that nothing they
# take is cut short here.
WALK_DEPTH = 1_000

# How many values a value holding one list or dict in several places may come to, each
# place counted (as JSON would write it out): a library caller's ``x = [x, x]`` forty
# times is forty lists that are 2**40 values written out, which every later check (the
# depth, the JSON text, the model) went through one by one, for ever. A value without
# such sharing (all JSON parsed from text) is never held to this: its size is its input's.
WALK_VALUES = 1_000_000


def _first_problem(
    value: Any,
    path: str,
    leaf: Callable[[Any], str | None],
    key: Callable[[str], str | None],
) -> tuple[str, str] | None:
    """The path and problem of the first value (``leaf``) or dict key (``key``, reported
    at its dict's path) in ``value`` with one, depth first, iteratively. A list or dict
    met again (held in two places) is not walked again, its values counted as often as it
    is held; a value that holds itself, or comes to more than ``WALK_VALUES`` values so
    counted, is a problem named at its top field."""
    # (item, path, depth, leaving): a container is pushed again, leaving, after its
    # children, so that its size is known and it is off the path down once they are done.
    pending: list[tuple[Any, str, int, bool]] = [(value, path, 0, False)]
    walked: dict[int, int] = {}  # id of each container walked -> its values, counted
    entered: dict[int, int] = {}  # id of each container on the path down -> count then
    counted = 0
    while pending:
        item, where, depth, leaving = pending.pop()
        if leaving:
            walked[id(item)] = counted - entered.pop(id(item))
            continue
        if not isinstance(item, dict | list | tuple):
            counted += 1
            problem = leaf(item)
            if problem is not None:
                return where, problem
            continue
        if id(item) in walked:
            counted += walked[id(item)]
            if counted > WALK_VALUES:
                return _top(where), (
                    f"holds more than {WALK_VALUES} values once the lists and objects it"
                    " holds in several places are counted in each"
                )
            continue
        if id(item) in entered or depth > WALK_DEPTH:
            # A value that holds itself (a library caller's dict whose entry is the dict):
            # the walk went round it for ever, its path ever longer. Named at the top
            # field: the path down is that cycle, over and over.
            return _top(where), (
                f"is nested deeper than {MAX_JSON_DEPTH} levels (does it hold itself?)"
            )
        counted += 1
        entered[id(item)] = counted - 1
        pending.append((item, where, depth, True))
        if isinstance(item, dict):
            children: list[tuple[Any, str, int, bool]] = []
            for name, child in item.items():
                problem = key(name) if isinstance(name, str) else None
                if problem is not None:
                    return where, problem
                children.append(
                    (child, f"{where}.{name}" if where else str(name), depth + 1, False)
                )
            pending.extend(reversed(children))
        else:
            pending.extend(
                (child, f"{where}[{index}]", depth + 1, False)
                for index, child in reversed(list(enumerate(item)))
            )
    return None


def _top(where: str) -> str:
    """The top field of the path ``where`` (``meta`` of ``meta.a[0]``)."""
    top = re.match(r"[^.\[]*", where)
    return top.group() if top else where
