"""Involuntary recall: memories stored with their context come back when the context recurs.

``recall`` (pull) compares only the cues given and changes nothing. ``sense``
(push) always includes the current time; memories whose encoding context
matches strongly *fire*: they are returned, queued for ``pending`` and not
fired again for the habituation window.

Channels, each a similarity in [0, 1] (see :mod:`recalld.context`): ``text``
(what is heard or read: the larger of the F1 overlap of its words with the
memory's words and the cosine of their text embeddings, when the memory is
embedded; candidates from the full-text index and the nearest vectors),
``place``, ``time``, ``tags``,
``image``, ``audio``, ``biometric``. A memory's score is the weighted mean of
the channels both the cue and the memory have (weights: text, place, image,
audio 1.0; time and biometric 0.6; tags 0.5; a memory stored without a place
is neither helped nor hurt by the cue's place), times a salience boost
``0.85 + 0.15·salience`` (salience 0.5 when unset), so salience lifts a match
but never makes one.

Firing rule (defaults, all in :class:`~recalld.config.Settings`): a memory
fires when one of ``text``, ``image`` or ``audio`` alone reaches
``fire_strong`` (0.9), or when its score is at least ``fire_score`` (0.55) and
two or more channels reach ``fire_channel`` (0.6), at least one of them an
anchor (place, text, image or audio). Time, place, tags or a biometric reading
alone never fires, nor do time and biometrics together; a memory that fired
does not fire again for ``habituation_seconds`` (3 hours).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from pydantic import BaseModel

from recalld import _validate as check
from recalld._text import prompt_line, query_terms
from recalld._time import Clock, parse_instant
from recalld.config import Settings
from recalld.context.place import (
    distance_m,
    neighbourhood,
    place_similarities,
    place_similarity,
    search_precision,
)
from recalld.context.signals import (
    BIOMETRIC_SCALES,
    AudioFeatures,
    ImageEncoder,
    ImageFeatures,
    audio_features,
    audio_similarity,
    biometric_similarity,
    check_biometrics,
    image_features,
    image_similarities,
    load_image_encoder,
    load_media,
)
from recalld.context.timing import time_similarities, time_similarity
from recalld.errors import ValidationError
from recalld.model import Hit, Memory, NewMemory, Place, PlaceInput, Receipt
from recalld.store.base import Scope, Store
from recalld.store.context import ContextStore

__all__ = ["Cue", "Recollection", "Recollector", "flat_place"]

WEIGHTS = {
    "text": 1.0,
    "place": 1.0,
    "time": 0.6,
    "tags": 0.5,
    "image": 1.0,
    "audio": 1.0,
    "biometric": 0.6,
}
STRONG_ALONE = ("text", "image", "audio")
# Channels that say *what* or *where*; time, tags and biometrics only support them.
ANCHORS = ("place", "text", "image", "audio")
CANDIDATE_LIMIT = 2_000
POINT_LIMIT = 50_000
PLACE_CANDIDATES = 50
PLACE_FLOOR = 0.05
TEXT_CANDIDATES = 50
SIGNAL_CANDIDATE_FLOOR = 0.3
SIGNAL_CANDIDATES = 100

Put = Callable[..., tuple[Receipt, Memory]]
# (text, namespace, seqs, nearest) -> cosine by seq, from the text embedder's vectors.
TextSimilarities = Callable[[str, str, Sequence[int], int], dict[int, float]]
TEXT_NEAREST = 20


class Recollection(BaseModel):
    """A memory that surfaced involuntarily: why, how strongly, and when."""

    memory: Memory
    score: float
    channels: dict[str, float]
    prompt_line: str
    fired_at: datetime


@dataclass
class Cue:
    """A context to compare memories with; only the parts given are compared."""

    text: str | None = None
    place: Place | None = None
    at: datetime | None = None
    tags: tuple[str, ...] = ()
    image: ImageFeatures | None = None
    audio: AudioFeatures | None = None
    biometrics: dict[str, float] = field(default_factory=dict)

    def channels(self) -> list[str]:
        """The channels this cue compares."""
        given = {
            "text": bool(self.text and self.text.strip()),
            "place": self.place is not None,
            "time": self.at is not None,
            "tags": bool(self.tags),
            "image": self.image is not None,
            "audio": self.audio is not None,
            "biometric": bool(self.biometrics),
        }
        return [name for name, present in given.items() if present]


def flat_place(geohash: str | None, lat: float | None, lon: float | None) -> dict[str, Any] | None:
    """The place dict the engine takes, from the flat ``geohash`` / ``lat`` + ``lon``
    arguments adapters receive (None when none is given)."""
    if geohash is None and lat is None and lon is None:
        return None
    if geohash is None and (lat is None or lon is None):
        raise ValidationError("lat" if lat is None else "lon", "give lat and lon together")
    place: dict[str, Any] = {}
    if geohash is not None:
        place["geohash"] = geohash
    if lat is not None or lon is not None:
        place.update(lat=lat, lon=lon)
    return place


def _place(value: dict[str, Any] | None) -> Place | None:
    if value is None:
        return None
    return check.place(check.parse_model(PlaceInput, value, prefix="place."))


def _features(
    image: str | None,
    audio: str | None,
    biometrics: dict[str, float] | None,
    allow_paths: bool,
    encoder: ImageEncoder | None,
) -> tuple[ImageFeatures | None, AudioFeatures | None, dict[str, float]]:
    image_part = (
        None
        if image is None
        else image_features(load_media(image, "image", allow_paths=allow_paths), encoder)
    )
    audio_part = (
        None
        if audio is None
        else audio_features(load_media(audio, "audio", allow_paths=allow_paths))
    )
    readings = check_biometrics(biometrics or {})
    return image_part, audio_part, readings


def _words(text: str) -> set[str]:
    return set(query_terms(text, 10_000))


def _overlap(cue: set[str], memory: set[str]) -> float:
    """F1 of shared words: 1 for the same words, 0.5 for one word of a three-word memory."""
    shared = len(cue & memory)
    if not shared:
        return 0.0
    precision, recall = shared / len(memory), shared / len(cue)
    return 2 * precision * recall / (precision + recall)


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
    ) -> None:
        self._store = store
        self._search_store = search_store
        self._settings = settings
        self._clock = clock
        self._put = put
        self._text_similarities = text_similarities
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
        image_part, audio_part, readings = _features(
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
                "tags": list(tags),
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
        image_part, audio_part, readings = _features(
            image, audio, biometrics, allow_paths, self._image_encoder()
        )
        return Cue(
            text=text,
            place=_place(place),
            at=None if at is None else parse_instant("at", at),
            tags=check.tags(list(tags), self._settings),
            image=image_part,
            audio=audio_part,
            biometrics=readings,
        )

    def _candidates(
        self, cue: Cue, namespace: str, now: datetime, *, firing: bool
    ) -> tuple[dict[int, Memory], dict[str, dict[int, float]]]:
        """Candidate memories, and the signal similarities already computed while finding them."""
        found: dict[int, Memory] = {}
        wanted: set[int] = set()
        scores: dict[str, dict[int, float]] = {}
        scope = Scope(namespaces=(namespace,), now=now)
        if cue.text and cue.text.strip():
            terms = query_terms(cue.text, self._settings.max_query_terms)
            for match in self._search_store.search(scope, cue.text, terms, TEXT_CANDIDATES):
                found[match.memory.seq] = match.memory
            if self._text_similarities is not None:
                near = self._text_similarities(cue.text, namespace, [], TEXT_NEAREST)
                scores["cosine"] = near
                wanted.update(seq for seq, value in near.items() if value >= SIGNAL_CANDIDATE_FLOOR)
        if cue.place is not None:
            wanted.update(self._near(cue, cue.place, namespace, now))
        if cue.image is not None:
            rows = self._store.with_channel(namespace, "image", now)
            similarity = image_similarities(cue.image, [data for _, data in rows])
            scores["image"] = {
                seq: float(value) for (seq, _), value in zip(rows, similarity, strict=True)
            }
        if cue.audio is not None:
            scores["audio"] = {
                seq: audio_similarity(cue.audio, AudioFeatures.from_bytes(data))
                for seq, data in self._store.with_channel(namespace, "audio", now)
            }
        # A biometric reading cannot fire on its own, so only a deliberate recall
        # scans for it; sense scores it on the other channels' candidates.
        if cue.biometrics and not firing:
            scores["biometric"] = self._biometric_scan(cue.biometrics, namespace, now)
        for channel_scores in scores.values():
            best = sorted(channel_scores.items(), key=lambda item: -item[1])[:SIGNAL_CANDIDATES]
            wanted.update(seq for seq, value in best if value >= SIGNAL_CANDIDATE_FLOOR)
        if cue.tags:
            for memory in self._search_store.list_page(
                Scope(namespaces=(namespace,), now=now, tags_any=cue.tags),
                order="created",
                limit=CANDIDATE_LIMIT,
                after=None,
            ):
                found[memory.seq] = memory
        if not found and not wanted and cue.channels() == ["time"]:
            for memory in self._store.latest_with_time(namespace, now, CANDIDATE_LIMIT):
                found[memory.seq] = memory
        missing = sorted(wanted - set(found))
        for memory in self._store.by_seqs(namespace, missing, now):
            found[memory.seq] = memory
        return found, scores

    def _biometric_scan(
        self, readings: dict[str, float], namespace: str, now: datetime
    ) -> dict[int, float]:
        """Mean per-reading similarity of every memory sharing a reading with the cue."""
        rows = self._store.biometric_rows(namespace, sorted(readings), now)
        if not rows:
            return {}
        seqs = np.array([row[0] for row in rows])
        values = np.array([row[2] for row in rows])
        wanted = np.array([readings[row[1]] for row in rows])
        scales = np.array(
            [BIOMETRIC_SCALES.get(row[1]) or max(abs(row[2]) * 0.1, 1e-6) for row in rows]
        )
        parts = np.exp(-0.5 * ((wanted - values) / scales) ** 2)
        unique, index = np.unique(seqs, return_inverse=True)
        means = np.bincount(index, weights=parts) / np.bincount(index)
        return {int(seq): float(mean) for seq, mean in zip(unique, means, strict=True)}

    def _near(self, cue: Cue, place: Place, namespace: str, now: datetime) -> list[int]:
        """The best place (and time) matches around ``place``, found by geohash prefixes.

        Scans the 5x5 block of geohash cells about half the place scale across
        (precision 6, ~0.6 x 1.2 km, for the default 1 km scale), reading only
        seq, coordinates and time; ranks by place (plus time when cued) and
        keeps the best :data:`PLACE_CANDIDATES` for full scoring.
        """
        settings = self._settings
        precision = search_precision(settings.place_scale_m / 2)
        prefixes = neighbourhood(place.geohash, precision, rings=2)
        points = self._store.near_points(namespace, prefixes, now, POINT_LIMIT)
        if not points:
            return []
        seqs = np.array([point[0] for point in points])
        similarity = place_similarities(
            place.lat,
            place.lon,
            np.array([point[1] for point in points]),
            np.array([point[2] for point in points]),
            near_m=settings.place_near_m,
            scale_m=settings.place_scale_m,
        )
        if cue.at is not None:
            times = [point[3] for point in points]
            similarity = similarity + WEIGHTS["time"] * time_similarities(cue.at, times)
        keep = similarity >= PLACE_FLOOR
        seqs, similarity = seqs[keep], similarity[keep]
        order = np.argsort(-similarity, kind="stable")[:PLACE_CANDIDATES]
        return [int(seq) for seq in seqs[order]]

    def _channels(
        self,
        cue: Cue,
        memory: Memory,
        keyword: dict[int, float],
        scores: dict[str, dict[int, float]],
    ) -> dict[str, float]:
        channels: dict[str, float] = {}
        for name in cue.channels():
            if name == "text":
                channels["text"] = keyword.get(memory.seq, 0.0)
            elif name == "place":
                assert cue.place is not None
                if memory.place is not None:
                    distance = distance_m(
                        cue.place.lat, cue.place.lon, memory.place.lat, memory.place.lon
                    )
                    channels["place"] = place_similarity(
                        distance,
                        near_m=self._settings.place_near_m,
                        scale_m=self._settings.place_scale_m,
                    )
            elif name == "time":
                assert cue.at is not None
                if memory.at is not None:
                    channels["time"] = time_similarity(cue.at, memory.at).combined
            elif name == "tags":
                shared = set(cue.tags) & set(memory.tags)
                channels["tags"] = len(shared) / len(set(cue.tags))
            elif memory.seq in scores.get(name, {}):
                channels[name] = scores[name][memory.seq]
        return {name: round(value, 6) for name, value in channels.items()}

    def _complete_scores(
        self, cue: Cue, seqs: list[int], scores: dict[str, dict[int, float]]
    ) -> None:
        """Compute the signal similarities not yet known for these candidates."""
        needed = {
            channel: [seq for seq in seqs if seq not in scores.get(channel, {})]
            for channel in ("image", "audio", "biometric")
            if channel in cue.channels()
        }
        features = self._store.signals(
            sorted({seq for channel in ("image", "audio") for seq in needed.get(channel, [])})
        )
        if cue.image is not None:
            have = [seq for seq in needed.get("image", []) if "image" in features.get(seq, {})]
            similarity = image_similarities(cue.image, [features[seq]["image"] for seq in have])
            scores.setdefault("image", {}).update(
                (seq, float(value)) for seq, value in zip(have, similarity, strict=True)
            )
        if cue.audio is not None:
            for seq in needed.get("audio", []):
                data = features.get(seq, {}).get("audio")
                if data is not None:
                    scores.setdefault("audio", {})[seq] = audio_similarity(
                        cue.audio, AudioFeatures.from_bytes(data)
                    )
        if cue.biometrics:
            readings = self._store.biometrics(needed.get("biometric", []))
            for seq, stored in readings.items():
                reading_similarity = biometric_similarity(cue.biometrics, stored)
                if reading_similarity is not None:
                    scores.setdefault("biometric", {})[seq] = reading_similarity

    @staticmethod
    def _score(channels: dict[str, float], salience: float | None) -> float:
        total = sum(WEIGHTS[name] for name in channels)
        if total == 0:
            return 0.0
        base = sum(WEIGHTS[name] * value for name, value in channels.items()) / total
        boost = 0.85 + 0.15 * (0.5 if salience is None else salience)
        return round(min(1.0, max(0.0, base * boost)), 6)

    def _rank(
        self, cue: Cue, namespace: str, now: datetime, *, firing: bool = False
    ) -> list[tuple[Memory, float, dict[str, float]]]:
        if not cue.channels():
            raise ValidationError(
                "cue",
                "give at least one of: text or query, a place, at, tags, image, audio, biometrics",
            )
        candidates, scores = self._candidates(cue, namespace, now, firing=firing)
        if not candidates:
            return []
        self._complete_scores(cue, sorted(candidates), scores)
        keyword: dict[int, float] = {}
        if cue.text and cue.text.strip():
            cue_words = _words(cue.text)
            cosine = scores.get("cosine", {})
            if self._text_similarities is not None:
                unknown = [seq for seq in candidates if seq not in cosine]
                cosine.update(self._text_similarities(cue.text, namespace, unknown, 0))
            for seq, memory in candidates.items():
                overlap = _overlap(cue_words, _words(f"{memory.title or ''} {memory.content}"))
                keyword[seq] = max(overlap, cosine.get(seq, 0.0))
        ranked = []
        for memory in candidates.values():
            channels = self._channels(cue, memory, keyword, scores)
            ranked.append((memory, self._score(channels, memory.salience), channels))
        ranked.sort(key=lambda item: (-item[1], -item[0].seq))
        return ranked

    def recall(self, cue: Cue, *, k: int = 5, namespace: str | None = None) -> list[Hit]:
        """Memories whose context best matches ``cue``, best first; changes nothing."""
        check.limit(k, self._settings, field="k")
        scope_namespace = self._namespace(namespace)
        ranked = self._rank(cue, scope_namespace, self._clock())
        return [
            Hit(
                memory=memory,
                score=score,
                channels=channels,
                backends=["context"],
                prompt_line=prompt_line(memory),
            )
            for memory, score, channels in ranked[:k]
            if score > 0
        ]

    def _fires(self, channels: dict[str, float], score: float) -> bool:
        settings = self._settings
        if any(channels.get(name, 0.0) >= settings.fire_strong for name in STRONG_ALONE):
            return True
        strong = [name for name, value in channels.items() if value >= settings.fire_channel]
        return (
            score >= settings.fire_score
            and len(strong) >= 2
            and any(name in ANCHORS for name in strong)
        )

    def sense(self, cue: Cue, *, namespace: str | None = None) -> list[Recollection]:
        """Compare the present context with every relevant memory; fire the strong matches.

        The current time is part of every sense cue (``cue.at`` defaults to now,
        on this machine's local clock). Fired memories are queued for
        :meth:`pending` and habituated.
        """
        scope_namespace = self._namespace(namespace)
        if not set(cue.channels()) - {"time", "tags"}:
            raise ValidationError(
                "cue", "sense needs at least one of: text, a place, image, audio, biometrics"
            )
        now = self._clock()
        if cue.at is None:
            cue.at = now.astimezone()
        ranked = self._rank(cue, scope_namespace, now, firing=True)
        firing = [(m, s, c) for m, s, c in ranked if self._fires(c, s)]
        since = now - timedelta(seconds=self._settings.habituation_seconds)
        queued = [(m.seq, score, channels, prompt_line(m)) for m, score, channels in firing]
        fired = set(self._store.fire(scope_namespace, queued, now, since))
        return [
            Recollection(
                memory=memory,
                score=score,
                channels=channels,
                prompt_line=prompt_line(memory),
                fired_at=now,
            )
            for memory, score, channels in firing
            if memory.seq in fired
        ]

    def pending(
        self, *, drain: bool = True, limit: int = 50, namespace: str | None = None
    ) -> list[Recollection]:
        """Queued recollections, oldest first; ``drain`` removes what it returns (exactly once)."""
        check.limit(limit, self._settings)
        rows = self._store.take_pending(self._namespace(namespace), limit, drain)
        return [
            Recollection(
                memory=row.memory,
                score=row.score,
                channels=row.channels,
                prompt_line=row.prompt_line,
                fired_at=parse_instant("fired_at", row.fired_at),
            )
            for row in rows
        ]

    def version(self, *, namespace: str | None = None) -> int:
        """Changes whenever the namespace's pending queue changes (for notifications)."""
        return self._store.pending_version(self._namespace(namespace))
