"""The shapes of a transcript to remember and of the report of remembering it.

:class:`Conversation` (``POST /v1/conversations``, ``remember_conversation``) holds
:class:`ConversationMessage` objects; :class:`ConversationReport` says what happened to
each. What is done with them: :mod:`recalld.conversations`, which re-exports them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from recalld._schema import DATE_TIME, NAME_PATTERN, NO_NUL_PATTERN, extra, nullable, replaced
from recalld.model import TAGS_SCHEMA, Moment, Receipt

__all__ = [
    "MAX_MESSAGES",
    "Conversation",
    "ConversationMessage",
    "ConversationReport",
    "SkippedMessage",
    "TurnReceipt",
    "role_kind",
]

MAX_MESSAGES = 10_000
ID_MAX_CHARS = 200
SPEAKER_MAX_CHARS = 200
ROLE_MAX_CHARS = 100

RoleKind = Literal["speech", "system", "tool"]
# Role names of the common chat formats, by what they are.
SYSTEM_ROLES = frozenset({"system", "developer"})
TOOL_ROLES = frozenset({"tool", "function", "tool_use", "tool_result", "tool_call", "ipython"})
ROLE_SPEAKERS = {"human": "user", "ai": "assistant", "model": "assistant", "bot": "assistant"}


def role_kind(role: str | None) -> RoleKind:
    """Whether a role speaks (kept), is the system (skipped unless asked) or a tool."""
    folded = (role or "").strip().lower()
    if folded in SYSTEM_ROLES:
        return "system"
    if folded in TOOL_ROLES:
        return "tool"
    return "speech"


class ConversationMessage(BaseModel):
    """One message of a transcript: who said it (``role`` or ``speaker``), what, when."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(
        description="what was said (a message with no text is skipped)",
        json_schema_extra=extra(pattern=NO_NUL_PATTERN),
    )
    role: str | None = Field(
        default=None,
        min_length=1,
        max_length=ROLE_MAX_CHARS,
        description="user, assistant, system, tool … (system and tool messages are skipped"
        " unless asked for)",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    speaker: str | None = Field(
        default=None,
        min_length=1,
        max_length=SPEAKER_MAX_CHARS,
        description="who said it, e.g. a person's name (default: the role)",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    at: Moment | str | None = Field(
        default=None,
        description="when it was said (default: when other messages have a time, the one"
        " before it's, else the one after it's; else the conversation's at, else now)",
        json_schema_extra=replaced(nullable(DATE_TIME)),
    )
    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_CHARS,
        description="the message's id in its source, for idempotent re-ingestion (unique"
        " within the transcript, not starting with '#')",
        json_schema_extra=extra(pattern="^(?!#)" + NAME_PATTERN[1:]),
    )


class Conversation(BaseModel):
    """A transcript to remember (``POST /v1/conversations``, ``remember_conversation``)."""

    model_config = ConfigDict(extra="forbid")

    messages: list[ConversationMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    conversation: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_CHARS,
        description="the conversation's id (default: derived from the transcript's start; give it"
        " to edit turns and when sending only the latest messages)",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    title: str | None = Field(
        default=None,
        max_length=500,
        description="the conversation's title",
        json_schema_extra=extra(pattern=NO_NUL_PATTERN),
    )
    at: Moment | str | None = Field(
        default=None,
        description="when the conversation happened (the default of its messages' at)",
        json_schema_extra=replaced(nullable(DATE_TIME)),
    )
    source: str | None = Field(
        default=None,
        min_length=1,
        max_length=2048,
        description="URI of the transcript (default recalld://conversation/<id>)",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    tags: list[str] = Field(default_factory=list, json_schema_extra=replaced(TAGS_SCHEMA))
    include_system: StrictBool = Field(default=False, description="keep system/developer messages")
    include_tools: StrictBool = Field(default=False, description="keep tool calls and tool results")


class TurnReceipt(BaseModel):
    """What happened to one kept message: its position, its memory and the write's status."""

    index: int = Field(description="the message's position in the transcript (from 0)")
    receipt: Receipt


class SkippedMessage(BaseModel):
    """A message left out, and why."""

    index: int
    reason: str


class ConversationReport(BaseModel):
    """What remembering a conversation did, turn by turn."""

    conversation: str
    source: str
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    turns: list[TurnReceipt] = Field(default_factory=list)
    skipped_messages: list[SkippedMessage] = Field(default_factory=list)
