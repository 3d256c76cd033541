"""Conversations: a transcript becomes one memory per turn, in order, idempotent by message.

Each message carries ``content`` and a ``role`` (``user``, ``assistant``,
``system``, ``tool`` …) or a ``speaker`` (a person's name), optionally ``at``
and ``id``. Every kept turn is a memory of kind ``turn`` whose ``speaker`` is
the message's speaker (else its role), whose ``source`` is the conversation
(``recalld://conversation/<id>``, or the source given) and whose ``meta``
holds the conversation id and title, the turn's position and role, and the
message id. Turns keep their order (one ``source`` per conversation, ``seq``
in turn order: recall's neighbouring-turn feature reads exactly that);
``meta.turn`` is the message's position in the transcript (a stored turn keeps
its own: a window of the latest messages re-sent renumbers nothing), and
:meth:`Conversations.turns` lists a conversation's turns in order (by
``at``, then by the order they were written), so the turns around a
recalled one can be read with it.

Idempotent: a turn's memory id is derived from the conversation id and the
message id (or, without one, its position in the conversation), so ingesting
the same transcript again changes nothing (``unchanged``), a transcript that
grew adds only its new turns, and a message whose text changed is updated in
place (its speaker, time, title and tags too). A message id must be unique
within the transcript: one that repeats an earlier message's is refused (it would
overwrite that message's turn in the same send). A turn stored under another
source that says something else is a conflict (:class:`ConflictError` naming
``source``), with or without message ids.

Without a conversation id, one is derived from the transcript's start, and a send
under a derived id never changes a stored turn (:meth:`Conversations._plan`): it
takes the first of its derived ids (:func:`derived_ids`: the first message's, so a
re-ingested file that only grew keeps its id, then one per longer start of it) under
which it changes no stored turn and, when it adds turns, repeats every stored one. Two
chats that open alike (a system prompt, "hi", message ids from "1") are two
conversations so; an edited one is stored apart too (give the conversation id to edit
turns), and so is a window of the latest messages, which lost the start its id comes
from (give the conversation id when sending windows).

A send of more than :data:`CHUNK_TURNS` turns is written in one transaction per chunk,
each holding the conversation: a turn another writer wrote between two chunks where
this send placed a message without an id is not overwritten; the message is added
after every turn instead, or, when that turn says what the message says, it is the
message, kept as its writer wrote it (its time, tags and meta: :meth:`Conversations._moved`).

Messages without ids are placed by content before position (:func:`placement`):
the re-send is aligned with the stored turns as a diff aligns two texts, so a
re-send of the last turns (a window that slid) lands on the stored turns it
repeats and its new turns are appended, and a message the re-send leaves out
(or one it adds between two stored turns) shifts nothing: no stored turn is
overwritten with its neighbour's text. A stored turn is only changed by a
re-send that repeats more than twice as many stored turns as it changes (for
the whole transcript re-sent from its first turn, more than it changes, or as
many when the changed turns are the last); a stored turn the re-send does not
repeat is kept. A new message between two repeated turns takes a position free between
theirs (a forgotten turn sent again goes back into the gap it left), else one after every
stored turn, with the position of the message before it as its anchor (``meta.after``;
-1 before the first): turns are compared in the conversation's order
(:func:`conversation_order`), so the same transcript sent again repeats that turn where
it was sent instead of adding it on every re-send (:func:`placement`).

A message without ``at`` in a transcript whose other messages have one takes the
time of the message before it (one before every timed message, the time of the one
after it), so it keeps its place among the timed turns (:func:`borrowed_times`);
the conversation's ``at``, else now, is for transcripts with no message time at all.
A time taken so is only given to a new turn: a stored turn keeps the time it had.

Skipped unless asked for: system and developer messages (``include_system``),
tool calls and tool results (``include_tools``; in the OpenAI chat format, an
assistant message with ``tool_calls`` and no text, and a ``tool`` message with
``tool_call_id``: :func:`~recalld.conversation_model.turn_text` is what a kept
one says), and messages with no text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from recalld import _validate as check
from recalld._text import shown
from recalld._time import Clock, parse_instant
from recalld.config import Settings
from recalld.conflicts import rerun_on_conflict
from recalld.conversation_ids import conversation_source, derived_ids, turn_id
from recalld.conversation_model import (
    MAX_MESSAGES,
    Conversation,
    ConversationMessage,
    ConversationReport,
    SkippedMessage,
    TurnReceipt,
    conversation_of,
    message_kind,
    role_kind,
    role_name,
    role_speaker,
    speaker_key,
    turn_text,
)
from recalld.conversation_placement import TurnKey, borrowed_times, keyed_positions, placement
from recalld.conversation_spelling import spelled_conversation
from recalld.conversation_stops import stopped_conversation
from recalld.errors import ConflictError, ValidationError
from recalld.model import Memory, NewMemory, Receipt, ScrubState
from recalld.store.base import Scope, Store, StoreTransaction
from recalld.store.retrieval import TURN_KIND
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
    "conversation_of",
    "role_kind",
]

CHUNK_TURNS = 500


@dataclass
class _Plan:
    """Where a send's kept messages go: its conversation, their positions by index, the
    live turn each message with an id would write (by index), and what each turn it
    writes was when placed ((seq, updated_at), or None for a free one) by memory id."""

    conversation_id: str
    source: str
    positions: dict[int, int]
    existing: dict[int, Memory | None]
    seen: dict[str, tuple[int, datetime] | None]
    # Whether a send without a conversation id may take this id (see Conversations._plan).
    joins: bool
    # Whether a live turn of the conversation is stored under this id.
    holds: bool = False
    # The next free position for a message moved by Conversations._moved.
    free: int | None = None
    # The anchor of each anchored turn it writes or keeps, by position (``meta.after``).
    after: dict[int, int] = field(default_factory=dict)


def _key(message: ConversationMessage, position: int) -> str:
    """How the turn of ``message`` is keyed: its id, else its position ("#3")."""
    return message.id if message.id is not None else f"#{position}"


def _text(message: ConversationMessage) -> str:
    """What ``message`` says (a kept message's copy holds its turn's text: turn_text)."""
    return message.content or ""


class Conversations:
    """Transcripts into turns (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        writer: Writer,
        namespace_of: Callable[[str | None], str],
        after_drop: Callable[[], ScrubState],
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
        if parsed.conversation is not None:
            check.name_text(parsed.conversation, "conversation")
            check.name_text(conversation_source(parsed, parsed.conversation), "source")
            scope = Scope(namespaces=(scope_namespace,), now=self._clock(), kind=TURN_KIND)
            spelled = spelled_conversation(
                self._store, scope, parsed.conversation, partial(conversation_source, parsed)
            )
            parsed = parsed.model_copy(update={"conversation": spelled})
        elif parsed.source is not None:
            check.name_text(parsed.source, "source")
        kept: list[tuple[int, ConversationMessage]] = []
        skipped: list[SkippedMessage] = []
        for index, message in enumerate(parsed.messages):
            reason = self._skip_reason(message, parsed)
            if reason is not None:
                skipped.append(SkippedMessage(index=index, reason=reason))
            else:
                # Its turn's text from here on (a tool call's, rendered: turn_text).
                text = turn_text(message, parsed.include_tools)
                kept.append((index, message.model_copy(update={"content": text})))
        borrowed = borrowed_times(parsed.messages)
        plan: _Plan | None = None
        report: ConversationReport | None = None
        for start in range(0, max(len(kept), 1), CHUNK_TURNS):

            def chunk(
                start: int = start,
                earlier: _Plan | None = plan,
                before: ConversationReport | None = report,
            ) -> tuple[_Plan, ConversationReport]:
                # Run again whole when PostgreSQL breaks it as a deadlock: on copies of the
                # plan and report the chunks before left, so a rolled-back attempt leaves
                # neither a turn counted nor a position taken (adversarial pass a68).
                with self._store.transaction() as tx:
                    if earlier is None or before is None:
                        # Placed while this send holds the conversation, so two sends of
                        # new turns cannot both take the same free positions; and checked
                        # before the first chunk: a conflict found in a later one would
                        # leave the earlier chunks written.
                        placed = self._plan(tx, scope_namespace, parsed, kept)
                        told = ConversationReport(
                            conversation=placed.conversation_id,
                            source=placed.source,
                            skipped=len(skipped),
                            skipped_messages=skipped,
                        )
                    else:
                        placed = replace(
                            earlier,
                            positions=dict(earlier.positions),
                            seen=dict(earlier.seen),
                            after=dict(earlier.after),
                        )
                        told = before.model_copy(update={"turns": list(before.turns)})
                        # A later chunk, in its own transaction: another writer may have
                        # written to the conversation since the first (see _moved).
                        tx.serialise("conversation", scope_namespace, placed.conversation_id)
                    for index, message in kept[start : start + CHUNK_TURNS]:
                        self._write_turn(
                            tx,
                            scope_namespace,
                            parsed,
                            placed,
                            told,
                            start > 0,
                            index,
                            message,
                            borrowed[index],
                        )
                return placed, told

            with stopped_conversation(report, kept[start : start + CHUNK_TURNS]):
                plan, report = rerun_on_conflict(chunk, what="remember_conversation")
            if progress is not None and kept:
                progress(min(start + CHUNK_TURNS, len(kept)), len(kept))
        assert report is not None
        dropping = [turn for turn in report.turns if turn.receipt.scrub == "pending"]
        if dropping:
            # An edited message's old text (or an expired turn its id freed) leaves the
            # files too, and its receipt says whether it has yet, as remember's does.
            scrub = self._after_drop()
            for turn in dropping:
                turn.receipt = turn.receipt.model_copy(update={"scrub": scrub})
        return report

    def _write_turn(
        self,
        tx: StoreTransaction,
        namespace: str,
        parsed: Conversation,
        plan: _Plan,
        report: ConversationReport,
        later: bool,
        index: int,
        message: ConversationMessage,
        borrowed: datetime | str | None,
    ) -> None:
        """Write message ``index`` of a send as its turn, in ``report`` (a chunk after the
        first, ``later``, first looks for another writer's turn saying it)."""
        written = None
        if message.id is None and later:
            written = self._moved(tx, namespace, plan, index, message)
        if written is not None:
            # Another writer's turn that says this message's words: it keeps its own
            # time, tags and meta (this send changes nothing there).
            report.unchanged += 1
            report.turns.append(TurnReceipt(index=index, receipt=_receipt(written, "unchanged")))
            return
        position = plan.positions[index]
        receipt = self._turn(
            tx,
            namespace,
            parsed,
            plan.conversation_id,
            plan.source,
            index,
            position,
            message,
            borrowed,
            report,
            None if message.id is not None else plan.after.get(position),
        )
        report.turns.append(TurnReceipt(index=index, receipt=receipt))

    def _check(self, conversation: Conversation) -> None:
        """Check every field up front, skipped messages too: nothing is written unless the
        whole conversation is well formed."""
        check.optional_text(conversation.title, "title")
        if conversation.at is not None:
            parse_instant("at", conversation.at)
        check.tags(conversation.tags, self._settings)
        # A message's id is its turn's identity: a later message with the same id would
        # overwrite the earlier one's turn in this very send, losing what it said.
        first_with_id: dict[str, int] = {}
        for index, message in enumerate(conversation.messages):
            prefix = f"messages[{index}]."
            if message.content is None and not message.tool_calls:
                raise ValidationError(
                    prefix + "content",
                    "Field required: give what was said (only a message with tool_calls"
                    " may have no content)",
                )
            if message.content is not None:
                check.free_text(message.content, prefix + "content")
            self._check_tools(message, prefix)
            # The size of every message that will be kept (a system prompt or a tool's
            # output skipped unless asked for may be larger: it is not stored).
            if self._skip_reason(message, conversation) is None:
                text = turn_text(message, conversation.include_tools)
                check.content(text, self._settings, prefix + "content")
            check.optional_name(message.role, prefix + "role")
            check.optional_name(message.speaker, prefix + "speaker")
            check.optional_name(message.id, prefix + "id")
            if message.id is not None:
                if message.id.startswith("#"):
                    # "#3" is how the message at position 3 without an id is keyed.
                    raise ValidationError(
                        prefix + "id",
                        f"{message.id!r}: a message id must not start with '#' (recalld keys"
                        " the messages without an id so)",
                    )
                first = first_with_id.setdefault(message.id, index)
                if first != index:
                    raise ValidationError(
                        prefix + "id",
                        f"{message.id!r} repeats messages[{first}].id: each message of a"
                        " transcript needs its own id",
                    )
            if message.at is not None:
                parse_instant(prefix + "at", message.at)

    def _plan(
        self,
        tx: StoreTransaction,
        namespace: str,
        conversation: Conversation,
        kept: Sequence[tuple[int, ConversationMessage]],
    ) -> _Plan:
        """Where each kept message goes, under the conversation id given or derived.

        A derived id must never let one transcript change another's turns: two chats
        that open alike (the same system prompt, "hi", or message ids numbered from
        "1") derive the same first id. So a send without a conversation id takes the
        first of its derived ids (:func:`derived_ids`) under which it changes no stored
        turn and, when it adds turns, repeats every stored one (a transcript that grew);
        another transcript moves on to the id of a longer start of itself. Re-sent, it
        finds that id again the same way, and after the chat that held an earlier id is
        forgotten too: an id under which no turn is stored is taken only when no later
        derived id holds turns the send would join (:meth:`_holding`).
        """
        if conversation.conversation is not None:
            tx.serialise("conversation", namespace, conversation.conversation)
            plan = self._placed(tx, namespace, conversation, conversation.conversation, kept)
            for index, message in kept:
                existing = plan.existing[index]
                speaker = _speaker(message, f"messages[{index}].")
                position = plan.positions[index]
                _another_source(
                    existing, plan.conversation_id, plan.source, position, speaker, message
                )
            return plan
        # The ids of its roles in lower case first; then those of its roles as given, where
        # a transcript sent before roles were folded is found (see _holding).
        messages = conversation.messages
        candidates = list(
            dict.fromkeys([*derived_ids(messages, folded=True), *derived_ids(messages)])
        )
        first = candidates[0]
        # Every send that opens alike holds its first id, so two cannot both take one free
        # derived id; an explicit send under a derived id holds that id only.
        tx.serialise("conversation", namespace, first)
        vacant: _Plan | None = None
        for number, conversation_id in enumerate(candidates):
            if conversation_id != first:
                tx.serialise("conversation", namespace, conversation_id)
            plan = self._placed(tx, namespace, conversation, conversation_id, kept)
            if plan.joins and (plan.holds or vacant is not None):
                return plan
            if plan.joins:
                # No turn stored under this id: yet the transcript may be stored under a
                # later one, taken while a chat that opens alike held this one (forgotten
                # since). It is found there; only a transcript stored nowhere takes this.
                vacant = plan
                held = self._holding(namespace, conversation, candidates[number + 1 :])
                if not held:
                    return plan
                candidates[number + 1 :] = held
        if vacant is not None:
            return vacant
        raise ConflictError(
            "conversation",
            f"every id derived from this transcript ({first!r} …) holds another transcript"
            " whose turns it would change: send it with a conversation id",
        )

    def _placed(
        self,
        tx: StoreTransaction,
        namespace: str,
        conversation: Conversation,
        conversation_id: str,
        kept: Sequence[tuple[int, ConversationMessage]],
    ) -> _Plan:
        """The plan of ``kept`` under ``conversation_id``: the messages without an id are
        placed by content (:func:`placement`: the stored turns are compared by speaker and
        text), those with one by the stored turn of their id (:func:`keyed_positions`)."""
        source = conversation_source(conversation, conversation_id)
        scope = Scope(namespaces=(namespace,), now=self._clock(), kind=TURN_KIND)
        stored: dict[int, TurnKey] = {}
        after: dict[int, int] = {}
        stored_ids: set[str] = set()
        taken: set[int] = set()
        # Only what placing needs of each stored turn (a conversation may hold 100,000), and
        # its text only when a message without an id is placed by content.
        texts = any(message.id is None for _, message in kept)
        for stored_turn in self._store.source_turns(scope, source, texts=texts):
            position = stored_turn.meta.get("turn")
            message_id = stored_turn.meta.get("message_id")
            key = message_id if isinstance(message_id, str) else f"#{position}"
            if type(position) is not int or stored_turn.id != turn_id(conversation_id, key):
                continue  # another conversation's turn under the same source
            stored_ids.add(stored_turn.id)
            taken.add(position)
            if message_id is None and position >= 0:
                if stored_turn.content is not None:
                    stored[position] = (speaker_key(stored_turn.speaker), stored_turn.content)
                anchor = stored_turn.meta.get("after")
                if type(anchor) is int:
                    after[position] = anchor
        sent = [
            (index, (speaker_key(_speaker(message, f"messages[{index}].")), _text(message)))
            for index, message in kept
            if message.id is None
        ]
        # A send under a derived id is not known to be this transcript's: one whose every
        # message another chat that opens alike also holds is that chat only when the diff
        # aligns it so (see _plan), never by scattered repeats.
        derived = conversation.conversation is None
        placed, anchored = placement(stored, sent, taken, after, repeats=not derived)
        now = self._clock()
        existing: dict[int, Memory | None] = {}
        kept_at: dict[int, int] = {}
        for index, message in kept:
            if message.id is None:
                continue
            found = tx.find(namespace, id=turn_id(conversation_id, message.id))
            existing[index] = None if found is None or expired(found, now) else found
            position = None if found is None else found.meta.get("turn")
            if existing[index] is not None and type(position) is int and position >= 0:
                kept_at[index] = position
        positions = keyed_positions(
            [(index, message.id) for index, message in kept], placed, kept_at, taken
        )
        plan = _Plan(conversation_id, source, positions, existing, {}, joins=True)
        plan.after = {**after, **anchored}
        plan.holds = bool(stored_ids)
        repeated: set[str] = set()
        grows = False
        said: list[int | None] = []  # in the send's order: a repeated turn's position
        for index, message in kept:
            memory_id = turn_id(conversation_id, _key(message, positions[index]))
            if message.id is None:
                found = tx.find(namespace, id=memory_id)
                existing[index] = None if found is None or expired(found, now) else found
            turn = existing[index]
            plan.seen[memory_id] = None if turn is None else (turn.seq, turn.updated_at)
            speaker = _speaker(message, f"messages[{index}].")
            same = turn is not None and _says(turn, speaker, message)
            said.append(positions[index] if same else None)
            if turn is None:
                grows = True
            elif same:
                repeated.add(turn.id)
            else:
                plan.joins = False  # it would change a stored turn
        if grows and not (stored_ids <= repeated and _fits(said)):
            # It adds turns, yet leaves stored ones out, or says new ones where the stored
            # transcript has no room for them (another chat that opens and ends alike).
            # A turn forgotten since and sent again fits the gap it left.
            plan.joins = False
        return plan

    def _holding(
        self, namespace: str, conversation: Conversation, conversation_ids: Sequence[str]
    ) -> list[str]:
        """Those of ``conversation_ids`` (derived ids, in order) under which a live turn is
        stored: a look at one turn of each source (of every turn of the one source given)."""
        scope = Scope(namespaces=(namespace,), now=self._clock(), kind=TURN_KIND)
        if conversation.source is None:
            return [
                conversation_id
                for conversation_id in conversation_ids
                if self._store.by_source(
                    scope, conversation_source(conversation, conversation_id), limit=1
                )
            ]
        stored = self._store.source_turns(scope, conversation.source, texts=False)
        found = {turn.meta.get("conversation") for turn in stored}
        return [conversation_id for conversation_id in conversation_ids if conversation_id in found]

    def _moved(
        self,
        tx: StoreTransaction,
        namespace: str,
        plan: _Plan,
        index: int,
        message: ConversationMessage,
    ) -> Memory | None:
        """Give the message ``index`` (without an id) a new position after every turn when
        another writer has written the turn at the one it was placed at since the send was
        placed (a send written in several chunks holds the conversation in each, not
        between them): that writer's acknowledged turn is not overwritten.

        A turn written there since that says what this message says is returned: the
        message is that turn, left as its writer wrote it, with that writer's time, tags
        and meta (the same transcript sent twice at once, or a live client sending the
        message this import holds: the second to write finds it, unchanged)."""
        memory_id = turn_id(plan.conversation_id, f"#{plan.positions[index]}")
        found = tx.find(namespace, id=memory_id)
        if found is None or expired(found, self._clock()):
            return None
        if plan.seen.get(memory_id) == (found.seq, found.updated_at):
            return None
        speaker = _speaker(message, f"messages[{index}].")
        if _says(found, speaker, message):
            return found
        if plan.free is None:
            scope = Scope(namespaces=(namespace,), now=self._clock(), kind=TURN_KIND)
            stored = self._store.source_turns(scope, plan.source, texts=False)
            positions = [turn.meta.get("turn") for turn in stored]
            known = [*plan.positions.values(), *(p for p in positions if type(p) is int)]
            plan.free = max(known) + 1
        while tx.find(namespace, id=turn_id(plan.conversation_id, f"#{plan.free}")) is not None:
            plan.free += 1
        moved_from = plan.positions[index]
        anchor = plan.after.get(moved_from)
        if anchor is not None:
            plan.after[plan.free] = anchor
        # The messages this send anchored after this one follow it to its new position
        # (the old one is the other writer's turn).
        for position, anchored_to in list(plan.after.items()):
            if anchored_to == moved_from and position != moved_from:
                plan.after[position] = plan.free
        plan.positions[index] = plan.free
        plan.seen[turn_id(plan.conversation_id, f"#{plan.free}")] = None
        plan.free += 1
        return None

    @staticmethod
    def _check_tools(message: ConversationMessage, prefix: str) -> None:
        """Check the tool calls of ``message`` and the call a tool message answers."""
        check.optional_name(message.tool_call_id, prefix + "tool_call_id")
        for number, call in enumerate(message.tool_calls or ()):
            field = f"{prefix}tool_calls[{number}]."
            check.optional_name(call.id, field + "id")
            check.name_text(call.function.name, field + "function.name")
            check.free_text(call.function.arguments, field + "function.arguments")

    @staticmethod
    def _skip_reason(message: ConversationMessage, conversation: Conversation) -> str | None:
        kind = message_kind(message)
        if kind == "system" and not conversation.include_system:
            return f"a {message.role} message (include_system keeps them)"
        if kind == "tool" and not conversation.include_tools:
            if role_kind(message.role) != "tool":
                return "a tool call (include_tools keeps them)"
            return f"a {message.role} message (include_tools keeps them)"
        if not turn_text(message, conversation.include_tools).strip():
            return "no text"
        return None

    def _turn(
        self,
        tx: StoreTransaction,
        namespace: str,
        conversation: Conversation,
        conversation_id: str,
        source: str,
        index: int,
        position: int,
        message: ConversationMessage,
        borrowed: datetime | str | None,
        report: ConversationReport,
        after: int | None = None,
    ) -> Receipt:
        """Write the message ``index`` of the re-send as the turn at ``position`` of the
        conversation (its index, unless a re-send without ids was placed by content).
        ``borrowed`` is the time it takes from its neighbours (:func:`borrowed_times`);
        ``after`` its turn's anchor (``meta.after``: see :func:`conversation_order`)."""
        prefix = f"messages[{index}]."
        role = None if message.role is None else check.name_text(message.role, prefix + "role")
        speaker = _speaker(message, prefix)
        message_key = message.id if message.id is not None else f"#{position}"
        memory_id = turn_id(conversation_id, message_key)
        meta: dict[str, Any] = {"conversation": conversation_id, "turn": position}
        if after is not None:
            meta["after"] = after
        if conversation.title:
            meta["conversation_title"] = conversation.title
        if role is not None:
            meta["role"] = role_name(role)
        if message.id is not None:
            meta["message_id"] = message.id
        if message.tool_call_id is not None:
            meta["tool_call_id"] = message.tool_call_id
        calls = [call.id for call in message.tool_calls or () if call.id is not None]
        if calls and conversation.include_tools:
            meta["tool_call_ids"] = calls
        given = message.at
        if given is None and borrowed is None:
            given = conversation.at
        try:
            draft = NewMemory.model_validate(
                {
                    "id": memory_id,
                    "content": message.content,
                    "kind": TURN_KIND,
                    "source": source,
                    "speaker": speaker,
                    "at": given if borrowed is None else borrowed,
                    "tags": conversation.tags,
                    "meta": meta,
                }
            )
            existing = tx.find(namespace, id=memory_id)
            if existing is not None and expired(existing, self._clock()):
                existing = None  # written fresh (the write frees the expired id)
            _another_source(existing, conversation_id, source, position, speaker, message)
            if existing is not None:
                tags = list(check.tags(draft.tags, self._settings))
                # A turn without a time keeps the one it had, and so does one whose time
                # was borrowed (a window that slid may lend it the next turn's instead).
                moment = None if given is None else parse_instant(prefix + "at", given)
                same = (existing.content, existing.meta, existing.speaker, list(existing.tags))
                if same == (draft.content, meta, speaker, tags) and moment in (None, existing.at):
                    report.unchanged += 1
                    return _receipt(existing, "unchanged")
                changes: dict[str, Any] = {"content": draft.content, "meta": meta, "tags": tags}
                if moment is not None:
                    changes["at"] = draft.at
                changes["speaker"] = speaker
                memory, dropped = self._writer.updated(tx, existing, changes, self._clock())
                report.updated += 1
                return _receipt(memory, "overwritten", "pending" if dropped else "none")
            receipt, _ = self._writer.write(tx, draft, namespace)
        except ValidationError as error:
            raise ValidationError(prefix + error.field, error.message) from None
        report.created += 1
        return receipt

    def turns(
        self,
        source: str,
        *,
        namespace: str | None = None,
        limit: int | None = None,
        after: str | None = None,
    ) -> list[Memory]:
        """The live turns of the conversation whose ``source`` is given, in order (at most
        ``limit``: 1000 by default, ``max_limit`` when that is lower); ``after`` (the id of
        one of its turns, the last of a page): only those that follow it, so a conversation
        longer than a page is read a page at a time (it could be read only to its 1,000th
        turn)."""
        scope_namespace = self._namespace_of(namespace)
        limit = check.limit(limit, self._settings, default=1000)
        scope = Scope(namespaces=(scope_namespace,), now=self._clock())
        beside = None
        if after is not None:
            check.lookup(after, "after")
            turn = self._store.get(scope, id=after)
            if turn is None or turn.source != source or turn.at is None:
                raise ValidationError(
                    "after",
                    f"{shown(after)} is no live turn of {shown(source)} in {scope_namespace!r}",
                )
            beside = (turn.at, turn.seq)
        return self._store.by_source(scope, source, limit=limit, beside=beside)


def _another_source(
    existing: Memory | None,
    conversation_id: str,
    source: str,
    position: int,
    speaker: str | None,
    message: ConversationMessage,
) -> None:
    """Refuse ``message`` when ``existing``, the turn it would write (the one of its id, else
    the one at ``position``), came from another source and says something else.

    The same conversation id sent under another source: its turns were not found by
    this source (:meth:`Conversations._placed` looks them up by source), so this turn
    is another transcript's. The same words (a file that moved) are no conflict.
    """
    if existing is not None and existing.source != source and not _says(existing, speaker, message):
        turn = f"turn {position}" if message.id is None else f"message {message.id!r}"
        raise ConflictError(
            "source",
            f"conversation {conversation_id!r} is stored under the source"
            f" {existing.source!r}, and its {turn} says something else:"
            " send it with that source, or under another conversation id",
        )


def _says(turn: Memory, speaker: str | None, message: ConversationMessage) -> bool:
    """Whether the stored ``turn`` says what ``message``, by ``speaker``, says (a known
    role's name in any case is one speaker: :func:`speaker_key`)."""
    return (speaker_key(turn.speaker), turn.content) == (speaker_key(speaker), message.content)


def _speaker(message: ConversationMessage, prefix: str) -> str | None:
    """Who said ``message`` as its turn stores it: its speaker, else its role's name."""
    role = message.role
    speaker = message.speaker or (None if role is None else role_speaker(role))
    if speaker is None:
        return None
    check.name_text(speaker, prefix + "speaker")
    return check.speaker(speaker)


def _receipt(memory: Memory, status: str, scrub: ScrubState = "none") -> Receipt:
    from recalld.writing import receipt_of

    return receipt_of(memory, status, scrub=scrub)


def _fits(said: Sequence[int | None]) -> bool:
    """Whether the new messages of a send (None, in its order, among the stored positions
    of the turns it repeats) fit where the stored transcript leaves room: as many as the
    positions free between the repeated turns around them, and any number after the last."""
    before = -1
    waiting = 0
    for position in said:
        if position is None:
            waiting += 1
            continue
        if waiting and (position <= before or position - before - 1 < waiting):
            return False
        before, waiting = position, 0
    return True
