"""Reading a transcript file for ``recalld ingest``: JSON, JSON lines, or ``Name: text`` lines.

- JSON: a list of messages, or an object with ``messages`` and any other field
  of :class:`recalld.conversations.Conversation` (``conversation``, ``title``,
  ``at`` …);
- JSON lines: one message object per line;
- text: one message per line written ``Speaker: what they said`` (a line that
  does not start with a speaker continues the message before it). A speaker
  is 1-60 characters before the first colon, without a second colon before
  it (so ``12:30`` or a URL is no speaker).

A message is ``{"role" or "speaker", "content", "at"?, "id"?}``; ``text`` and
``message`` are read as ``content``, ``name``, ``author`` and ``sender`` as ``speaker``,
``timestamp``, ``time`` and ``created_at`` as ``at``. A message that gives one field
under two of its names (``name`` and ``speaker``, say; a null one is not given) is
refused, even with equal values: no format read here gives a field twice. Messages of the
OpenAI chat format keep ``tool_calls`` and ``tool_call_id`` (a null ``content`` is left
out: only a message with ``tool_calls`` may have none).
"""

from __future__ import annotations

import json
from typing import Any

from recalld import _validate as check
from recalld.errors import ValidationError
from recalld.importing._json_text import json_lines

__all__ = ["read_transcript"]

# The longest speaker name a `Speaker: text` line may start with.
SPEAKER_MAX_CHARS = 60
ALIASES = {
    "text": "content",
    "message": "content",
    "name": "speaker",
    "author": "speaker",
    "sender": "speaker",
    "timestamp": "at",
    "time": "at",
    "created_at": "at",
}


def _message(value: Any, position: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationError(position, "a message must be a JSON object")
    message: dict[str, Any] = {}
    given: dict[str, str] = {}  # the key each field was read from
    for name, item in value.items():
        target = ALIASES.get(str(name), str(name))
        if item is None and target in message:
            continue  # null: not given
        if target in given and message[target] is not None:
            # Keeping the first dropped the other without a word. Equal values too: no
            # format read here gives a field twice, and one rule is simpler to state.
            raise ValidationError(position, f'give "{given[target]}" or "{name}", not both')
        message[target] = item
        given[target] = str(name)
    if "speaker" in message and not isinstance(message["speaker"], str):
        speaker = message["speaker"]
        # {"author": {"role": "user", "name": ...}} (exports of chat tools)
        if isinstance(speaker, dict):
            message["role"] = message.get("role") or speaker.get("role")
            message["speaker"] = speaker.get("name")
        if not message.get("speaker"):
            message.pop("speaker", None)
    return {name: item for name, item in message.items() if item is not None}


def read_transcript(text: str) -> dict[str, Any]:
    """The conversation a transcript file holds, as :class:`Conversation` fields."""
    body = text.lstrip("\ufeff")
    stripped = body.strip()
    if not stripped:
        raise ValidationError("file", "the transcript is empty")
    if stripped[0] in "[{":
        whole_error = ""
        try:
            document = json.loads(stripped)
        except RecursionError:
            raise ValidationError("file", "is nested too deeply") from None
        except ValueError as error:
            document = None
            whole_error = check.json_reason(str(error))
        if isinstance(document, list):
            return {
                "messages": [_message(item, f"messages[{i}]") for i, item in enumerate(document)]
            }
        if isinstance(document, dict):
            if "messages" in document:
                fields = dict(document)
                messages = fields.pop("messages")
                if not isinstance(messages, list):
                    raise ValidationError("messages", "must be a list of messages")
                fields["messages"] = [
                    _message(item, f"messages[{i}]") for i, item in enumerate(messages)
                ]
                return fields
            message = _message(document, "messages[0]")
            if "content" not in message:
                # {} or another document: "messages[0].content: Field required" would say
                # a message was found.
                raise ValidationError(
                    "file",
                    "holds no messages: give a list of messages, an object with"
                    ' "messages", or one message with "content" (or "text")',
                )
            return {"messages": [message]}
        messages = []
        for number, line in enumerate(body.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except (ValueError, RecursionError) as error:
                if not messages and not json_lines(body):
                    # The first line is no JSON value by itself, nor are most after it: a
                    # document over several lines that does not parse ("line 1: not JSON"
                    # pointed at its start, not at the trailing comma on line 3). The
                    # parser says where. (JSON lines with a bad first line keep "line 1".)
                    raise ValidationError(
                        "file", f"is not a JSON document: {whole_error}"
                    ) from None
                reason = check.json_reason(str(error))
                raise ValidationError(f"line {number}", f"not JSON: {reason}") from None
            messages.append(_message(value, f"line {number}"))
        return {"messages": messages}
    return {"messages": _speaker_lines(body)}


def _speaker_line(line: str) -> tuple[str, str] | None:
    """(speaker, text) of a `Speaker: text` line, None for any other line.

    What ``^\\s*([^:\\n]{1,60}?)\\s*:\\s+(.*)$`` matched, read by hand: that pattern
    tried each split of a run of spaces between its three optional space runs, so one line
    of 64 KB of spaces held the import for minutes (adversarial pass e62)."""
    colon = line.find(":")
    if colon < 0 or not line[colon + 1 : colon + 2].isspace():
        return None
    head = line[:colon]
    # Spaces alone before the colon: the pattern's name was the last of them.
    speaker = head.strip() or head[-1:]
    if not speaker or len(speaker) > SPEAKER_MAX_CHARS:
        return None
    return speaker, line[colon + 1 :].lstrip()


def _speaker_lines(text: str) -> list[dict[str, Any]]:
    # Each message's lines are joined once at the end: adding each line to the message's
    # text copied it again every line (a 2 MB transcript of short lines took 20 s).
    turns: list[tuple[str, list[str]]] = []
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if not line.strip():
            continue
        found = _speaker_line(line)
        if found is not None and "://" not in found[0]:
            turns.append((found[0], [found[1].strip()]))
        elif turns:
            turns[-1][1].append(line.strip())
        else:
            raise ValidationError(
                f"line {number}",
                "a text transcript has one message per line, written `Speaker: text`",
            )
    return [{"speaker": speaker, "content": "\n".join(lines)} for speaker, lines in turns]
