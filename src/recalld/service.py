"""MemoryService: the one facade every adapter (CLI, REST, MCP) calls.

It owns the rules: defaults, validation, key upserts, TTLs, namespaces as
walls, which calls may change state. The store below it only keeps records.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO

from recalld import _validate as check
from recalld._time import Clock, utc_now
from recalld.config import Settings
from recalld.errors import DiskFullError, ValidationError
from recalld.model import (
    ImportReport,
    Memory,
    Status,
)
from recalld.service_components import Component
from recalld.service_core import ServiceCore
from recalld.store.base import BackupResult, Scope, Store
from recalld.store.factory import open_store
from recalld.store.retrieval import TURN_KIND

if TYPE_CHECKING:
    from recalld.conversations import (
        Conversation,
        ConversationMessage,
        ConversationReport,
        Conversations,
    )
    from recalld.core_memory import CoreMemory
    from recalld.embeddings.base import Embedder
    from recalld.graph.extractor import ExtractorSetup
    from recalld.graph_browser import GraphBrowser
    from recalld.importing import Progress
    from recalld.intentions import Intention, Intentions
    from recalld.knowledge import KnowledgeGraph
    from recalld.recollection import Recollector
    from recalld.transfer import Transfer
    from recalld.worker import Worker

__all__ = ["MemoryService"]

logger = logging.getLogger(__name__)


class MemoryService(ServiceCore):
    """Long-term memory for agents: remember, recall, list, forget, export and import.

    Build one per process with :meth:`open` (or inject a store), use it as a
    context manager, and pass it to adapters. Every method takes an optional
    ``namespace``; without one, ``settings.namespace`` is used.

    Components are built on first use (``core``, ``graph``, ``intentions``,
    ``recollections``, ``knowledge``, the indexing with its embedder), so a
    short command such as ``recalld stats`` imports and builds only what it
    needs; a server's worker and scheduler threads start at once, and its vector
    index and model load on a helper thread as soon as it is open.
    """

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        clock: Clock = utc_now,
        embedder: Embedder | Callable[[], Embedder | None] | None = None,
        extractor: ExtractorSetup | None = None,
    ) -> None:
        super().__init__(store, settings, clock=clock, embedder=embedder, extractor=extractor)
        self.scrubber.on_open()
        if settings.worker_thread:
            # A long-running process (server): also finish scrubs other processes left,
            # and embed and extract in the background from the start.
            self.scrubber.watch()
            _ = self.indexing
        if settings.scheduler_thread:
            _ = self.intentions
        self._maybe_purge()
        if settings.worker_thread:
            # Once open: load the vector index and the model on a helper thread, not on
            # the first recall (seconds for a large store).
            self.indexing.retriever.warm_up()

    @classmethod
    def open(
        cls,
        settings: Settings | None = None,
        *,
        clock: Clock = utc_now,
        on_migration: Callable[[int, int], None] | None = None,
    ) -> MemoryService:
        """Open (creating and migrating if needed) the database ``settings.db``.

        ``on_migration(done, total)`` follows pending schema migrations (the CLI
        draws a progress bar with it).
        """
        if settings is not None and not isinstance(settings, Settings):
            # A dict of settings failed later with "AttributeError: 'dict' object has no
            # attribute 'uses_postgres'", naming nothing the caller wrote.
            raise ValidationError(
                "settings",
                f"give a recalld.Settings, got {type(settings).__name__} (or call"
                " recalld.open(path, **settings) with the settings as keywords)",
            )
        settings = settings or Settings()
        chosen = settings

        def embedder() -> Embedder | None:
            from recalld.embeddings import create_embedder

            return create_embedder(chosen)

        return cls(
            open_store(settings, on_migration=on_migration),
            settings,
            clock=clock,
            embedder=embedder,
        )

    # -- components, built on first use ---------------------------------------

    @Component
    def core(self) -> CoreMemory:
        """The bounded core memory injected into every prompt (hermes' targets)."""
        from recalld.core_memory import CoreMemory

        return CoreMemory(
            self.store.core, self.settings, self._clock, after_drop=self.scrubber.after_drop
        )

    @Component
    def graph(self) -> GraphBrowser:
        """The knowledge graph (issue 12): browsing, rebuilding."""
        from recalld.graph_browser import GraphBrowser

        return GraphBrowser(self.store, self.settings, self._clock, self.indexing, self._namespace)

    @Component
    def intentions(self) -> Intentions:
        """Prospective memory: "remind me when…" (issue 17)."""
        from recalld.intentions import Intentions

        return Intentions(
            self.store,
            self.settings,
            self._clock,
            self._write_receipt,
            match_entities=lambda text, namespace: self.graph.named_in(text, namespace),
        )

    @Component
    def recollections(self) -> Recollector:
        """Memories with their context, and involuntary recall (madeleine)."""
        from recalld.recollection import Recollector

        return Recollector(
            self.store.context,
            self.store,
            self.settings,
            self._clock,
            self.put,
            text_similarities=self._text_similarities,
            reminders=self.intentions.sensed,
        )

    def _text_similarities(
        self, text: str, namespace: str, seqs: Sequence[int], nearest: int
    ) -> dict[int, float]:
        # As search does: a short embedding queue is worked off first, so a memory written
        # a moment ago is found by paraphrase (madeleine's recall, sense) straight away.
        self.indexing.catch_up([namespace])
        return self.indexing.retriever.text_similarities(text, namespace, seqs, nearest)

    @Component
    def knowledge(self) -> KnowledgeGraph:
        """The MCP reference memory server's entities, relations and observations."""
        from recalld.knowledge import KnowledgeGraph

        return KnowledgeGraph(
            self.store,
            self.settings,
            self._clock,
            self._write_receipt,
            self._after_forget,
            self._namespace,
        )

    @Component
    def _transfer(self) -> Transfer:
        from recalld.transfer import Transfer

        return Transfer(
            self.store,
            self.settings,
            self._clock,
            self.indexing,
            self.scrubber,
            self._writer,
            lambda: self.core,
        )

    @Component
    def conversations(self) -> Conversations:
        """Transcripts remembered turn by turn (see :mod:`recalld.conversations`)."""
        from recalld.conversations import Conversations

        return Conversations(
            self.store,
            self.settings,
            self._clock,
            self._writer,
            self._namespace,
            self.scrubber.after_drop,
        )

    def close(self) -> None:
        """Stop the worker, scheduler and scrubber threads, save the vector index, checkpoint
        (when this is a server, or scrubs are pending), close the store. Closing twice is
        harmless. In a process forked after opening, only this copy is closed: the threads,
        connections and files are the parent's (any use in the child raises
        :class:`~recalld.errors.StorageError`; open the database again there)."""
        with self._building:  # a component is built before this (and closed below) or refused
            if self._closed:
                return
            self._closed = True
        if self._process.forked:
            self.store.close()  # marks the child's copy closed, closes nothing of the parent's
            return
        built = self.__dict__
        if "intentions" in built:
            self.intentions.close()
        if "indexing" in built:
            self.indexing.close()
        self.scrubber.close()
        self.store.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run."""
        return self._closed

    def __repr__(self) -> str:
        # Which database and namespace (a PostgreSQL URL without its password), not an address.
        closed = ", closed" if self._closed else ""
        return f"MemoryService({self.store!r}, namespace={self.settings.namespace!r}{closed})"

    def __reduce__(self) -> Any:
        # Its connections, threads and locks belong to this process: pickling failed with
        # "cannot pickle '_thread._local' object", and copy.copy made a twin sharing them.
        raise TypeError(
            "a MemoryService cannot be pickled or copied (it holds this process's connections"
            " and threads): pass the database path and open it where it is used"
            " (recalld.open(path))"
        )

    def __enter__(self) -> MemoryService:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- prospective memory ----------------------------------------------------

    def remind(self, action: str, **options: Any) -> Intention:
        """Remind of ``action`` when every given trigger holds; see
        :meth:`recalld.intentions.Intentions.remind` (``service.intentions()`` lists them)."""
        return self.intentions.remind(action, **options)

    def cancel(self, intention_id: str, *, namespace: str | None = None) -> Intention:
        """Cancel an intention: it never fires again (its memory stays until forgotten)."""
        return self.intentions.cancel(intention_id, namespace=namespace)

    # -- indexing ------------------------------------------------------------

    @property
    def embedder(self) -> Embedder | None:
        """The text embedder (None: keyword-only recall)."""
        return self.indexing.embedder

    @property
    def worker(self) -> Worker | None:
        """The embedding worker thread of this process, if one runs."""
        return self.indexing.worker

    def start_worker(self) -> Worker:
        """Start an embedding worker thread in this process (idempotent); a closed service,
        or one used in a process forked after opening, raises
        :class:`~recalld.errors.StorageError` (nothing runs after :meth:`close`)."""
        self._require_open()
        return self.indexing.start_worker()

    def new_worker(self, *, worker_id: str | None = None) -> Worker:
        """A worker bound to this service's store and embedder, not started (``recalld worker``)."""
        self._require_open()
        return self.indexing.new_worker(worker_id=worker_id)

    def status(self, namespaces: Sequence[str] | None = None, *, confined: bool = False) -> Status:
        """Indexing health over ``namespaces`` (default: the current one); see
        :meth:`recalld.indexing.Indexing.status`. Loads no model and builds no index.

        ``confined``: as a caller confined to those namespaces sees it (a token not scoped
        to every namespace): nothing that moves with another namespace's activity, so the
        pending scrubs, each worker's state and job counts and the loaded index are null
        (:meth:`Status.confined`)."""
        status = self.indexing.status(self._namespaces(namespaces))
        status = status.model_copy(update={"pending_scrubs": self.store.pending_scrubs()})
        return status.confined() if confined else status

    # -- conversations -------------------------------------------------------

    def remember_conversation(
        self,
        messages: Sequence[ConversationMessage | dict[str, Any]] | Conversation,
        *,
        conversation: str | None = None,
        title: str | None = None,
        at: datetime | str | None = None,
        source: str | None = None,
        tags: Sequence[str] = (),
        include_system: bool = False,
        include_tools: bool = False,
        namespace: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> ConversationReport:
        """Remember a transcript, one memory per turn, in order, idempotent by message.

        ``messages`` are ``{"role" or "speaker", "content", "at"?, "id"?}`` (or in the
        OpenAI chat format, ``tool_calls`` and ``tool_call_id`` too); system and tool
        messages are skipped unless ``include_system``/``include_tools``.
        See :mod:`recalld.conversations`.
        """
        from recalld.conversations import conversation_of

        whole = conversation_of(
            messages,
            conversation=conversation,
            title=title,
            at=at,
            source=source,
            tags=tags,
            include_system=include_system,
            include_tools=include_tools,
        )
        return self.conversations.remember(whole, namespace=namespace, progress=progress)

    def turns(
        self,
        memory_id: str,
        *,
        before: int | None = None,
        after: int | None = None,
        namespace: str | None = None,
    ) -> list[Memory]:
        """The turns around a conversation turn (``before`` earlier, ``after`` later: 2 each
        by default, or ``max_limit`` when that is lower), itself included, in order; a memory
        that is no turn comes back alone."""
        most = self.settings.max_limit
        before = min(2, most) if before is None else before
        after = min(2, most) if after is None else after
        for name, value in (("before", before), ("after", after)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
                raise ValidationError(name, f"must be an integer from 0 to {most}, got {value!r}")
        memory = self.get(memory_id, namespace=namespace)
        if memory.source is None or memory.kind != TURN_KIND or memory.at is None:
            return [memory]
        # Only the turns beside this one are read, however long the conversation: reading
        # the first max_limit missed a turn past them (it came back alone), and reading
        # every turn of a source cost seconds and hundreds of MB for a source of 30,000.
        scope = Scope(namespaces=(memory.namespace,), now=self._clock(), kind=TURN_KIND)
        point = (memory.at, memory.seq)
        earlier = self.store.by_source(
            scope, memory.source, limit=before, beside=point, earlier=True
        )
        later = self.store.by_source(scope, memory.source, limit=after, beside=point)
        return [*reversed(earlier), memory, *later]

    # -- export / import / backup ---------------------------------------------

    def export(
        self,
        namespaces: Sequence[str] | None = None,
        *,
        on_problem: Callable[[str], None] | None = None,
    ) -> Iterator[str]:
        """Yield the JSON lines of an export of ``namespaces`` (default: the current one):
        every live memory, then each namespace's core memory and declared graph (see
        :mod:`recalld.transfer`).

        Every row gets its line, even one stored in a shape that cannot be rendered
        as it is (e.g. ``meta`` nested deeper than today's limit, written by an older
        version): its meta is exported as text and ``on_problem`` is told why.
        """
        scoped = self._namespaces(namespaces)
        return self._transfer.export(self._scope(scoped, None, self._clock()), on_problem)

    def import_lines(
        self,
        lines: Iterable[str] | Iterable[bytes],
        *,
        namespace: str | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Import JSONL written by :meth:`export`; idempotent by id.

        A record goes to its own ``namespace`` field, or to ``namespace`` (default:
        the current one) when it has none. An id already present is overwritten
        only by a record with a newer ``updated_at``; a record without an id is
        new unless it repeats a stored memory. A bad line is reported with its
        number and nothing of it is written; the other lines still import. Lines
        may be bytes (a file opened in binary mode): each is read as UTF-8.
        """
        if isinstance(lines, str | bytes) or not isinstance(lines, Iterable):
            raise ValidationError("lines", f"give an iterable of lines, got {type(lines).__name__}")
        return self._transfer.import_lines(lines, self._namespace(namespace), progress)

    def import_file(
        self,
        path: str | Path | BinaryIO,
        *,
        format: str = "auto",
        namespace: str | None = None,
        progress: Progress | None = None,
        include_tools: bool = False,
        include_system: bool = False,
    ) -> ImportReport:
        """Import a file from recalld or another tool: ``format`` is ``auto`` (told by
        content), ``recalld``, ``mcp-memory``, ``mem0``, ``hermes`` (``MEMORY.md``,
        ``USER.md`` or their directory), ``chatgpt`` or ``claude``; see
        :mod:`recalld.importing`. ``progress(done, total)`` follows it. ``path`` may be an
        open binary stream (``sys.stdin.buffer``), read as a file is, in bounded pieces."""
        from recalld.importing import import_file

        return import_file(
            self,
            Path(_nul_free(path, "path")) if isinstance(path, str | Path) else path,
            format=format,
            namespace=namespace,
            progress=progress,
            include_tools=include_tools,
            include_system=include_system,
        )

    def import_text(
        self,
        text: str | bytes,
        *,
        format: str = "auto",
        name: str | None = None,
        namespace: str | None = None,
        may_write: Callable[[str], bool] | None = None,
        include_tools: bool = False,
        include_system: bool = False,
    ) -> ImportReport:
        """:meth:`import_file` for text already read (an upload); ``name`` is its file
        name when known (Hermes' files are told by name), ``may_write(namespace)`` is
        asked before each namespace is written. Bytes are read as UTF-8: a line of
        JSON lines that is not is a bad line, a document that is not is refused."""
        from recalld.importing import import_text

        return import_text(
            self,
            text if isinstance(text, bytes) else check.text(text, "text"),
            format=format,
            name=name,
            namespace=namespace,
            may_write=may_write,
            include_tools=include_tools,
            include_system=include_system,
        )

    def backup(self, destination: str | Path) -> BackupResult:
        """Copy the whole database (every namespace, everything in it) to the new file
        ``destination`` while other processes keep writing; the copy holds every write
        committed before it began. SQLite only (see :meth:`recalld.store.base.Store.backup`).

        Memories whose TTL has passed are purged first: no read shows them any more, and
        a copy kept elsewhere must not keep them either (the purge inside reads runs at
        most every ``purge_interval_seconds``). On a full disk the reserve beside the
        database is released so that the purge can still be written, as forget's is.
        A ``destination`` string ending with ``/`` names a directory, which is refused."""
        text = str(_nul_free(destination, "destination"))
        if text.endswith(("/", os.sep)) and not Path(text).is_dir():
            # Path() drops the "/": the copy became a file named like the directory meant.
            raise ValidationError(
                "destination",
                f"{text} ends with {text[-1]}, so it names a directory; give the path of a"
                " new file",
            )
        if purge_before_backup(self.store, self._clock()):
            self.scrubber.after_drop(wait=False)  # the copy holds none of it either way
        return self.store.backup(Path(destination))


def _nul_free(path: str | Path, field: str) -> str | Path:
    """``path``, or a :class:`ValidationError` on ``field`` when it holds a NUL character:
    the file call failed with a bare "ValueError: embedded null byte" (a backup after
    purging), as the database path did (review of pass a66)."""
    if "\x00" in str(path):
        raise ValidationError(field, "holds a NUL character (U+0000), which no path may hold")
    return path


def purge_before_backup(store: Store, now: datetime) -> int:
    """Delete the memories whose TTL has passed at ``now`` before ``store`` is copied
    (``MemoryService.backup``, ``recalld backup``): no read shows them, and no purge reaches
    a copy. On a full disk the reserve beside the database is released so that the
    deletion can still be written, as forget's is; without one the DiskFullError stands."""
    try:
        removed = store.purge_expired(now)
    except DiskFullError:
        if not store.release_reserve():
            raise
        removed = store.purge_expired(now)
    if removed:
        logger.info("purged %d expired memories before a backup", removed)
    return removed
