"""The storage protocol the service talks to; it imports no implementation.

A store keeps records and answers indexed queries. Rules (defaults, upsert
semantics, limits) live in the service; a store only needs to be correct,
durable and fast at the primitive operations below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, runtime_checkable

from recalld.model import IndexState, Memory, Place

if TYPE_CHECKING:
    from recalld.store.context import ContextStore
    from recalld.store.core import CoreStore
    from recalld.store.graph import GraphStore, GraphTransaction
    from recalld.store.intentions import IntentionRecord, IntentionStore, ReminderDraft
    from recalld.store.retrieval import RetrievalStore
    from recalld.store.semantic import SemanticStore, VectorSearch
    from recalld.store.tables import TableAccess

__all__ = [
    "FULL_TEXT_BACKENDS",
    "UNREADABLE_META_KEY",
    "Backend",
    "BackupResult",
    "Beside",
    "ChangeFeed",
    "Counts",
    "KeywordBackend",
    "Match",
    "MemoryRecord",
    "Order",
    "Scope",
    "SourceTurn",
    "Store",
    "StoreTransaction",
    "TokenRecord",
    "TokenStore",
    "shared_between_threads",
    "stored_record",
]

KeywordBackend = Literal["fts5", "like", "postgres-fts"]
"""Which keyword index answers: SQLite's FTS5, the LIKE fallback, or PostgreSQL's full text."""
Backend = KeywordBackend
FULL_TEXT_BACKENDS: frozenset[str] = frozenset({"fts5", "postgres-fts"})
Order = Literal["created", "updated"]
# A point in a source's (at, seq) order that ``Store.by_source`` reads beside.
Beside = tuple[datetime, int] | None


class SourceTurn(NamedTuple):
    """What placing a conversation's messages reads of each stored turn
    (:meth:`Store.source_turns`): no :class:`Memory` is built for it."""

    id: str
    speaker: str | None
    content: str | None
    """``None`` when read without texts."""
    meta: dict[str, Any]


# A stored meta that cannot be rendered as it is (nested past today's depth limit by an
# older version, or not valid JSON) is read back as {UNREADABLE_META_KEY: {"reason",
# "text"}}: the row stays readable, listable and exportable, and says what is wrong.
UNREADABLE_META_KEY = "recalld_unreadable_meta"


@dataclass(frozen=True)
class MemoryRecord:
    """Every stored field of a memory except the store-assigned ``seq``."""

    id: str
    namespace: str
    content: str
    created_at: datetime
    updated_at: datetime
    key: str | None = None
    title: str | None = None
    kind: str = "note"
    category: str | None = None
    tags: tuple[str, ...] = ()
    salience: float | None = None
    source: str | None = None
    speaker: str | None = None
    at: datetime | None = None
    expires_at: datetime | None = None
    place: Place | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    access_count: int = 0
    last_accessed_at: datetime | None = None
    index_state: IndexState = "queued"


def stored_record(memory: Memory) -> MemoryRecord:
    """Every stored field of ``memory`` as a record to write back (its ``seq`` aside)."""
    return MemoryRecord(
        id=memory.id,
        namespace=memory.namespace,
        content=memory.content,
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        key=memory.key,
        title=memory.title,
        kind=memory.kind,
        category=memory.category,
        tags=tuple(memory.tags),
        salience=memory.salience,
        source=memory.source,
        speaker=memory.speaker,
        at=memory.at,
        expires_at=memory.expires_at,
        place=memory.place,
        meta=dict(memory.meta),
        access_count=memory.access_count,
        last_accessed_at=memory.last_accessed_at,
        index_state=memory.index_state,
    )


@dataclass(frozen=True)
class BackupResult:
    """A finished backup: where it is, how big, and how many memories it holds."""

    destination: Path
    bytes: int
    pages: int
    memories: int
    schema_version: int


@dataclass(frozen=True)
class Scope:
    """Which rows a read may see: the namespaces, the filters, and the clock reading."""

    namespaces: Sequence[str]
    now: datetime
    kind: str | None = None
    category: str | None = None
    speaker: str | None = None
    has_key: bool | None = None
    tags_any: Sequence[str] = ()
    tags_all: Sequence[str] = ()
    since: datetime | None = None
    until: datetime | None = None
    created_since: datetime | None = None
    created_until: datetime | None = None
    include_expired: bool = False

    @property
    def filters_rows(self) -> bool:
        """Whether this scope narrows rows beyond namespace and expiry."""
        return bool(
            self.kind is not None
            or self.category is not None
            or self.speaker is not None
            or self.has_key is not None
            or self.tags_any
            or self.tags_all
            or self.since is not None
            or self.until is not None
            or self.created_since is not None
            or self.created_until is not None
        )


@dataclass(frozen=True)
class Match:
    """A keyword hit: the memory, a keyword similarity in [0, 1], and which index found it."""

    memory: Memory
    keyword: float
    backend: KeywordBackend


@dataclass(frozen=True)
class Counts:
    """Raw counts behind :class:`recalld.model.Stats`.

    Every count, ``expired`` included, is of the memories the scope's namespaces and
    filters select (``expired``: those of them past their expiry, not yet purged)."""

    count: int
    by_category: dict[str, int]
    by_kind: dict[str, int]
    by_namespace: dict[str, int]
    expired: int


class StoreTransaction(Protocol):
    """Primitive reads and writes inside one write transaction (all or nothing)."""

    def serialise(self, *name: str) -> None:
        """Hold ``name`` until this transaction ends: another transaction that asks for
        it waits, then reads what this one committed (SQLite's one writer already does)."""
        ...

    def find(
        self, namespace: str, *, id: str | None = None, key: str | None = None
    ) -> Memory | None:
        """The row with that id or key in the namespace, expired or not."""
        ...

    def insert(self, record: MemoryRecord) -> Memory:
        """Insert a new row and return it with its seq."""
        ...

    def replace(self, seq: int, record: MemoryRecord) -> Memory:
        """Overwrite every field of row ``seq`` (seq stays)."""
        ...

    def delete(self, seq: int) -> None:
        """Delete row ``seq`` and everything that depends on it."""
        ...

    def find_duplicate(
        self,
        namespace: str,
        content: str,
        now: datetime,
        at: datetime | None = None,
        speaker: str | None = None,
        accept: Callable[[Memory], bool] | None = None,
    ) -> Memory | None:
        """The oldest live, keyless memory of the namespace whose content equals ``content``
        once white space is normalised (:func:`recalld._text.normalized_content`) and, when
        given, whose ``at`` is the same instant, whose speaker is ``speaker`` and which
        ``accept`` accepts."""
        ...

    def extend_expiry(self, seq: int, expires_at: datetime | None, now: datetime) -> bool:
        """Give row ``seq`` the later expiry ``expires_at`` (None: never) when it has an
        earlier one, touching no other column (a concurrent edit stays); False when the
        row is gone or already lives as long."""
        ...

    def touch(self, seqs: Sequence[int], now: datetime) -> None:
        """Count one access of each row and record when it happened."""
        ...

    def dropped_content(self, reason: str, now: datetime) -> None:
        """Record in this transaction that content left the database (a pending scrub)."""
        ...

    def enqueue_embedding(self, seq: int, model: str, now: datetime) -> str:
        """Queue an embedding job for row ``seq`` in this transaction; returns the job id."""
        ...

    def save_signals(
        self, seq: int, features: dict[str, bytes], biometrics: dict[str, float]
    ) -> None:
        """Store row ``seq``'s derived signal features (image, audio) and biometric readings."""
        ...

    def save_intention(self, seq: int, record: IntentionRecord) -> None:
        """Store row ``seq``'s intention state and triggers (see :mod:`recalld.intentions`)."""
        ...

    def queue_reminder(self, reminder: ReminderDraft, fired_at: datetime) -> None:
        """Put a reminder that fired at ``fired_at`` in its namespace's pending queue, in
        this transaction (with the lookup of its memory: a forget cannot come between)."""
        ...

    def enqueue_graph(self, seq: int, model: str, now: datetime) -> str:
        """Queue a graph extraction job for row ``seq`` in this transaction; returns its id."""
        ...

    def drop_vectors(self, seq: int, now: datetime, own_model: str | None) -> None:
        """Delete row ``seq``'s vectors (every model's) in this transaction: its text
        changed, and the old text's meaning must not find it while the new one waits.
        Every model that had one, but ``own_model`` (the caller queues its own), gets an
        embedding job, and the row is ``queued``: a process without that model (or
        without any) must not leave it unembedded."""
        ...

    def mark_migrated(self, seq: int, origin: str) -> None:
        """Record in this transaction that ``recalld migrate`` copied row ``seq`` from the
        database ``origin`` (:mod:`recalld.moving`); forgetting the row removes the record."""
        ...

    @property
    def graph(self) -> GraphTransaction:
        """The knowledge graph's writes in this transaction (issue 12)."""
        ...


class ChangeFeed(Protocol):
    """Change notifications from the database (an optional store capability).

    A store whose database can push changes (PostgreSQL ``LISTEN/NOTIFY``)
    offers one as :attr:`Store.change_feed`, so a watcher is told at once of a
    change made by any process on any machine; without one, watchers poll.
    """

    def wait(self, after: int, timeout: float) -> int:
        """Block until a change numbered above ``after`` arrives or ``timeout`` passes.

        Returns the newest change number seen (``after`` itself on timeout).
        The numbers are this process's own count: they only ever grow.
        """
        ...


class Store(Protocol):
    """A durable home for memories: the SQLite file by default, PostgreSQL to scale out."""

    @property
    def keyword_backend(self) -> KeywordBackend:
        """Which keyword index :meth:`search` uses (``fts5``, ``like``, ``postgres-fts``)."""
        ...

    @property
    def index_location(self) -> Path | None:
        """Where a process may keep derived files beside the database (a path prefix).

        The in-process vector index saves its graph as ``<prefix>-vectors-…``;
        ``None`` when there is no local place for them (an in-memory SQLite
        database, or a PostgreSQL store, which searches vectors in the database).
        """
        ...

    @property
    def vector_search(self) -> VectorSearch | None:
        """Nearest-vector search in the database, when the store has it (else None:
        each process keeps its own index, :mod:`recalld.retrieval.vector_index`)."""
        ...

    @property
    def change_feed(self) -> ChangeFeed | None:
        """Pushed change notifications, when the database has them (else None: poll)."""
        ...

    @property
    def tables(self) -> TableAccess:
        """Whole-table reads and writes, for copying a database to another store."""
        ...

    @property
    def schema_version(self) -> int:
        """The number of the last migration applied."""
        ...

    @property
    def created(self) -> bool:
        """Whether opening this store created the database (it did not exist before)."""
        ...

    def location(self) -> str:
        """Where the database is, for people and safe to print (a file's path; a URL with
        its password replaced by ``***``)."""
        ...

    def backup(self, destination: Path) -> BackupResult:
        """Write a consistent copy of the whole database to the new file ``destination``
        while other processes keep writing. SQLite only (its online backup API); a store
        that cannot copy itself raises :class:`~recalld.errors.StorageError` naming the
        tool to use instead (``pg_dump`` for PostgreSQL)."""
        ...

    @property
    def semantic(self) -> SemanticStore:
        """The job queue, vectors and change log (semantic recall, issue 3)."""
        ...

    @property
    def retrieval(self) -> RetrievalStore:
        """Candidate rows, neighbours and term counts for recall's reranker (issue 11)."""
        ...

    @property
    def context(self) -> ContextStore:
        """Signal features, trigger history and the pending queue (issue 6)."""
        ...

    @property
    def core(self) -> CoreStore:
        """Core-memory entries per namespace and target (issue 7)."""
        ...

    @property
    def intentions(self) -> IntentionStore:
        """Intentions: triggers, firing state, reminders (issue 17)."""
        ...

    @property
    def graph(self) -> GraphStore:
        """Entities, mentions, relations and the extraction queue (issue 12)."""
        ...

    def transaction(self) -> AbstractContextManager[StoreTransaction]:
        """A serialised write transaction; lock waits are retried inside, bounded."""
        ...

    def count_accesses(self, seqs: Sequence[int], now: datetime) -> None:
        """Count one access of each memory (recall's hits) in a transaction of its own,
        committed without waiting for the disk: a crash may lose the last counts, never
        a memory or any other write."""
        ...

    def get(
        self,
        scope: Scope,
        *,
        id: str | None = None,
        key: str | None = None,
        seq: int | None = None,
    ) -> Memory | None:
        """One visible memory by exactly one of id, key or seq."""
        ...

    def search(self, scope: Scope, text: str, terms: Sequence[str], limit: int) -> list[Match]:
        """Keyword-ranked visible memories, best first, filters applied before the limit."""
        ...

    def list_page(
        self, scope: Scope, *, order: Order, limit: int, after: tuple[datetime, int] | None
    ) -> list[Memory]:
        """Visible memories newest first by ``order``, starting after a keyset cursor."""
        ...

    def counts(self, scope: Scope) -> Counts:
        """Counts of visible memories by category, kind and namespace."""
        ...

    def iterate(self, scope: Scope) -> Iterator[Memory]:
        """Every visible memory in seq order (for export)."""
        ...

    def namespaces(self) -> list[str]:
        """Every namespace that holds anything an export carries: a memory, a core-memory
        entry or a declared entity (admin use: ``export --all-namespaces`` backs up these)."""
        ...

    def by_source(
        self,
        scope: Scope,
        source: str,
        *,
        limit: int,
        beside: Beside = None,
        earlier: bool = False,
    ) -> list[Memory]:
        """Visible memories whose ``source`` is ``source`` (a conversation's turns), oldest
        ``at`` first, then in the order they were written.

        ``beside`` (an ``at`` and a seq): only those after it in that order, or before it,
        nearest first, when ``earlier`` (the turns around one turn, read without the rest)."""
        ...

    def source_turns(self, scope: Scope, source: str, *, texts: bool = True) -> list[SourceTurn]:
        """Every memory :meth:`by_source` would return for ``source``, in its order, as its
        id, speaker, meta and (``texts``) content only: appending one turn to a conversation
        of 100,000 read each as a :class:`Memory` (seconds, and hundreds of MB)."""
        ...

    def purge_expired(self, now: datetime) -> int:
        """Delete memories whose expiry has passed; returns how many."""
        ...

    def size_bytes(self) -> int:
        """Bytes used on disk by the database and its journal (the memory tables, for a
        server database that holds other things)."""
        ...

    def compact_after_forget(self) -> None:
        """Make deleted rows unreadable from the database's files now, as far as the engine
        allows, without touching the pending-scrub records.

        Each store documents what it does (SQLite: fold and truncate the
        write-ahead log; PostgreSQL: ``VACUUM`` the tables that hold content).
        Raises :class:`StorageError` when it could not be done now.
        """
        ...

    def scrub(self, wait_seconds: float) -> bool:
        """Finish the pending scrubs: do what :meth:`compact_after_forget` does, waiting for
        readers of older snapshots at most ``wait_seconds``; whether every scrub pending
        when it began is done (only then are their records cleared).

        A store never reports a scrub done that its engine did not do: each
        store documents what "done" means for its files.
        """
        ...

    def pending_scrubs(self) -> int:
        """Content-dropping writes (of any process) whose scrub is not done yet."""
        ...

    def release_reserve(self) -> bool:
        """Free the room kept for forgetting on a full disk; whether any was kept."""
        ...

    def close(self) -> None:
        """Release every connection."""
        ...


def shared_between_threads(store: Store) -> bool:
    """Whether a connection opened by another thread sees the same data as this one.

    Not so for SQLite's private databases (``:memory:``, or an empty path: every
    connection opens its own, empty database), so work on them stays in one thread.
    """
    return store.index_location is not None or store.vector_search is not None


@dataclass(frozen=True)
class TokenRecord:
    """One API token as stored: never the token itself, only its SHA-256 (hex)."""

    id: str
    name: str
    token_hash: str
    scopes: dict[str, str]
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


@runtime_checkable
class TokenStore(Protocol):
    """Persistence for API tokens (see :mod:`recalld.tokens` for the rules)."""

    def insert_token(self, record: TokenRecord) -> None:
        """Store a new token record."""
        ...

    def find_token(self, token_id: str) -> TokenRecord | None:
        """The token with that id, revoked or not."""
        ...

    def list_tokens(self) -> list[TokenRecord]:
        """Every token, oldest first."""
        ...

    def revoke_token(self, token_id: str, now: datetime) -> bool:
        """Mark a token revoked; returns whether an active token was revoked."""
        ...

    def touch_token(self, token_id: str, now: datetime) -> None:
        """Record that the token was just used."""
        ...

    def has_active_tokens(self) -> bool:
        """Whether at least one token is not revoked."""
        ...
