"""Writing one memory inside a transaction: validation, key upserts, client ids, duplicates.

The rules every write follows, whichever surface it came from (the service's
``remember``, imports, conversations, intentions, the knowledge tools):

- a ``key`` already held in the namespace is overwritten (every field replaced,
  id, seq and ``created_at`` kept); an expired key is written fresh;
- a client ``id`` is unique per namespace; the same id with the same content
  again is ``unchanged`` (retries are safe), with other content a conflict;
- **no silent duplicates**: a write asked to deduplicate (``dedupe=True``),
  that names neither a key nor an id, whose content equals a live keyless
  memory's of the namespace once white space is normalised, and whose ``at``,
  ``speaker``, place, source and title, when it names them, are that memory's,
  creates nothing and answers that memory's receipt with ``status: "duplicate"``
  ("ok" said by someone else, or at another time the write names, is another
  memory; so are the same directions under another title). A write
  that would live longer gives the memory its later expiry (a permanent note after
  one with a TTL makes it permanent: what it acknowledges must not expire with the
  first), and a memory another structure owns (:data:`OWNED_KINDS`) answers only for
  a write of its own kind. Writes that
  name an id (a conversation's turns, an import's records) are distinct by
  that id, and writes of events or structures (experiences, intentions,
  observations) do not deduplicate: the same words at another time or place,
  or about another entity, are another memory.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from recalld import _validate as check
from recalld._text import new_id, normalized_content
from recalld._time import Clock, expiry, local_time, parse_instant
from recalld.config import Settings
from recalld.errors import ConflictError
from recalld.knowledge_bounds import check_observation_edit
from recalld.model import Memory, NewMemory, Receipt, ScrubState, key_spellings
from recalld.store.base import MemoryRecord, StoreTransaction
from recalld.store.retrieval import TURN_KIND

if TYPE_CHECKING:
    from recalld.indexing import Indexing

__all__ = [
    "INTENTION_KIND",
    "OWNED_KINDS",
    "TEXT_FIELDS",
    "Writer",
    "dropped_text",
    "expired",
    "kind_as_stored",
    "receipt_of",
]

# The kind of a reminder's memory: written with its triggers by the intentions component,
# never by remember, update or an import line without its id (a note of that kind would
# have no trigger and never be recollected; an intention of another kind would also fire
# as a recollection).
INTENTION_KIND = "intention"
# The kinds of memory another structure owns: a conversation's turns (an edit of the
# conversation rewrites them), an entity's observations (deleting the entity deletes
# them) and a reminder's intention (forgetting the reminder forgets it). A write of the
# same words of another kind is never answered by one of them: it would go with its owner.
OWNED_KINDS = frozenset({TURN_KIND, "observation", INTENTION_KIND})


def kind_as_stored(value: str) -> str:
    """A kind as an older version may have stored it: trimmed, in NFC, its shortest
    spelling within the limit, unless trimming makes it a kind another structure owns
    (:data:`OWNED_KINDS`): an older version stored " intention" as any other kind
    (migration 31 leaves it so), and trimmed, an imported memory became a reminder's
    without its reminder (or an observation, a turn) and a ``kind`` filter never found it.
    Such a kind stays as given, in NFC. The import and the ``kind`` filter read kinds so
    (adversarial pass a67, review of pass e66)."""
    kind = check.kind(value, as_given=True)
    if kind in OWNED_KINDS and kind != value:
        return unicodedata.normalize("NFC", value)
    return kind


# Fields whose old value leaves the files (and must be scrubbed) when an update changes
# them: every text a caller wrote (the speaker's name too), where it happened (the
# place: its coordinates, geohash and name) and when (``at``: the time of a visit says
# as much as its place).
TEXT_FIELDS = (
    "content",
    "title",
    "key",
    "kind",
    "category",
    "tags",
    "source",
    "meta",
    "speaker",
    "place",
    "at",
)


# The optional fields an update may clear (content and kind stay): the native MCP
# ``update`` tool's ``clear`` and the CLI's ``update --clear``.
Clearable = Literal[
    "title",
    "category",
    "tags",
    "salience",
    "source",
    "speaker",
    "at",
    "ttl_seconds",
    "place",
    "meta",
]


def expired(memory: Memory, now: datetime) -> bool:
    """Whether the memory's TTL has passed at ``now``."""
    return memory.expires_at is not None and memory.expires_at <= now


