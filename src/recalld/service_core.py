"""The engine's own rules for memories: writes, reads, namespaces, TTLs, duplicates.

:class:`ServiceCore` is the part of :class:`~recalld.service.MemoryService`
that every command needs (remember, get, update, forget, search, recall,
list, stats: the reads are :class:`~recalld.service_reads.ServiceReads`'s);
the service adds its components (core memory, the graph, intentions,
recollections, conversations, imports) on top. It owns the
rules: defaults, validation, key upserts, TTLs, namespaces as walls, which
calls may change state. The store below it only keeps records.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from recalld import _validate as check
from recalld._text import shown
from recalld.conflicts import rerun_on_conflict
from recalld.errors import (
    ConflictError,
    DiskFullError,
    NotFoundError,
    PreconditionFailedError,
    ValidationError,
)
from recalld.model import (
    Forgotten,
    Memory,
    MemoryPatch,
    NewMemory,
    Receipt,
    ScrubState,
)
from recalld.service_reads import ServiceReads
from recalld.store.base import StoreTransaction
from recalld.transfer_senses import checked_senses
from recalld.versions import ABSENT, ANY_VERSION, memory_version
from recalld.writing import INTENTION_KIND, expired

__all__ = ["ServiceCore"]

logger = logging.getLogger(__name__)


class ServiceCore(ServiceReads):
    """Memories in one store: see the module docstring (and :class:`MemoryService`)."""

    def _write(
        self, tx: StoreTransaction, draft: NewMemory, namespace: str, *, dedupe: bool = False
    ) -> tuple[Receipt, Memory]:
        """Write one draft in ``tx`` (see :mod:`recalld.writing`)."""
        return self._writer.write(tx, draft, namespace, dedupe=dedupe)

    # -- writes --------------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        namespace: str | None = None,
        id: str | None = None,
        key: str | None = None,
        title: str | None = None,
        kind: str = "note",
        category: str | None = None,
        tags: Sequence[str] = (),
        salience: float | None = None,
        source: str | None = None,
        speaker: str | None = None,
        at: datetime | str | None = None,
        ttl_seconds: float | None = None,
        place: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Receipt:
        """Store a memory durably and return its receipt.

        With ``key``, writing the same key again in the namespace overwrites the
        memory (content and every field, ``updated_at``) and keeps its id, seq
        and ``created_at``. ``place`` is ``{"lat", "lon"}`` or ``{"geohash"}``
        (optionally ``"name"``); ``at`` is ISO 8601 and keeps its offset;
        ``speaker`` is who said or wrote it (searched as its own field).
        Writing exactly the same content again (white space aside) in the
        namespace, with neither key nor id (and with the same ``at``,
        ``speaker``, ``place``, ``source`` and ``title``, when it names them; a
        title compared white space aside), stores nothing: the
        receipt is the existing memory's, with ``status == "duplicate"``.
        Kind ``intention`` belongs to reminders (:meth:`remind`).
        """
        draft = check.parse_model(
            NewMemory,
            {
                "content": content,
                "id": id,
                "key": key,
                "title": title,
                "kind": kind,
                "category": category,
                "tags": check.listed(tags, "tags"),
                "salience": salience,
                "source": source,
                "speaker": speaker,
                "at": at,
                "ttl_seconds": ttl_seconds,
                "place": place,
                "meta": meta if meta is not None else {},
            },
        )
        return self.remember_many([draft], namespace=namespace)[0]

    def remember_many(
        self, drafts: Iterable[NewMemory | dict[str, Any]], *, namespace: str | None = None
    ) -> list[Receipt]:
        """Store several memories in one transaction: all are written, or none (a repeat of a
        stored memory, or of an earlier draft of the batch, is a ``duplicate`` receipt)."""
        scope_namespace = self._namespace(namespace)
        parsed = [
            draft
            if isinstance(draft, NewMemory)
            else check.parse_model(NewMemory, draft, prefix=f"[{index}].")
            for index, draft in enumerate(check.listed(drafts, "drafts"))
        ]
        for index, draft in enumerate(parsed):
            _not_an_intention(draft.kind, "kind" if len(parsed) == 1 else f"[{index}].kind")
        self._maybe_purge()

        def write() -> list[Receipt]:
            receipts = []
            with self.store.transaction() as tx:
                for index, draft in enumerate(parsed):
                    try:
                        receipts.append(self._write(tx, draft, scope_namespace, dedupe=True)[0])
                    except (ValidationError, ConflictError) as error:
                        if len(parsed) == 1:  # one memory (remember): its field alone
                            raise
                        # Which draft of the batch (none of it is written): a key or id
                        # that collides is named as a refused value is.
                        raise type(error)(f"[{index}].{error.field}", error.message) from None
            return receipts

        return self._scrubbed(rerun_on_conflict(write, what="remember"))

    def _scrubbed(self, receipts: list[Receipt]) -> list[Receipt]:
        """Scrub once after a committed batch that dropped content; say how it went."""
        if not any(receipt.scrub == "pending" for receipt in receipts):
            return receipts
        state = self.scrubber.after_drop()
        return [
            receipt.model_copy(update={"scrub": state}) if receipt.scrub == "pending" else receipt
            for receipt in receipts
        ]

    def put(
        self,
        draft: NewMemory | dict[str, Any],
        *,
        namespace: str | None = None,
        signals: dict[str, bytes] | None = None,
        biometrics: dict[str, float] | None = None,
        dedupe: bool = False,
        expected_version: str | Iterable[str] | None = None,
    ) -> tuple[Receipt, Memory]:
        """Store one memory like :meth:`remember`; return the receipt and the stored memory.

        ``expected_version`` (with a ``key``; :data:`ANY_VERSION` or versions as for
        :meth:`update`): overwrite only while the key holds a memory, of one of those
        versions; :data:`~recalld.versions.ABSENT`: write only while it holds none (an
        expired one counts as none). Checked in the writing transaction, else
        :class:`PreconditionFailedError` and nothing is written.

        For callers that must answer with the record as written (it may already
        be expired by the time a separate read would run, with a tiny TTL).
        ``signals`` are derived sensory features (never raw media) and
        ``biometrics`` named readings, stored in the same transaction (see
        :mod:`recalld.recollection`). Unlike :meth:`remember` it stores a
        repeated text again unless ``dedupe`` (an experience is an event: the
        same words at another time or place are another memory).
        """
        expected_version = _expected_versions(expected_version)
        scope_namespace = self._namespace(namespace)
        parsed = draft if isinstance(draft, NewMemory) else check.parse_model(NewMemory, draft)
        _not_an_intention(parsed.kind, "kind")
        if signals or biometrics:
            signals, biometrics = checked_senses(signals or {}, biometrics or {})
        self._maybe_purge()

        def write() -> tuple[Receipt, Memory]:
            with self.store.transaction() as tx:
                if expected_version is not None:
                    _check_key_version(tx, parsed, scope_namespace, expected_version, self._clock())
                receipt, memory = self._write(tx, parsed, scope_namespace, dedupe=dedupe)
                if signals or biometrics:
                    tx.save_signals(memory.seq, signals or {}, biometrics or {})
            return receipt, memory

        receipt, memory = rerun_on_conflict(write, what="put")
        return self._scrubbed([receipt])[0], memory

    def update(
        self,
        memory_id: str,
        *,
        namespace: str | None = None,
        expected_version: str | Iterable[str] | None = None,
        **changes: Any,
    ) -> Memory:
        """Change only the given fields of a memory; ``None`` clears an optional field.

        ``ttl_seconds`` restarts the expiry from now (``None`` removes it).
        ``expected_version`` (one of :func:`recalld.versions.memory_version`'s answers,
        or several): write only if the memory is still that version, checked in the
        write's own transaction, else :class:`PreconditionFailedError` and nothing
        changes (an editor's copy made stale by another client's edit).
        """
        check.lookup(memory_id, "id")
        expected_version = _expected_versions(expected_version)
        scope_namespace = self._namespace(namespace)
        patch = check.parse_model(MemoryPatch, changes)
        given = patch.model_fields_set
        if not given:
            raise ValidationError("changes", "give at least one field to update")
        for required in ("content", "kind"):
            if required in given and getattr(patch, required) is None:
                raise ValidationError(required, "cannot be cleared (give a value)")
        # Clearing a collection leaves it empty.
        if "tags" in given and patch.tags is None:
            patch = patch.model_copy(update={"tags": []})
        if "meta" in given and patch.meta is None:
            patch = patch.model_copy(update={"meta": {}})
        now = self._clock()

        def write() -> tuple[Memory, bool]:
            with self.store.transaction() as tx:
                current = tx.find(scope_namespace, id=memory_id)
                if current is None or expired(current, now):
                    raise NotFoundError(
                        f"no memory with id {shown(memory_id)} in {scope_namespace!r}"
                    )
                if expected_version is not None:
                    _check_version(current, expected_version)
                if "kind" in given and patch.kind != current.kind:
                    if current.kind == INTENTION_KIND:
                        raise ValidationError(
                            "kind",
                            "a reminder's memory stays kind 'intention' (cancel the reminder)",
                        )
                    _not_an_intention(patch.kind, "kind")
                return self._writer.updated(
                    tx, current, {name: getattr(patch, name) for name in given}, now
                )

        memory, dropped = rerun_on_conflict(write, what="update")
        if dropped:
            self.scrubber.after_drop()
        return memory

    def forget(
        self,
        memory_id: str,
        *,
        namespace: str | None = None,
        expected_version: str | Iterable[str] | None = None,
    ) -> Forgotten:
        """Delete a memory and every trace of it; says whether it existed and is scrubbed.

        ``expected_version`` (as for :meth:`update`): delete only if the memory is still
        that version, checked in the deleting transaction, else
        :class:`PreconditionFailedError` and nothing is deleted (a forget decided on a
        copy another client has edited since).

        The row, its tags, full-text entries, vectors, jobs, signal features,
        trigger history and queued recollections are removed, its vector is
        erased from the in-memory and saved vector index, and the store scrubs
        what deleted rows leave behind (:meth:`Store.scrub`: on SQLite secure
        delete zeroes the freed pages and the write-ahead log is checkpointed and
        truncated, so the content cannot be read back from the database files;
        PostgreSQL vacuums the tables that held it, see
        :mod:`recalld.store.postgres_scrub` for what that does and does not
        reach): ``scrub == "done"``. When another reader holds an older snapshot past
        ``scrub_wait_seconds``, the answer is ``scrubbed=False, scrub="pending"``
        and the scrub finishes in the background as soon as readers let it (see
        :mod:`recalld.scrubbing`). On a full disk the reserve beside the
        database is released so that the forget can still be written.
        """
        check.lookup(memory_id, "id")
        expected_version = _expected_versions(expected_version)
        scope_namespace = self._namespace(namespace)

        def delete() -> bool:
            with self.store.transaction() as tx:
                current = tx.find(scope_namespace, id=memory_id)
                if current is None:
                    return False
                if expected_version is not None:
                    _check_version(current, expected_version)
                tx.delete(current.seq)
                tx.dropped_content("forget", self._clock())
                return True

        try:
            deleted = rerun_on_conflict(delete, what="forget")
        except DiskFullError:
            if not self.store.release_reserve():
                raise
            deleted = rerun_on_conflict(delete, what="forget")
        if not deleted:
            return Forgotten.of(False, "none")
        return Forgotten.of(True, self._after_forget())

    def _after_forget(self) -> ScrubState:
        """Erase what deleted memories left outside their rows: their vectors in the loaded
        index and its files, and (the deleting transaction recorded a dropped-content row)
        their old pages in the write-ahead log. Returns whether the scrub is done or pending."""
        self.indexing.after_forget()
        return self.scrubber.after_drop()

    def _write_receipt(
        self, tx: StoreTransaction, draft: NewMemory, namespace: str
    ) -> tuple[Receipt, Memory]:
        """One memory write inside ``tx`` (for components that write memories with other rows)."""
        return self._write(tx, draft, namespace)


def _not_an_intention(kind: str | None, field: str) -> None:
    if kind is not None and check.kind(kind, field) == INTENTION_KIND:
        raise ValidationError(field, "'intention' is kept for reminders (create one with remind)")


def _expected_versions(expected: Any) -> str | tuple[str, ...] | None:
    """``expected_version`` as given (a version, or several: any iterable, read once), or a
    :class:`ValidationError` naming it: a number failed deep inside with "TypeError: 'int'
    object is not iterable"."""
    if expected is None or isinstance(expected, str):
        return expected
    if not isinstance(expected, Iterable) or isinstance(expected, bytes | bytearray | Mapping):
        raise ValidationError(
            "expected_version",
            f"give a version (text) or a list of versions, got {type(expected).__name__}",
        )
    versions = tuple(expected)
    for version in versions:
        if not isinstance(version, str):
            raise ValidationError(
                "expected_version", f"each version is text, got {type(version).__name__}"
            )
    return versions


