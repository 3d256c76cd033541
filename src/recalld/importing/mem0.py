"""mem0's exported memories: ``{"results": [...]}``, a list, or one memory per line.

What mem0 documents for its memories (``get_all``, ``search``, the platform's
exports): each has ``id``, ``memory`` (the text), optional ``user_id``,
``agent_id``, ``run_id``, ``app_id``, ``metadata`` (an object),
``categories`` (a list of names), ``hash``, ``created_at`` and
``updated_at``. A page may be ``{"results": [...]}`` (with ``count``/``next``
when paged) or ``{"memories": [...]}``, or the list itself; a JSON-lines file
may hold one memory (or one page) per line.

How it lands (decided here, said in the README):

- ``user_id``/``agent_id`` → the namespace, as :mod:`recalld.scoping` maps
  them (``user:<id>``, ``agent:<id>``, ``user:<u>/agent:<a>``); a memory with
  neither goes to the import's namespace;
- ``run_id`` → the tag ``run:<id>``, ``app_id`` → ``app:<id>``,
  ``categories`` → tags;
- ``created_at`` → ``at`` (when it was remembered there): an ISO 8601 time, or
  a number read as Unix seconds;
- ``metadata`` → ``meta``, with mem0's own ids kept under ``meta.mem0``;
- the memory's id is ``mem0-<id>``, so importing the same export again
  changes nothing, and a memory whose text changed there is updated here;
  ``meta.mem0.hash`` keeps mem0's ``hash`` of the text (its MD5, computed when the
  export has none), so a memory edited here since is left as it is while mem0's
  text is still the one it was imported from (re-importing the file reverted it).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from recalld import _validate as check
from recalld._time import parse_instant
from recalld.errors import ValidationError
from recalld.importing._json_text import json_lines, unix_seconds

__all__ = ["Mem0Memory", "parse_mem0"]

ID_PATTERN = re.compile(r"[\w.:-]{1,59}")


@dataclass(frozen=True)
class Mem0Memory:
    """One memory of the export, where it was (item number, line when JSON lines)."""

    item: int
    line: int | None
    data: dict[str, Any]


def _items(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in ("results", "memories"):
            inner = value.get(key)
            if isinstance(inner, list):
                return inner
        return [value]
    raise ValidationError("document", 'a mem0 export is a list of memories or {"results": [...]}')


def parse_mem0(text: str) -> list[Mem0Memory]:
    """The memories of a mem0 export (a JSON document, or JSON lines).

    Text that is not one JSON document is read as JSON lines (each bad line reported
    on its own) when its first line is a JSON object or list by itself, or at least
    half of its lines are; otherwise it is one document that does not parse
    (truncated, say), refused whole with the parser's message and position.
    """
    text = text.removeprefix("\ufeff")  # a byte-order mark is no part of the JSON
    try:
        document = json.loads(text)
    except RecursionError:
        raise ValidationError("document", "is nested too deeply") from None
    except ValueError as error:  # not JSON, or a number of too many digits
        if not isinstance(error, json.JSONDecodeError) or not json_lines(text):
            reason = check.json_reason(str(error))
            raise ValidationError("document", f"is not a JSON document: {reason}") from None
        document = None
    found: list[Mem0Memory] = []
    if document is not None:
        for item in _items(document):
            found.append(Mem0Memory(item=len(found) + 1, line=None, data=item))
        return found
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as error:
            problem = {"__error__": f"not JSON: {check.json_reason(str(error))}"}
            found.append(Mem0Memory(item=len(found) + 1, line=number, data=problem))
            continue
        if not isinstance(value, dict | list):
            # A line of null, a string or a number is this line's fault: reported by its
            # number, as a line that is not JSON (it refused the whole file as "line 1").
            kind = "null" if value is None else type(value).__name__
            problem = {"__error__": f"a line is a memory or a page of them, got {kind}"}
            found.append(Mem0Memory(item=len(found) + 1, line=number, data=problem))
            continue
        for item in _items(value):
            found.append(Mem0Memory(item=len(found) + 1, line=number, data=item))
    return found


def _created_at(value: Any) -> str | None:
    """``created_at`` as an ISO 8601 time: a string is checked as one, a number is read as
    Unix seconds (milliseconds fall past year 9999: refused); anything else is refused."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        parse_instant("created_at", value)  # named as mem0 names it, not as recalld's ``at``
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return unix_seconds(value, "created_at")
    raise ValidationError(
        "created_at", f"must be an ISO 8601 time or Unix seconds, got {type(value).__name__}"
    )


def draft_of(memory: Mem0Memory) -> tuple[dict[str, Any], str | None, str | None]:
    """The recalld draft of one mem0 memory, and its ``user_id`` and ``agent_id``.

    Raises :class:`ValidationError` naming the mem0 field at fault.
    """
    data = memory.data
    if not isinstance(data, dict):
        raise ValidationError("memory", "an item must be a JSON object")
    if "__error__" in data:
        raise ValidationError("line", str(data["__error__"]))
    text = data.get("memory", data.get("text"))
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("memory", "must be the memory's text (a non-empty string)")
    ids: dict[str, str] = {}
    for field in ("id", "user_id", "agent_id", "run_id", "app_id", "hash"):
        value = data.get(field)
        if value is None:
            continue
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise ValidationError(field, f"must be a string, got {type(value).__name__}")
        ids[field] = str(value)
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValidationError("metadata", "must be an object")
    categories = data.get("categories") or []
    if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
        raise ValidationError("categories", "must be a list of strings")
    # mem0's own fingerprint of the text (MD5 of it), kept to tell later whether the
    # text changed there (see the module docstring).
    ids.setdefault("hash", hashlib.md5(text.encode("utf-8", "surrogatepass")).hexdigest())
    tags = [category.strip() for category in categories if category.strip()]
    for field, prefix in (("run_id", "run"), ("app_id", "app")):
        if field in ids:
            tags.append(f"{prefix}:{ids[field]}")
    draft: dict[str, Any] = {
        "content": text,
        "kind": "note",
        "tags": tags,
        "meta": {**metadata, "mem0": ids},
    }
    created = _created_at(data.get("created_at"))
    if created is not None:
        draft["at"] = created
    if "id" in ids:
        if not ID_PATTERN.fullmatch(ids["id"]):
            raise ValidationError("id", f"is not an id recalld can keep: {ids['id']!r}")
        draft["id"] = f"mem0-{ids['id']}"
    return draft, ids.get("user_id"), ids.get("agent_id")