def find_key(tx: StoreTransaction, namespace: str, key: str) -> Memory | None:
    """The row under ``key`` in the namespace, expired or not, in whichever spelling it
    was stored (:func:`~recalld.model.key_spellings`): a memory written before keys were
    kept in NFC is overwritten under its key, not twinned by a new NFC row."""
    for spelling in key_spellings(key):
        found = tx.find(namespace, key=spelling)
        if found is not None:
            return found
    return None


def receipt_of(
    memory: Memory, status: str, job_id: str | None = None, *, scrub: ScrubState = "none"
) -> Receipt:
    """The receipt of a write that left ``memory`` with ``status``."""
    return Receipt.model_validate(
        {
            "id": memory.id,
            "seq": memory.seq,
            "namespace": memory.namespace,
            "status": status,
            "created": status == "created",
            "index_state": memory.index_state,
            "job_id": job_id,
            "scrub": scrub,
        }
    )


def dropped_text(before: Memory, after: Memory) -> bool:
    """Whether an update replaced any stored text or place (which then needs scrubbing)."""
    return any(getattr(before, name) != getattr(after, name) for name in TEXT_FIELDS)


# The fields an update keeps as stored when it does not change them, each with a value
# that passes its check in their place (see Writer.updated). The names too: an older
# version stored a source, speaker or key holding a character today's names refuse (a
# zero-width space, a line break), and every edit of the memory was refused naming it
# (review of pass a67); the key is never changed by an edit, so it is always kept.
_KEPT_AS_STORED: dict[str, Any] = {
    "content": "kept",
    "title": None,
    "category": None,
    "tags": [],
    "meta": {},
    "key": None,
    "source": None,
    "speaker": None,
}