def _check_version(current: Memory, expected: str | Iterable[str]) -> None:
    """Refuse an update made from a copy of ``current`` older than its last write."""
    accepted = {expected} if isinstance(expected, str) else set(expected)
    version = memory_version(current)
    if version not in accepted:
        raise PreconditionFailedError(
            "expected_version",
            f"memory {shown(current.id)} changed since it was read (it is now version"
            f" {version}): read it again and make the edit on what it holds now",
        )


def _check_key_version(
    tx: StoreTransaction,
    draft: NewMemory,
    namespace: str,
    expected: str | Iterable[str],
    now: datetime,
) -> None:
    """Refuse a keyed write made from a copy older than the key's memory, or when the key
    holds none (:data:`ANY_VERSION` asks only that it holds one; :data:`ABSENT` that it
    holds none)."""
    if draft.key is None:
        raise ValidationError("key", "a conditional write names the memory by its key")
    current = tx.find(namespace, key=draft.key)
    if current is not None and expired(current, now):
        current = None
    if expected == ABSENT:
        if current is not None:
            raise PreconditionFailedError(
                "expected_version",
                f"key {shown(draft.key)} already holds a memory in {namespace!r} (version"
                f" {memory_version(current)}): a write that only creates leaves it as it is",
            )
        return
    if current is None:
        raise PreconditionFailedError(
            "expected_version",
            f"key {shown(draft.key)} holds no memory in {namespace!r}: write it without a"
            " condition to create it",
        )
    if expected != ANY_VERSION:
        _check_version(current, expected)
