"""Telling an import's format from its content (``--format auto``).

Only the first few kilobytes are looked at, so a large file is not read twice
to decide: JSON lines are told apart by their first object's keys, JSON
documents by the keys their items start with, Hermes' memory files by their
name (``MEMORY.md``, ``USER.md``) or their ``§`` entry separators.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePath

from recalld.errors import ValidationError

__all__ = ["FORMATS", "HERMES_FILES", "SAMPLE_BYTES", "detect_format"]

FORMATS = ("recalld", "mcp-memory", "mem0", "hermes", "chatgpt", "claude")
# Hermes Agent's two memory files and the core-memory target each one fills.
HERMES_FILES = {"MEMORY.MD": "memory", "USER.MD": "user"}
SAMPLE_BYTES = 65_536
HERMES_SEPARATOR = "\n§\n"
DOCUMENT_KEYS = tuple(
    (re.compile(f'"{key}"\\s*:'), format_name)
    for key, format_name in (
        ("mapping", "chatgpt"),
        ("chat_messages", "claude"),
        ("memory", "mem0"),
        ("entityType", "mcp-memory"),
    )
)


def detect_format(sample: str, name: str | None = None) -> str:
    """The format of an import whose text starts with ``sample`` (``name``: its file name).

    Raises :class:`ValidationError` (field ``format``) when nothing matches.
    """
    if name is not None and PurePath(name).name.upper() in HERMES_FILES:
        return "hermes"
    text = sample.lstrip("\ufeff \t\r\n")
    if not text:
        raise ValidationError("format", "the input is empty: there is nothing to import")
    if text[0] not in "[{":
        if HERMES_SEPARATOR in text.replace("\r\n", "\n") or (name or "").endswith(".md"):
            return "hermes"
        if name is None:
            return "recalld"  # an upload of lines: each one that is not a record is reported
        raise ValidationError("format", _unknown())
    first_line = text.split("\n", 1)[0]
    try:
        first = json.loads(first_line)
    except (ValueError, RecursionError):  # not one JSON value, or nested past the stack
        first = None
    if first is None and first_line.startswith("{") and "\n" not in text:
        # One line longer than the sample (a recalld export whose first memory is near the
        # content limit, with meta): told by the keys it starts with.
        first = _leading_pairs(first_line)
    if isinstance(first, dict):
        found = _from_object(first)
        if found is not None:
            return found
    if isinstance(first, list):
        item = next((value for value in first if isinstance(value, dict)), None)
        if item is not None:
            found = _from_document_item(item)
            if found is not None:
                return found
    # A JSON document over many lines (or longer than the sample): its items' keys. As
    # keys (a colon after them): a Claude chat named "mapping" or a mem0 memory reading
    # "mapping" was taken for ChatGPT's export, and every item refused. The earliest one:
    # each format's key comes before its items' free-form objects (a Claude tool call's
    # input may hold a key "mapping", after the conversation's "chat_messages").
    keys = [
        (match.start(), format_name)
        for key, format_name in DOCUMENT_KEYS
        if (match := key.search(text)) is not None
    ]
    if keys:
        return min(keys)[1]
    raise ValidationError("format", _unknown())


_PAIR = re.compile(
    r'\s*"((?:[^"\\]|\\.)*)"\s*:\s*'
    r'("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)?'
)


def _leading_pairs(line: str) -> dict[str, object]:
    """The top-level keys a cut JSON object starts with, and their values while these are
    plain (a string, a number, true, false, null); the first key whose value is not plain
    (an object, an array, a string cut short) ends the reading, with that key kept."""
    pairs: dict[str, object] = {}
    position = 1  # after "{"
    while (found := _PAIR.match(line, position)) is not None:
        try:
            key = json.loads(f'"{found[1]}"')
            value = None if found[2] is None else json.loads(found[2])
        except ValueError:
            break
        pairs[key] = value
        position = found.end()
        if found[2] is None:
            break
        separator = re.compile(r"\s*,").match(line, position)
        if separator is None:
            break
        position = separator.end()
    return pairs


def _from_object(value: dict[str, object]) -> str | None:
    """The format of a JSON-lines file whose first line is ``value``."""
    kind = value.get("type")
    if kind in ("entity", "relation") and ("entityType" in value or "relationType" in value):
        return "mcp-memory"
    if isinstance(kind, str) and kind.startswith("recalld."):
        return "recalld"
    if "results" in value or "memories" in value:
        return "mem0"
    return _from_document_item(value)


def _from_document_item(value: dict[str, object]) -> str | None:
    """The format of a document whose items (or one-line records) look like ``value``."""
    if "mapping" in value:
        return "chatgpt"
    if "chat_messages" in value:
        return "claude"
    if "memory" in value and "content" not in value:
        return "mem0"
    if "content" in value:
        return "recalld"
    return None


def _unknown() -> str:
    return (
        "cannot tell the format from the content; give it: "
        + ", ".join(FORMATS)
        + " (see `recalld import --help`)"
    )
