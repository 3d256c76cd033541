"""How a conversation and its turns are named: the id a transcript sent without one
takes (:func:`derived_ids`), its source, and each turn's memory id (:func:`turn_id`).
Pure functions for :mod:`recalld.conversations`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from urllib.parse import quote

from recalld.conversation_model import Conversation, ConversationMessage, role_name

__all__ = ["SOURCE_PREFIX", "conversation_source", "derived_ids", "digest", "turn_id"]

SOURCE_PREFIX = "recalld://conversation/"


def digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def turn_id(conversation_id: str, message_key: str) -> str:
    return "turn-" + digest(conversation_id, message_key)[:40]


def conversation_source(conversation: Conversation, conversation_id: str) -> str:
    """The source of the conversation ``conversation_id``: the one given, else its URI."""
    return conversation.source or SOURCE_PREFIX + quote(conversation_id, safe="")


def derived_ids(messages: Sequence[ConversationMessage], *, folded: bool = False) -> Iterator[str]:
    """The ids a transcript sent without one may take, in order: the one of its first
    message (its id, else its speaker, time and text: what every earlier release
    derived, so a file ingested then and grown since finds its turns), then one per
    longer start of it (every field of its first one, two … messages). ``folded``: a
    known role read in lower case (:func:`role_name`), so "User" and "user" derive one."""

    def at(message: ConversationMessage) -> str:
        return message.at.isoformat() if isinstance(message.at, datetime) else str(message.at or "")

    def role(message: ConversationMessage) -> str:
        return role_name(message.role) if folded and message.role else message.role or ""

    first = messages[0]
    if first.id is not None:
        yield "c-" + digest("id", first.id)[:32]
    else:
        yield "c-" + digest(first.speaker or role(first), at(first), first.content or "")[:32]
    running = hashlib.sha256(b"recalld: the start of a transcript")
    for count, message in enumerate(messages, start=1):
        fields = (message.id or "", role(message), message.speaker or "", at(message))
        calls = [call.model_dump(mode="json") for call in message.tool_calls or ()]
        said = (message.content or "") + (json.dumps(calls, sort_keys=True) if calls else "")
        running.update(digest(*fields, said).encode())
        if count > 1 or first.id is not None:  # one message without an id: the first id
            yield "c-" + running.copy().hexdigest()[:32]
