"""Finding the memories worth scoring for a cue, without scanning the namespace.

Text comes from the full-text index (recall's keyword candidates, see
:mod:`recalld.store.sqlite_retrieval`) and the nearest text vectors, place (and
time) from geohash-prefix range scans around the cue, image and audio from
their feature tables (scored while found), tags from the tag index, and a
time-only cue from the times of the namespace's dated memories (ranked without loading
their rows). Only the memories found are fully scored
(:mod:`recalld.recollection.scoring`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from recalld._text import query_terms
from recalld.config import Settings
from recalld.context.place import (
    POINT_PRECISION,
    Extent,
    cells_around,
    extent_distances,
    extent_of,
    search_precision,
)
from recalld.context.signals import (
    BIOMETRIC_SCALES,
    audio_similarities,
    biometric_similarity,
    image_similarities,
)
from recalld.context.timing import time_similarities
from recalld.errors import EmbeddingError
from recalld.model import Memory, Place
from recalld.recollection.cue import Cue
from recalld.recollection.scoring import WEIGHTS, salience_boost
from recalld.store.base import Scope, Store
from recalld.store.context import ContextStore

logger = logging.getLogger(__name__)

__all__ = ["CandidateFinder", "TextSimilarities"]

CANDIDATE_LIMIT = 2_000
POINT_LIMIT = 50_000
PLACE_CANDIDATES = 50
PLACE_FLOOR = 0.05
# The place search reaches as far as the place similarity stays at least this (1.23 km with
# the default scale): a memory farther away cannot fire (a channel counts from 0.6), and
# scanning the 0.05 floor's reach (1.78 km) read twice the rows for candidates that
# would rank below nearer ones for any cue but a time match.
PLACE_SCAN_SIMILARITY = 0.25
TEXT_CANDIDATES = 50
TEXT_NEAREST = 20
SIGNAL_CANDIDATE_FLOOR = 0.3
SIGNAL_CANDIDATES = 100
BIOMETRIC_NEAREST = 2 * SIGNAL_CANDIDATES

# (text, namespace, seqs, nearest) -> cosine by seq, from the text embedder's vectors.
TextSimilarities = Callable[[str, str, Sequence[int], int], dict[int, float]]


class CandidateFinder:
    """The candidate memories of a cue in one namespace, and the similarities met on the way."""

    def __init__(
        self,
        store: ContextStore,
        search_store: Store,
        settings: Settings,
        text_similarities: TextSimilarities | None,
    ) -> None:
        self._store = store
        self._search_store = search_store
        self._settings = settings
        self._text_similarities = text_similarities

    def find(
        self, cue: Cue, namespace: str, now: datetime, *, firing: bool
    ) -> tuple[dict[int, Memory], dict[str, dict[int, float]], EmbeddingError | None]:
        """Candidate memories by seq, the signal similarities already computed, and why
        the cue's text could not be compared by meaning (None: it was, or has none); the
        other channels still find their candidates."""
        failure: EmbeddingError | None = None
        found: dict[int, Memory] = {}
        wanted: set[int] = set()
        scores: dict[str, dict[int, float]] = {}
        scope = Scope(namespaces=(namespace,), now=now)
        if cue.text and cue.text.strip():
            terms = query_terms(cue.text, self._settings.max_query_terms)
            # Recall's keyword candidates: words held by most memories are left to the
            # rarer ones, so a cue of everyday words costs no ranking of every match.
            wanted.update(
                candidate.row.seq
                for candidate in self._search_store.retrieval.keyword_candidates(
                    scope, cue.text, terms, TEXT_CANDIDATES
                )
            )
            if self._text_similarities is not None:
                try:
                    near = self._text_similarities(cue.text, namespace, [], TEXT_NEAREST)
                except EmbeddingError as error:
                    logger.warning("text similarity skipped: embedding failed: %s", error)
                    near, failure = {}, error
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
            rows = self._store.with_channel(namespace, "audio", now)
            similarity = audio_similarities(cue.audio, [data for _, data in rows])
            scores["audio"] = {
                seq: float(value) for (seq, _), value in zip(rows, similarity, strict=True)
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
            wanted.update(self._by_time(cue, namespace, now))
        missing = sorted(wanted - set(found))
        for memory in self._store.by_seqs(namespace, missing, now):
            found[memory.seq] = memory
        return found, scores, failure

    def text_cosines(self, text: str, namespace: str, seqs: Sequence[int]) -> dict[int, float]:
        """The text-embedding cosine of ``text`` with these memories (empty without vectors).
        Raises :class:`EmbeddingError` when the embedder fails."""
        if self._text_similarities is None or not seqs:
            return {}
        return self._text_similarities(text, namespace, seqs, 0)

    def _biometric_scan(
        self, readings: dict[str, float], namespace: str, now: datetime
    ) -> dict[int, float]:
        """Mean per-reading similarity of the memories nearest the cue's readings.

        Only a memory with one reading of similarity >= the candidate floor can
        reach that floor on the mean, so each reading is looked up in the
        ``(name, value)`` index within the window where its similarity is at
        least the floor, nearest first and bounded, instead of every stored
        reading of the name being scanned.
        """
        seqs: set[int] = set()
        reach = math.sqrt(-2.0 * math.log(SIGNAL_CANDIDATE_FLOOR))  # in scales
        for name, value in sorted(readings.items()):
            scale = BIOMETRIC_SCALES.get(name)
            # Unknown names scale with the memory's value (10%): its window is wider.
            width = reach * scale if scale else 0.25 * abs(value) + 1e-6
            seqs.update(
                self._store.nearest_readings(
                    namespace,
                    name,
                    value - width,
                    value,
                    value + width,
                    now,
                    BIOMETRIC_NEAREST,
                )
            )
        found: dict[int, float] = {}
        for seq, stored in self._store.biometrics(sorted(seqs)).items():
            similarity = biometric_similarity(readings, stored)
            if similarity is not None:
                found[seq] = similarity
        return found

    def _by_time(self, cue: Cue, namespace: str, now: datetime) -> list[int]:
        """The memories whose time best matches a cue of a time alone (only a recall gives
        one: a sense always has another channel).

        Ranks the namespace's dated memories (at most :data:`POINT_LIMIT`, the newest,
        reading only seq, time and salience) by the score recall gives a time alone (its
        time similarity times the salience boost, ties to the later seq, as
        :func:`~recalld.recollection.scoring.combined_score` and the recollector rank) and
        keeps as many as a recall may return (``max_limit``): the best match of a June
        afternoon is a June afternoon of any year, not among whichever memories happen to
        be the newest, and a salient memory a little further in time is not cut for less
        salient ones closer to it.
        """
        assert cue.at is not None
        points = self._store.dated_points(namespace, now, POINT_LIMIT)
        if not points:
            return []
        similarity = np.round(time_similarities(cue.at, [at for _, at, _ in points]), 6)
        salience = np.fromiter(
            (0.5 if value is None else value for _, _, value in points), np.float64, len(points)
        )
        score = np.round(np.clip(similarity * salience_boost(salience), 0.0, 1.0), 6)
        seqs = np.fromiter((seq for seq, _, _ in points), np.int64, len(points))
        order = np.lexsort((-seqs, -score))[: self._settings.max_limit]
        return [int(seq) for seq in seqs[order]]

    def _near(self, cue: Cue, place: Place, namespace: str, now: datetime) -> list[int]:
        """The best place (and time) matches around ``place``, found by geohash prefixes.

        Scans the geohash cells (about half the place scale across: precision 6,
        ~0.6 x 1.2 km, for the default 1 km scale; coarser near the poles) that
        cover every place whose similarity can reach :data:`PLACE_SCAN_SIMILARITY`,
        reading only seq, coordinates, geohash and time; ranks by place (plus
        time when cued) and keeps the best :data:`PLACE_CANDIDATES` for full
        scoring. A place given by a coarse geohash (the cue's or a memory's) is
        its cell (see :mod:`recalld.context.place`).
        """
        settings = self._settings
        centre = extent_of(place.geohash, place.lat, place.lon)
        reach = settings.place_near_m + settings.place_scale_m * math.sqrt(
            -math.log(PLACE_SCAN_SIMILARITY)
        )
        prefixes = cells_around(centre, reach, search_precision(settings.place_scale_m / 2))
        # A memory placed by a coarser geohash ("u09tv", a 5 km cell) is in the search when
        # its cell holds one of the searched cells, though no prefix starts its geohash.
        cells = sorted({prefix[:length] for prefix in prefixes for length in range(1, len(prefix))})
        points = self._store.near_points(namespace, prefixes, now, POINT_LIMIT, cells)
        if not points:
            return []
        count = len(points)
        seqs = np.fromiter((point[0] for point in points), np.int64, count)
        lats = np.fromiter((point[1] for point in points), np.float64, count)
        lons = np.fromiter((point[2] for point in points), np.float64, count)
        # Most places are points; the few given as a coarse geohash are their cells.
        lat_halves, lon_halves = np.zeros(count), np.zeros(count)
        centre_lats, centre_lons = lats, lons
        coarse = [i for i, point in enumerate(points) if len(point[4]) < POINT_PRECISION]
        if coarse:
            centre_lats, centre_lons = lats.copy(), lons.copy()
            for i in coarse:
                area = extent_of(points[i][4], lats[i], lons[i])
                centre_lats[i], centre_lons[i] = area.lat, area.lon
                lat_halves[i], lon_halves[i] = area.lat_half, area.lon_half
        distance = extent_distances(centre, centre_lats, centre_lons, lat_halves, lon_halves)
        beyond = np.maximum(0.0, distance - settings.place_near_m)
        near = np.exp(-((beyond / settings.place_scale_m) ** 2))
        similarity = near
        if cue.at is not None:
            times = [point[3] for point in points]
            similarity = near + WEIGHTS["time"] * time_similarities(cue.at, times)
        # Within the reach in every direction (the cells scanned also hold places beyond
        # it on some sides), and at the floor with the time match.
        keep = (near >= PLACE_SCAN_SIMILARITY) & (similarity >= PLACE_FLOOR)
        seqs, similarity = seqs[keep], similarity[keep]
        # Ties (every place within the same building, and every cell holding the cue) go
        # to the nearest stored point: a memory at the very spot is not crowded out by
        # memories placed somewhere in a 5 km cell around it.
        centres = (
            extent_distances(Extent(centre.lat, centre.lon), lats[keep], lons[keep])
            if coarse or centre.lat_half
            else distance[keep]
        )
        order = np.lexsort((centres, -similarity))[:PLACE_CANDIDATES]
        return [int(seq) for seq in seqs[order]]
