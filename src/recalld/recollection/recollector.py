"""The :class:`Recollector`: experiences in, context recall, sense, and the pending queue."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from recalld import _validate as check
from recalld._text import prompt_line
from recalld._time import Clock, local_time, parse_instant
from recalld.config import Settings
from recalld.context.signals import ImageEncoder, load_image_encoder
from recalld.errors import EmbedderUnavailableError, EmbeddingError, ValidationError
from recalld.model import Hit, Memory, NewMemory, Receipt
from recalld.recollection.candidates import CandidateFinder, TextSimilarities
from recalld.recollection.cue import Cue, Recollection, Reminder, media_features, parse_place
from recalld.recollection.firing import fires
from recalld.recollection.scoring import (
    channel_values,
    combined_score,
    complete_scores,
    word_overlap,
    words,
)
from recalld.retrieval.hybrid import VECTOR_UNAVAILABLE
from recalld.store.base import Store
from recalld.store.context import ContextStore

logger = logging.getLogger(__name__)

__all__ = ["Put", "Recollector", "ReminderHook"]

Put = Callable[..., tuple[Receipt, Memory]]
# (cue, namespace, now, recollections that fired) -> reminders that fired (already queued).
ReminderHook = Callable[[Cue, str, datetime, list[Recollection]], list[Recollection]]
# Intentions come back through their triggers as reminders, never as recollections.
NOT_RECOLLECTED = frozenset({"intention"})
# Counts when the caller gives none, each held to RECALLD_MAX_LIMIT (check.limit).
RECALL_K = 5
PENDING_LIMIT = 50


class Recollector:
    """Context recall, sensing and the pending queue over one database."""

    def __init__(
        self,
        store: ContextStore,
        search_store: Store,
        settings: Settings,
        clock: Clock,
        put: Put,
        text_similarities: TextSimilarities | None = None,
        reminders: ReminderHook | None = None,
    ) -> None:
        self._store = store
        self._reminders = reminders
        self._settings = settings
        self._clock = clock
        self._put = put
        self._finder = CandidateFinder(store, search_store, settings, text_similarities)
        self._encoder: ImageEncoder | None = None

    def _namespace(self, namespace: str | None) -> str:
        return check.namespace(self._settings.namespace if namespace is None else namespace)

    def _image_encoder(self) -> ImageEncoder | None:
        """The configured image model (``RECALLD_IMAGE_ENCODER``), loaded once."""
        spec = self._settings.image_encoder
        if spec is None:
            return None
        if self._encoder is None:
            self._encoder = load_image_encoder(spec)
        return self._encoder

    # -- writing -------------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        place: dict[str, Any] | None = None,
        at: str | datetime | None = None,
        tags: Sequence[str] = (),
        salience: float | None = None,
        image: str | None = None,
        audio: str | None = None,
        biometrics: dict[str, float] | None = None,
        title: str | None = None,
        meta: dict[str, Any] | None = None,
        namespace: str | None = None,
        allow_paths: bool = True,
    ) -> Memory:
        """Store an experience with its context; raw media are reduced to features first.

        ``image`` and ``audio`` are base64 or (with ``allow_paths``) a local file path.
        """
        image_part, audio_part, readings = media_features(
            image, audio, biometrics, allow_paths, self._image_encoder()
        )
        signals: dict[str, bytes] = {}
        if image_part is not None:
            signals["image"] = image_part.to_bytes()
        if audio_part is not None:
            signals["audio"] = audio_part.to_bytes()
        draft = check.parse_model(
            NewMemory,
            {
                "content": content,
                "kind": "experience",
                "title": title,
                "tags": check.listed(tags, "tags"),
                "salience": salience,
                "at": at,
                "place": place,
                "meta": meta or {},
            },
        )
        _, memory = self._put(draft, namespace=namespace, signals=signals, biometrics=readings)
        return memory

    # -- comparing -----------------------------------------------------------

    def cue(
        self,
        *,
        text: str | None = None,
        place: dict[str, Any] | None = None,
        at: str | datetime | None = None,
        tags: Sequence[str] = (),
        image: str | None = None,
        audio: str | None = None,
        biometrics: dict[str, float] | None = None,
        allow_paths: bool = True,
    ) -> Cue:
        """Validate raw cue parts into a :class:`Cue` (media become features here)."""
        image_part, audio_part, readings = media_features(
            image, audio, biometrics, allow_paths, self._image_encoder()
        )
        return Cue(
            # As search's query: text (valid Unicode), at most its length.
            text=None if text is None else check.query(text, "text"),
            place=parse_place(place),
            at=None if at is None else parse_instant("at", at),
            tags=check.tags(check.listed(tags, "tags"), self._settings),
            image=image_part,
            audio=audio_part,
            biometrics=readings,
        )

    def _rank(
        self, cue: Cue, namespace: str, now: datetime, *, firing: bool = False
    ) -> tuple[list[tuple[Memory, float, dict[str, float]]], EmbeddingError | None]:
        """The candidates of ``cue`` with their score and channels, best first, and why its
        text could not be compared by meaning (then by its words alone; None: it was)."""
        if not cue.channels():
            raise ValidationError(
                "cue",
                "give at least one of: text or query, a place, at, tags, image, audio, biometrics",
            )
        candidates, scores, failure = self._finder.find(cue, namespace, now, firing=firing)
        if not candidates:
            return [], failure
        complete_scores(self._store, cue, sorted(candidates), scores)
        text: dict[int, float] = {}
        if cue.text and cue.text.strip():
            cue_words = words(cue.text)
            cosine = scores.get("cosine", {})
            unknown = [seq for seq in candidates if seq not in cosine]
            if failure is None:
                try:
                    cosine.update(self._finder.text_cosines(cue.text, namespace, unknown))
                except EmbeddingError as error:
                    logger.warning("text similarity skipped: embedding failed: %s", error)
                    failure = error
            for seq, memory in candidates.items():
                overlap = word_overlap(cue_words, words(f"{memory.title or ''} {memory.content}"))
                text[seq] = max(overlap, cosine.get(seq, 0.0))
        ranked = []
        for memory in candidates.values():
            channels = channel_values(cue, memory, text, scores, self._settings)
            ranked.append((memory, combined_score(channels, memory.salience), channels))
        ranked.sort(key=lambda item: (-item[1], -item[0].seq))
        return ranked, failure

    def recall(self, cue: Cue, *, k: int | None = None, namespace: str | None = None) -> list[Hit]:
        """Memories whose context best matches ``cue``, best first; changes nothing.

        ``k``: at most this many, 5 by default (``max_limit`` when that is lower)."""
        k = check.limit(k, self._settings, field="k", default=RECALL_K)
        scope_namespace = self._namespace(namespace)
        ranked, failure = self._rank(cue, scope_namespace, self._clock())
        # As search's hits: compared by the text's words alone, and saying so.
        backends = ["context"] if failure is None else ["context", VECTOR_UNAVAILABLE]
        hits = [
            Hit(
                memory=memory,
                score=score,
                channels=channels,
                backends=list(backends),
                prompt_line=prompt_line(memory),
            )
            for memory, score, channels in ranked[:k]
            if score > 0
        ]
        if not hits and failure is not None:
            # An empty answer would say nothing stored matches the cue, when its text was
            # never compared by meaning.
            kind = (
                EmbedderUnavailableError
                if isinstance(failure, EmbedderUnavailableError)
                else EmbeddingError
            )
            raise kind(
                f"recall found nothing and could not compare the text by meaning: {failure}"
            ) from failure
        return hits

    # -- firing --------------------------------------------------------------

    def sense(self, cue: Cue, *, namespace: str | None = None) -> list[Recollection]:
        """Compare the present context with every relevant memory; fire the strong matches.

        The current time is part of every sense cue (``cue.at`` defaults to now,
        on the user's clock: ``RECALLD_ZONE``, else this machine's offset). Fired
        memories are queued for :meth:`pending` and habituated. Intentions whose
        triggers hold fire too (see :mod:`recalld.intentions`): their reminders
        follow the recollections.
        A cue of tags alone only reaches intentions (tags never fire a memory).
        """
        scope_namespace = self._namespace(namespace)
        given = set(cue.channels()) - {"time"}
        if not given:
            raise ValidationError(
                "cue", "sense needs at least one of: text, a place, tags, image, audio, biometrics"
            )
        now = self._clock()
        if cue.at is None:
            # A copy: the caller's cue keeps no time it did not give (a cue reused an hour
            # later, or given to recall, compares its own time, not this sense's).
            cue = replace(cue, at=local_time(now, self._settings.zone))
        # Involuntary: a text that cannot be compared by meaning (logged) fires by its words.
        ranked = self._rank(cue, scope_namespace, now, firing=True)[0] if given - {"tags"} else []
        firing = [
            (m, s, c)
            for m, s, c in ranked
            if m.kind not in NOT_RECOLLECTED and fires(c, s, self._settings)
        ]
        since = now - timedelta(seconds=self._settings.habituation_seconds)
        queued = [(m.seq, score, channels) for m, score, channels in firing]
        # What fired, as it read when it fired: a memory forgotten or edited since the
        # ranking is left out, or comes back with its text as it reads now.
        fired = (
            {
                memory.seq: memory
                for memory in self._store.fire(
                    scope_namespace, queued, now, since, limit=self._settings.fire_limit
                )
            }
            if queued
            else {}
        )
        recollections = [
            Recollection(
                memory=fired[memory.seq],
                score=score,
                channels=channels,
                prompt_line=prompt_line(fired[memory.seq]),
                fired_at=now,
            )
            for memory, score, channels in firing
            if memory.seq in fired
        ]
        if self._reminders is None:
            return recollections
        return recollections + self._reminders(cue, scope_namespace, now, recollections)

    # -- the pending queue ---------------------------------------------------

    def pending(
        self, *, drain: bool = True, limit: int | None = None, namespace: str | None = None
    ) -> list[Recollection]:
        """Queued recollections, oldest first; ``drain`` removes what it returns (exactly once).

        ``limit``: at most this many, 50 by default (``max_limit`` when that is lower)."""
        check.flag(drain, "drain")
        limit = check.limit(limit, self._settings, default=PENDING_LIMIT)
        rows = self._store.take_pending(self._namespace(namespace), limit, drain, self._clock())
        return [
            Recollection(
                memory=row.memory,
                score=row.score,
                channels=row.channels,
                prompt_line=row.prompt_line,
                fired_at=row.fired_at,
                kind="reminder" if row.kind == "reminder" else "recollection",
                reminder=None if row.details is None else Reminder.model_validate(row.details),
            )
            for row in rows
        ]

    def version(self, *, namespace: str | None = None) -> int:
        """Changes whenever the namespace's pending queue changes (for notifications)."""
        return self._store.pending_version(self._namespace(namespace))
