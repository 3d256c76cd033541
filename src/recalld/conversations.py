"""Conversations: a transcript becomes one memory per turn, in order, idempotent by message.

Each message carries ``content`` and a ``role`` (``user``, ``assistant``,
``system``, ``tool`` …) or a ``speaker`` (a person's name), optionally ``at``
and ``id``. Every kept turn is a memory of kind ``turn`` whose ``speaker`` is
the message's speaker (else its role), whose ``source`` is the conversation
(``recalld://conversation/<id>``, or the source given) and whose ``meta``
holds the conversation id and title, the turn's position and role, and the
message id. Turns keep their order (one ``source`` per conversation, ``seq``
in turn order: recall's neighbouring-turn feature reads exactly that);
``meta.turn`` is the message's position in the transcript, and
:meth:`Conversations.turns` lists a conversation's turns in order (by
``at``, then by the order they were written), so the turns around a
recalled one can be read with it.

Idempotent: a turn's memory id is derived from the conversation id and the
message id (or, without one, its position), so ingesting the same transcript
again changes nothing (``unchanged``), a transcript that grew adds only its
new turns, and a message whose text changed is updated in place. Without a
conversation id, one is derived from the first message (its id, else its
speaker, time and text), so a re-ingested file that only grew keeps its id.

Skipped unless asked for: system and developer messages (``include_system``),
tool calls and tool results (``include_tools``), and messages with no text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from recalld import _validate as check
from recalld._schema import DATE_TIME, NAME_PATTERN, NO_NUL_PATTERN, extra, nullable, replaced
from recalld._time import Clock, parse_instant
from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.model import TAGS_SCHEMA, Memory, Moment, NewMemory, Receipt
from recalld.store.base import Scope, Store, StoreTransaction
from recalld.writing import expired

if TYPE_CHECKING:
    from recalld.writing import Writer

__all__ = [
    "MAX_MESSAGES",
    "TURN_KIND",
    "Conversation",
    "ConversationMessage",
    "ConversationReport",
    "Conversations",
    "SkippedMessage",
    "TurnReceipt",
    "role_kind",
]

TURN_KIND = "turn"
MAX_MESSAGES = 10_000
CHUNK_TURNS = 500
ID_MAX_CHARS = 200
SPEAKER_MAX_CHARS = 200
ROLE_MAX_CHARS = 100
SOURCE_PREFIX = "recalld://conversation/"

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
        description="when it was said (default: the conversation's at, else now)",
        json_schema_extra=replaced(nullable(DATE_TIME)),
    )
    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_CHARS,
        description="the message's id in its source, for idempotent re-ingestion",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )


class Conversation(BaseModel):
    """A transcript to remember (``POST /v1/conversations``, ``remember_conversation``)."""

    model_config = ConfigDict(extra="forbid")

    messages: list[ConversationMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    conversation: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_CHARS,
        description="the conversation's id (default: derived from its first message)",
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


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


class Conversations:
    """Transcripts into turns (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        writer: Writer,
        namespace_of: Callable[[str | None], str],
        after_drop: Callable[[], object],
    ) -> None:
        self._store = store
        self._settings = settings
        self._clock = clock
        self._writer = writer
        self._namespace_of = namespace_of
        self._after_drop = after_drop

    def remember(
        self,
        conversation: Conversation | dict[str, Any],
        *,
        namespace: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> ConversationReport:
        """Store each kept message of ``conversation`` as a turn. Every field is checked
        first (nothing is written when one is wrong, and the error names it); turns are
        written in chunks of :data:`CHUNK_TURNS`, ``progress(done, total)`` after each."""
        parsed = (
            conversation
            if isinstance(conversation, Conversation)
            else check.parse_model(Conversation, conversation)
        )
        scope_namespace = self._namespace_of(namespace)
        if not parsed.messages:
            raise ValidationError("messages", "give at least one message")
        self._check(parsed)
        conversation_id = parsed.conversation or self._derived_id(parsed.messages)
        check.name_text(conversation_id, "conversation")
        source = parsed.source or SOURCE_PREFIX + quote(conversation_id, safe="")
        check.name_text(source, "source")
        report = ConversationReport(conversation=conversation_id, source=source)
        kept: list[tuple[int, ConversationMessage]] = []
        for index, message in enumerate(parsed.messages):
            reason = self._skip_reason(message, parsed)
            if reason is not None:
                report.skipped += 1
                report.skipped_messages.append(SkippedMessage(index=index, reason=reason))
            else:
                kept.append((index, message))
        for start in range(0, len(kept), CHUNK_TURNS):
            with self._store.transaction() as tx:
                for index, message in kept[start : start + CHUNK_TURNS]:
                    receipt = self._turn(
                        tx, scope_namespace, parsed, conversation_id, source, index, message, report
                    )
                    report.turns.append(TurnReceipt(index=index, receipt=receipt))
            if progress is not None:
                progress(min(start + CHUNK_TURNS, len(kept)), len(kept))
        if report.updated:
            self._after_drop()  # an edited message's old text leaves the files too
        return report

    def _check(self, conversation: Conversation) -> None:
        """Check every field up front, skipped messages too: nothing is written unless the
        whole conversation is well formed."""
        check.optional_text(conversation.title, "title")
        if conversation.at is not None:
            parse_instant("at", conversation.at)
        check.tags(conversation.tags, self._settings)
        for index, message in enumerate(conversation.messages):
            prefix = f"messages[{index}]."
            check.free_text(message.content, prefix + "content")
            check.optional_name(message.role, prefix + "role")
            check.optional_name(message.speaker, prefix + "speaker")
            check.optional_name(message.id, prefix + "id")
            if message.at is not None:
                parse_instant(prefix + "at", message.at)

    @staticmethod
    def _skip_reason(message: ConversationMessage, conversation: Conversation) -> str | None:
        kind = role_kind(message.role)
        if kind == "system" and not conversation.include_system:
            return f"a {message.role} message (include_system keeps them)"
        if kind == "tool" and not conversation.include_tools:
            return f"a {message.role} message (include_tools keeps them)"
        if not message.content.strip():
            return "no text"
        return None

    @staticmethod
    def _derived_id(messages: Sequence[ConversationMessage]) -> str:
        first = messages[0]
        if first.id is not None:
            return "c-" + _digest("id", first.id)[:32]
        at = first.at.isoformat() if isinstance(first.at, datetime) else str(first.at or "")
        return "c-" + _digest(first.speaker or first.role or "", at, first.content)[:32]

    def _turn(
        self,
        tx: StoreTransaction,
        namespace: str,
        conversation: Conversation,
        conversation_id: str,
        source: str,
        index: int,
        message: ConversationMessage,
        report: ConversationReport,
    ) -> Receipt:
        prefix = f"messages[{index}]."
        role = None if message.role is None else check.name_text(message.role, prefix + "role")
        speaker = message.speaker or ROLE_SPEAKERS.get((role or "").lower(), role)
        if speaker is not None:
            check.name_text(speaker, prefix + "speaker")
            speaker = check.speaker(speaker)
        message_key = message.id if message.id is not None else f"#{index}"
        memory_id = "turn-" + _digest(conversation_id, message_key)[:40]
        meta: dict[str, Any] = {"conversation": conversation_id, "turn": index}
        if conversation.title:
            meta["conversation_title"] = conversation.title
        if role is not None:
            meta["role"] = role
        if message.id is not None:
            meta["message_id"] = message.id
        at = message.at if message.at is not None else conversation.at
        try:
            draft = NewMemory.model_validate(
                {
                    "id": memory_id,
                    "content": message.content,
                    "kind": TURN_KIND,
                    "source": source,
                    "speaker": speaker,
                    "at": at,
                    "tags": conversation.tags,
                    "meta": meta,
                }
            )
            existing = tx.find(namespace, id=memory_id)
            if existing is not None and expired(existing, self._clock()):
                existing = None  # written fresh (the write frees the expired id)
            if existing is not None:
                same = (existing.content, existing.meta, existing.speaker)
                if same == (draft.content, meta, speaker):
                    report.unchanged += 1
                    return _receipt(existing, "unchanged")
                changes: dict[str, Any] = {"content": draft.content, "meta": meta}
                if draft.at is not None:  # a turn without a time keeps the one it had
                    changes["at"] = draft.at
                changes["speaker"] = speaker
                memory, _ = self._writer.updated(tx, existing, changes, self._clock())
                report.updated += 1
                return _receipt(memory, "overwritten")
            receipt, _ = self._writer.write(tx, draft, namespace)
        except ValidationError as error:
            raise ValidationError(prefix + error.field, error.message) from None
        report.created += 1
        return receipt

    def turns(
        self, source: str, *, namespace: str | None = None, limit: int = 1000
    ) -> list[Memory]:
        """The live turns of the conversation whose ``source`` is given, in order."""
        scope_namespace = self._namespace_of(namespace)
        check.limit(limit, self._settings)
        scope = Scope(namespaces=(scope_namespace,), now=self._clock())
        return self._store.by_source(scope, source, limit=limit)


def _receipt(memory: Memory, status: str) -> Receipt:
    from recalld.writing import receipt_of

    return receipt_of(memory, status)