class Writer:
    """Turns validated drafts into stored rows; see the module docstring."""

    def __init__(self, settings: Settings, clock: Clock, indexing: Callable[[], Indexing]) -> None:
        self._settings = settings
        self._clock = clock
        self._indexing = indexing

    def record(
        self,
        draft: NewMemory,
        namespace: str,
        now: datetime,
        *,
        id: str,
        created_at: datetime,
        access_count: int = 0,
        last_accessed_at: datetime | None = None,
    ) -> MemoryRecord:
        """The row a draft becomes (every field checked, naming the field on failure)."""
        settings = self._settings
        return MemoryRecord(
            id=id,
            namespace=namespace,
            key=check.optional_name(draft.key, "key"),
            title=check.optional_text(draft.title, "title"),
            content=check.content(draft.content, settings),
            kind=check.kind(draft.kind),
            category=check.category(draft.category),
            tags=check.tags(draft.tags, settings),
            salience=draft.salience,
            source=check.optional_name(draft.source, "source"),
            speaker=check.speaker(draft.speaker),
            at=(
                parse_instant("at", draft.at)
                if draft.at is not None
                else local_time(now, settings.zone)
            ),
            created_at=created_at,
            updated_at=now,
            expires_at=None if draft.ttl_seconds is None else expiry(now, draft.ttl_seconds),
            place=None if draft.place is None else check.place(draft.place),
            meta=check.meta(draft.meta, settings),
            access_count=access_count,
            last_accessed_at=last_accessed_at,
            index_state=self._indexing().new_index_state(),
        )

    def record_over(
        self, draft: NewMemory, namespace: str, now: datetime, existing: Memory
    ) -> MemoryRecord:
        """The row ``draft`` becomes when it overwrites ``existing`` (the memory under its
        key): the same id, creation time and access counts."""
        return self.record(
            draft,
            namespace,
            now,
            id=existing.id,
            created_at=existing.created_at,
            access_count=existing.access_count,
            last_accessed_at=existing.last_accessed_at,
        )

    def write(
        self,
        tx: StoreTransaction,
        draft: NewMemory,
        namespace: str,
        *,
        dedupe: bool = False,
        expires_at: datetime | None = None,
    ) -> tuple[Receipt, Memory]:
        """Write one draft in ``tx``; a receipt whose ``scrub`` is ``"pending"`` means the
        write dropped content (an overwrite, or an expired memory holding its key or id,
        deleted) and the caller must scrub after the commit.
        ``expires_at`` is a new memory's expiry when the draft has no TTL (an imported
        line's own; a duplicate must live as long)."""
        now = self._clock()
        indexing = self._indexing()
        if draft.id is not None:
            check.memory_id(draft.id)
        check.key(draft.key)  # a new key; one stored before the rule may still be updated
        check.new_speaker(draft.speaker)  # so is a speaker (record() takes a stored one)
        # An expired memory deleted to free the key or id: its text leaves the files too.
        scrub: ScrubState = "none"
        if draft.key is not None:
            existing = find_key(tx, namespace, draft.key)
            if existing is not None and expired(existing, now):
                tx.delete(existing.seq)
                tx.dropped_content("expired key", now)
                scrub = "pending"
                existing = None
            if existing is not None:
                if draft.id is not None and draft.id != existing.id:
                    raise ConflictError(
                        "id", f"key {draft.key!r} belongs to memory {existing.id}, not {draft.id}"
                    )
                record = self.record_over(draft, namespace, now, existing)
                record, reindex = indexing.keep_index_state(record, existing)
                check_observation_edit(tx.graph, existing.seq, existing.content, record.content)
                memory = tx.replace(existing.seq, record)
                tx.dropped_content("overwrite", now)
                job_id = indexing.enqueue(tx, memory, now, previous=existing, embed=reindex)
                return receipt_of(memory, "overwritten", job_id, scrub="pending"), memory
        if draft.id is not None:
            # Ids are unique per namespace: whether an id exists in another namespace
            # changes nothing here, so no answer can reveal it.
            taken = tx.find(namespace, id=draft.id)
            if taken is not None and expired(taken, now):
                # As an expired key: the id is free again (the purge would delete the
                # memory), so this write lands instead of answering for what no read sees.
                tx.delete(taken.seq)
                tx.dropped_content("expired id", now)
                scrub = "pending"
                taken = None
            if taken is not None:
                if taken.content == draft.content and taken.key == draft.key:
                    return receipt_of(taken, "unchanged", scrub=scrub), taken
                raise ConflictError(
                    "id", f"id {draft.id!r} already names another memory in {namespace!r}"
                )
        record = self.record(draft, namespace, now, id=draft.id or new_id(), created_at=now)
        if expires_at is not None and record.expires_at is None:
            record = replace(record, expires_at=expires_at)
        if dedupe and draft.key is None and draft.id is None:
            # The time, the speaker, the place, the source and the title a write names are
            # part of what it says: a chat's "ok" by someone else, "parked next to the blue
            # pillar" at another time or car park, a finding from another source, or
            # rover's same directions labelled "kitchen entrance" and "bathroom entrance",
            # is another memory.
            repeated = tx.find_duplicate(
                namespace,
                record.content,
                now,
                at=None if draft.at is None else record.at,
                speaker=None if draft.speaker is None else record.speaker,
                accept=lambda stored: (
                    _answers_for(stored, record)
                    and (draft.place is None or stored.place == record.place)
                    and (draft.source is None or stored.source == record.source)
                    and _same_title(draft.title, stored.title)
                ),
            )
            if repeated is not None and _outlives(record, repeated):
                # The same words asked to live longer (a permanent note after one with a
                # TTL): the memory takes the later expiry, so what this write acknowledges
                # does not go when the earlier one would have. Gone meanwhile (another
                # client's forget): this write is new.
                extended = tx.extend_expiry(repeated.seq, record.expires_at, now)
                repeated = tx.find(namespace, id=repeated.id) if extended else None
            if repeated is not None:
                return receipt_of(repeated, "duplicate"), repeated
        memory = tx.insert(record)
        job_id = indexing.enqueue(tx, memory, now)
        return receipt_of(memory, "created", job_id, scrub=scrub), memory

    def updated(
        self, tx: StoreTransaction, current: Memory, patch: dict[str, Any], now: datetime
    ) -> tuple[Memory, bool]:
        """Apply the fields of ``patch`` (already validated; ``None`` clears) to ``current``;
        the stored memory and whether text was dropped (a scrub is due after the commit)."""
        if patch.get("speaker") is not None and check.speaker(patch["speaker"]) != current.speaker:
            check.new_speaker(patch["speaker"])  # a new name; the stored one may stay
        draft = NewMemory.model_construct(
            content=current.content,
            key=current.key,
            title=current.title,
            kind=current.kind,
            category=current.category,
            tags=current.tags,
            salience=current.salience,
            source=current.source or None,  # "" was accepted before sources were checked
            speaker=current.speaker,
            at=current.at,
            meta=current.meta,
            place=None,
            ttl_seconds=None,
            id=None,
        )
        # A field the patch leaves is kept as stored, not checked again: an older version
        # (or a lowered RECALLD_MAX_*) may have stored a tag, content or meta past today's
        # limits, and the memory could then not be edited at all, not even to fix it
        # (adversarial pass a67). Each is checked with a value that passes, then put back.
        kept = {
            name: placeholder for name, placeholder in _KEPT_AS_STORED.items() if name not in patch
        }
        draft = draft.model_copy(
            update={
                **kept,
                **{name: value for name, value in patch.items() if name != "ttl_seconds"},
            }
        )
        record = self.record(
            draft,
            current.namespace,
            now,
            id=current.id,
            created_at=current.created_at,
            access_count=current.access_count,
            last_accessed_at=current.last_accessed_at,
        )
        stored: dict[str, Any] = {name: getattr(current, name) for name in kept}
        if "tags" in stored:
            stored["tags"] = tuple(current.tags)
        if "source" in stored:
            stored["source"] = current.source or None  # as the draft above takes it
        record = replace(record, **stored)
        if "ttl_seconds" in patch:
            ttl = patch["ttl_seconds"]
            expires_at = None if ttl is None else expiry(now, ttl)
        else:
            expires_at = current.expires_at
        record = replace(record, expires_at=expires_at)
        if draft.at is None:
            # Cleared now or before: record() would stamp "now" on a memory without a time,
            # so a later edit of any other field gave it one.
            record = replace(record, at=None)
        if "place" not in patch:
            record = replace(record, place=current.place)
        if patch.get("kind", current.kind) == current.kind:
            # Kept as stored: record() trims, and a kind " intention" an older version
            # stored (or an import kept) became a reminder's memory without its reminder,
            # whose kind no edit could change (review of pass e66).
            record = replace(record, kind=current.kind)
        indexing = self._indexing()
        record, reindex = indexing.keep_index_state(record, current)
        check_observation_edit(tx.graph, current.seq, current.content, record.content)
        memory = tx.replace(current.seq, record)
        dropped = dropped_text(current, memory)
        if dropped:
            tx.dropped_content("update", now)
        indexing.enqueue(tx, memory, now, previous=current, embed=reindex)
        return memory, dropped


def _answers_for(stored: Memory, record: MemoryRecord) -> bool:
    """Whether ``stored``, with the same words, may answer for the write of ``record``
    as its duplicate: not owned by another structure (what the write acknowledges must
    not go with the stored one's owner), unless the write is of that kind with the same
    owner (its source and meta: the conversation and turn, the entity)."""
    if stored.kind not in OWNED_KINDS:
        return True
    return (stored.kind, stored.source, stored.meta) == (record.kind, record.source, record.meta)


def _same_title(written: str | None, stored: str | None) -> bool:
    """Whether a write's title lets ``stored`` answer for it: it names none (None or
    blank), or the same one once white space is normalised, as content is compared."""
    if written is None or not written.strip():
        return True
    return normalized_content(written) == normalized_content(stored or "")


def _outlives(record: MemoryRecord, stored: Memory) -> bool:
    """Whether the write of ``record`` asks to live longer than ``stored`` does."""
    if stored.expires_at is None:
        return False
    return record.expires_at is None or record.expires_at > stored.expires_at
