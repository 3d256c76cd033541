"""The read side of :class:`~recalld.service_core.ServiceCore`: its state, its helpers, reads.

:class:`ServiceReads` holds what every command shares (the store, the settings,
the clock, the indexing, namespaces and filters turned into a scope, the lazy
purge of expired memories) and the calls that only read: get, search, explain,
recall (which counts an access and nothing else), the listings and stats.
:class:`~recalld.service_core.ServiceCore` adds the writes on top.
"""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from recalld import _validate as check
from recalld._cursor import decode_cursor, encode_cursor
from recalld._text import prompt_line, query_terms, shown
from recalld._time import Clock, parse_instant, utc_now
from recalld.config import Settings
from recalld.errors import NotFoundError, StorageError, ValidationError
from recalld.model import (
    SPEAKER_MAX_CHARS,
    Explanation,
    Filters,
    Hit,
    Memory,
    Page,
    QueryFilters,
    Stats,
    key_spellings,
)
from recalld.scrubbing import Scrubber
from recalld.service_components import Component
from recalld.store.base import FULL_TEXT_BACKENDS, Order, Scope, Store
from recalld.store.process import OpeningProcess
from recalld.writing import Writer, kind_as_stored

if TYPE_CHECKING:
    from recalld.embeddings.base import Embedder
    from recalld.graph.extractor import ExtractorSetup
    from recalld.indexing import Indexing
    from recalld.retrieval.hybrid import Mode

__all__ = ["ServiceReads"]

logger = logging.getLogger(__name__)

# Result counts when the caller gives none; each is held to RECALLD_MAX_LIMIT (check.limit).
SEARCH_LIMIT = 10
PAGE_LIMIT = 50
RECENT_LIMIT = 10


class ServiceReads:
    """A store's memories as every command reads them: see the module docstring."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        clock: Clock = utc_now,
        embedder: Embedder | Callable[[], Embedder | None] | None = None,
        extractor: ExtractorSetup | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self._clock = clock
        self._closed = False
        # Held while a component is built and while close() marks the service closed.
        self._building = threading.RLock()
        # A forked child may use nothing of it and closes only its copy (see close()).
        self._process = OpeningProcess("this MemoryService")
        self._last_purge = float("-inf")
        self._embedder_source = embedder
        self._extractor_setup = extractor
        self.scrubber = Scrubber(store, settings)
        self._writer = Writer(settings, clock, lambda: self.indexing)

    @Component
    def indexing(self) -> Indexing:
        """The embedding and graph queues, the worker and the hybrid retriever."""
        from recalld.indexing import Indexing

        # An embedder, or a function that makes one when first needed: MemoryService.open
        # passes the settings' choice that way, so commands that never embed never import
        # the model's stack. None is keyword-only recall.
        source = self._embedder_source
        embedder: Embedder | None
        if source is None or hasattr(source, "embed_batch"):
            embedder = cast("Embedder | None", source)
        else:
            embedder = source()
        return Indexing(self.store, self.settings, self._clock, embedder, self._extractor_setup)

    # -- helpers -------------------------------------------------------------

    def _require_open(self) -> None:
        # A thread started after close() died at once on the closed store, its traceback on
        # stderr, while the caller got a Worker as if all were well; a component built
        # after close() started threads that nothing stopped.
        if self._closed:
            raise StorageError("this MemoryService is closed; open the database again")
        # Likewise in a forked child: its thread died on the store's fork check.
        self._process.check()

    def _namespace(self, namespace: str | None) -> str:
        return check.namespace(self.settings.namespace if namespace is None else namespace)

    def _namespaces(self, namespaces: Sequence[str] | str | None) -> list[str]:
        if not namespaces:
            return [self._namespace(None)]
        if isinstance(namespaces, str):  # one namespace, not its letters
            return [self._namespace(namespaces)]
        return [self._namespace(name) for name in check.listed(namespaces, "namespaces")]

    def _maybe_purge(self) -> None:
        """Purge expired memories when the purge interval has passed (on open, then lazily)."""
        if time.monotonic() - self._last_purge < self.settings.purge_interval_seconds:
            return
        self._last_purge = time.monotonic()
        self.purge_expired()

    def _scope(
        self, namespaces: Sequence[str], filters: QueryFilters | None, now: datetime
    ) -> Scope:
        filters = filters or Filters()

        def instant(name: str) -> datetime | None:
            value = getattr(filters, name)
            return None if value is None else parse_instant(name, value)

        since, until = instant("since"), instant("until")
        created_since, created_until = instant("created_since"), instant("created_until")
        for start, end, name in (
            (since, until, "until"),
            (created_since, created_until, "created_until"),
        ):
            if start is not None and end is not None and end < start:
                # Swapped bounds hold no memory: answering "nothing" would read as an empty store.
                start_name = name.replace("until", "since")
                raise ValidationError(
                    name, f"{end.isoformat()} is before {start_name} ({start.isoformat()})"
                )
        return Scope(
            namespaces=tuple(namespaces),
            now=now,
            # Names, as a memory's own (a blank one would silently match nothing).
            # As long as a name an older version stored (its shortest spelling in the limit).
            # " intention" as an older version stored it; the store matches the filter
            # trimmed too (store.sql.scope_clause): "intention " finds the reminders'.
            kind=None if filters.kind is None else kind_as_stored(filters.kind),
            category=check.category(filters.category, as_given=True),
            # Stored speakers have their white space collapsed; so is the filter.
            speaker=check.speaker(check.filter_name(filters.speaker, "speaker", SPEAKER_MAX_CHARS)),
            has_key=filters.has_key,
            # As many and as long as a memory's own tags (a longer list is no filter
            # anyone means, and would outgrow SQLite's limits on a statement); as long as
            # one an older version stored, too (its shortest spelling within the limit).
            tags_any=check.tags(filters.tags_any, self.settings, "tags_any", as_given=True),
            tags_all=check.tags(filters.tags_all, self.settings, "tags_all", as_given=True),
            since=since,
            until=until,
            created_since=created_since,
            created_until=created_until,
            include_expired=isinstance(filters, Filters) and filters.include_expired,
        )

    def purge_expired(self) -> int:
        """Delete every memory whose TTL has passed; returns how many were removed.

        The purge runs inside reads too (at most every ``purge_interval_seconds``),
        so its scrub does not wait for readers: when one is in the way, it is
        finished in the background.
        """
        removed = self.store.purge_expired(self._clock())
        if removed:
            logger.info("purged %d expired memories", removed)
            self.scrubber.after_drop(wait=False)
        return removed

    # -- reads ---------------------------------------------------------------

    def get(
        self,
        id: str | None = None,
        *,
        key: str | None = None,
        seq: int | None = None,
        namespace: str | None = None,
    ) -> Memory:
        """One memory by exactly one of id, key or seq; raises :class:`NotFoundError`."""
        given = [
            name for name, value in (("id", id), ("key", key), ("seq", seq)) if value is not None
        ]
        if len(given) != 1:
            raise ValidationError("id", "give exactly one of id, key or seq")
        if id is not None and not check.lookup(id, "id"):
            raise ValidationError("id", "must not be empty")
        if key is not None:
            check.lookup(key, "key")
        if seq is not None:
            check.seq(seq)
        scope_namespace = self._namespace(namespace)
        self._maybe_purge()
        scope = self._scope([scope_namespace], None, self._clock())
        if key is not None:
            memory = self._get_key(scope, key)
        else:
            memory = self.store.get(scope, id=id, seq=seq)
        if memory is None:
            value = {"id": id, "key": key, "seq": seq}[given[0]]
            raise NotFoundError(f"no memory with {given[0]} {shown(value)} in {scope_namespace!r}")
        return memory

    def _get_key(self, scope: Scope, key: str) -> Memory | None:
        """The memory under ``key`` in any of its spellings (:func:`~recalld.model.key_spellings`):
        keys are written in NFC, and one stored before that rule is still found."""
        for spelling in key_spellings(key):
            memory = self.store.get(scope, key=spelling)
            if memory is not None:
                return memory
        return None

    def search(
        self,
        query: str,
        *,
        filters: QueryFilters | Mapping[str, Any] | None = None,
        limit: int | None = None,
        namespace: str | None = None,
        mode: Mode = "hybrid",
        min_score: float | None = None,
    ) -> list[Hit]:
        """The memories that best match ``query``, best first; changes nothing.

        ``hybrid`` (default) pools the keyword index's matches (FTS5, else LIKE)
        with the nearest vectors when an embedder is configured; memories not
        yet embedded are still found by keyword. ``keyword`` and ``vector`` use
        one channel (``vector`` on a store without an embedder is refused; when
        the embedder fails, keyword hits list ``vector-unavailable`` and a recall
        it leaves with no hit raises the :class:`EmbeddingError`). A
        reranker scores every candidate: ``score`` is a calibrated probability
        in [0, 1] that the memory answers the query
        (see the README), and only hits scoring at least ``min_score``
        (default: ``settings.min_score``) come back, so a query about nothing
        stored returns nothing. Near-duplicates come back once, with
        ``channels["duplicates"]`` saying how many others they stand for. Any
        string of at most ``QUERY_MAX_CHARS`` (10,000) characters is safe: it is
        reduced to word terms before it reaches the keyword index (a longer one,
        or one that is not valid Unicode, is a :class:`ValidationError` on
        ``query``; so is a blank one, which matches nothing: no hits would read as
        nothing stored). ``filters`` is a :class:`Filters` or a mapping of its fields
        (as REST's ``filters`` body), validated into one. What was written a
        moment ago is found by meaning too: a short embedding queue is worked
        off first (see ``Indexing.catch_up``). ``limit`` is 10 when not given (or
        ``max_limit``, when that is lower); a limit above ``max_limit`` is refused.
        """
        _searchable(query)
        filters = check.filters(filters)
        scope_namespace = self._namespace(namespace)
        limit = check.limit(limit, self.settings, default=SEARCH_LIMIT)
        _refuse_include_expired(filters)
        threshold = check.min_score(min_score)
        self._check_mode(mode)
        scope = self._scope([scope_namespace], filters, self._clock())
        # The query's embedding starts now, on a helper thread, while what follows runs.
        self.indexing.retriever.embed_soon(query, mode)
        self._maybe_purge()
        if mode != "keyword":
            self.indexing.catch_up([scope_namespace])
        terms = query_terms(query, self.settings.max_query_terms)
        if threshold is None:
            threshold = self.settings.min_score
        return [
            Hit(
                memory=found.memory,
                score=found.score,
                channels=found.channels,
                backends=found.backends,
                prompt_line=prompt_line(found.memory),
            )
            for found in self.indexing.retriever.retrieve(
                scope, query, terms, limit, mode, threshold
            )
        ]

    def _check_mode(self, mode: Any) -> None:
        """Refuse a mode that is no mode, and ``vector`` on a store without an embedder:
        it has no vectors to search, and an empty answer would read as "nothing similar"."""
        if mode not in ("hybrid", "keyword", "vector"):
            raise ValidationError("mode", "must be hybrid, keyword or vector")
        if mode == "vector" and self.indexing.embedder is None:
            raise ValidationError(
                "mode",
                "vector needs an embedder, and this store has none (RECALLD_EMBEDDER=none):"
                " use hybrid or keyword",
            )

    def explain(
        self,
        query: str,
        memory_id: str,
        *,
        filters: QueryFilters | Mapping[str, Any] | None = None,
        limit: int | None = None,
        namespace: str | None = None,
        mode: Mode = "hybrid",
        min_score: float | None = None,
    ) -> Explanation:
        """Why :meth:`search` with these arguments does or does not return ``memory_id``.

        Reports the stage that dropped it (a filter or expiry, the candidate
        pool, the threshold, near-duplicate collapse, the limit), its rank and
        score among the candidates, every channel and feature value and each
        feature's share of the score. A memory of another namespace is "not
        visible": :class:`NotFoundError`, exactly as for an id that does not
        exist. Changes nothing.
        """
        from recalld.retrieval.explain import explain

        _searchable(query)
        check.lookup(memory_id, "id")
        filters = check.filters(filters)
        scope_namespace = self._namespace(namespace)
        limit = check.limit(limit, self.settings, default=SEARCH_LIMIT)
        # Explained as search runs: search refuses the admin listing's filter, so does this.
        _refuse_include_expired(filters)
        threshold = check.min_score(min_score)
        self._check_mode(mode)
        now = self._clock()
        scope = self._scope([scope_namespace], filters, now)
        everything = Scope(namespaces=(scope_namespace,), now=now, include_expired=True)
        memory = self.store.get(everything, id=memory_id) if memory_id else None
        if memory is not None and mode != "keyword":
            # Once the call is known good (filters and memory): a refused one embeds
            # nothing. Read again after: its index state may be what the catch-up changed.
            self.indexing.catch_up([scope_namespace])
            memory = self.store.get(everything, id=memory_id)
        if memory is None:
            raise NotFoundError(f"memory {shown(memory_id)} is not visible in {scope_namespace!r}")
        terms = query_terms(query, self.settings.max_query_terms)
        return explain(
            self.indexing.retriever,
            memory,
            scope,
            query,
            terms,
            mode,
            self.settings.min_score if threshold is None else threshold,
            limit,
        )

    def recall(
        self,
        query: str,
        *,
        filters: QueryFilters | Mapping[str, Any] | None = None,
        limit: int | None = None,
        namespace: str | None = None,
        mode: Mode = "hybrid",
        min_score: float | None = None,
    ) -> list[Hit]:
        """Like :meth:`search`, and counts an access of every memory returned."""
        hits = self.search(
            query,
            filters=filters,
            limit=limit,
            namespace=namespace,
            mode=mode,
            min_score=min_score,
        )
        if not hits:
            return hits
        now = self._clock()
        self.store.count_accesses([hit.memory.seq for hit in hits], now)
        return [
            hit.model_copy(
                update={
                    "memory": hit.memory.model_copy(
                        update={
                            "access_count": hit.memory.access_count + 1,
                            "last_accessed_at": now,
                        }
                    )
                }
            )
            for hit in hits
        ]

    def list_memories(
        self,
        *,
        filters: Filters | Mapping[str, Any] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        namespace: str | None = None,
    ) -> Page:
        """Memories newest first (by creation), a page at a time (``limit``: 50 by default)."""
        return self._page("created", filters, limit, cursor, namespace)

    def recent(
        self,
        *,
        filters: Filters | Mapping[str, Any] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        namespace: str | None = None,
    ) -> Page:
        """Memories most recently created or updated first (``limit``: 10 by default)."""
        return self._page("updated", filters, limit, cursor, namespace)

    def _page(
        self,
        order: Order,
        filters: Filters | Mapping[str, Any] | None,
        limit: int | None,
        cursor: str | None,
        namespace: str | None,
    ) -> Page:
        checked = check.filters(filters)
        scope_namespace = self._namespace(namespace)
        default = PAGE_LIMIT if order == "created" else RECENT_LIMIT
        limit = check.limit(limit, self.settings, default=default)
        after = None if cursor is None else decode_cursor(cursor, order)
        scope = self._scope([scope_namespace], checked, self._clock())
        self._maybe_purge()  # once the input is known good: bad input changes nothing
        memories = self.store.list_page(scope, order=order, limit=limit + 1, after=after)
        next_cursor = None
        if len(memories) > limit:
            memories = memories[:limit]
            last = memories[-1]
            value = last.created_at if order == "created" else last.updated_at
            next_cursor = encode_cursor(order, value, last.seq)
        return Page(memories=memories, next_cursor=next_cursor)

    def stats(self, namespaces: Sequence[str] | None = None, *, confined: bool = False) -> Stats:
        """Counts by category, kind and namespace over ``namespaces`` (default: the current one).

        ``confined``: as a caller confined to those namespaces sees them (a token not
        scoped to every namespace): the whole database's size and pending scrubs are null
        (:meth:`Stats.confined`)."""
        scoped = self._namespaces(namespaces)
        self._maybe_purge()
        now = self._clock()
        counts = self.store.counts(self._scope(scoped, None, now))
        counted = Stats(
            count=counts.count,
            by_category=counts.by_category,
            # A kind an earlier version stored decomposed counts with its composed spelling,
            # as the kind filter finds both (an older process may still write it so).
            by_kind=_by_spelling(counts.by_kind),
            by_namespace=counts.by_namespace,
            fts=self.store.keyword_backend in FULL_TEXT_BACKENDS,
            search_backend="fts" if self.store.keyword_backend in FULL_TEXT_BACKENDS else "like",
            keyword_backend=self.store.keyword_backend,
            db_size_bytes=self.store.size_bytes(),
            schema_version=self.store.schema_version,
            expired_pending_purge=counts.expired,
            pending_scrubs=self.store.pending_scrubs(),
        )
        return counted.confined() if confined else counted

    def namespaces(self) -> list[str]:
        """Every namespace that holds memories, core memory or declared entities (for admin
        commands such as ``export --all-namespaces``; crosses the walls)."""
        return self.store.namespaces()


def _by_spelling(counts: Mapping[str, int]) -> dict[str, int]:
    """``counts`` with the keys that differ only in their Unicode spelling merged (NFC)."""
    merged: dict[str, int] = {}
    for name, count in counts.items():
        composed = unicodedata.normalize("NFC", name)
        merged[composed] = merged.get(composed, 0) + count
    return merged


def _refuse_include_expired(filters: QueryFilters | None) -> None:
    """Refuse ``include_expired`` in a search, recall or explain: it is the admin listing's."""
    if isinstance(filters, Filters) and filters.include_expired:
        raise ValidationError(
            "filters.include_expired",
            "search and recall never return expired memories; only the admin listing"
            " (list --include-expired) shows them",
        )


# Why a blank query is refused (search, recall, explain; REST, CLI and library alike).
BLANK_QUERY = "is blank: give the text to look for (to browse the newest memories, list them)"


def _searchable(query: Any) -> str:
    """``query`` (:func:`recalld._validate.query`), refused when blank: it matches
    nothing, and answering no hits would read as "nothing stored about that" (chaoscore
    lists the newest for a blank query itself, before it searches)."""
    given = check.query(query)
    if check.is_blank(given):
        raise ValidationError("query", BLANK_QUERY)
    return given
