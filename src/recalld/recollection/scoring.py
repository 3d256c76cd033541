"""Per-channel similarities of a memory to a cue, and how they combine into one score.

A memory's score is the weighted mean of the channels both the cue and the
memory have (:data:`WEIGHTS`; a memory stored without a place is neither
helped nor hurt by the cue's place), times a salience boost
``0.85 + 0.15·salience`` (salience 0.5 when unset), so salience lifts a match
but never makes one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recalld._text import query_terms
from recalld.config import Settings
from recalld.context.place import place_distance, place_similarity
from recalld.context.signals import (
    audio_similarities,
    biometric_similarity,
    image_similarities,
)
from recalld.context.timing import time_similarity
from recalld.model import Memory
from recalld.recollection.cue import Cue
from recalld.store.context import ContextStore

__all__ = [
    "WEIGHTS",
    "channel_values",
    "combined_score",
    "complete_scores",
    "word_overlap",
    "words",
]

WEIGHTS = {
    "text": 1.0,
    "place": 1.0,
    "time": 0.6,
    "tags": 0.5,
    "image": 1.0,
    "audio": 1.0,
    "biometric": 0.6,
}


def words(text: str) -> set[str]:
    """The distinct word terms of ``text`` (stop-words dropped as for keyword search)."""
    return set(query_terms(text, 10_000))


def word_overlap(cue: set[str], memory: set[str]) -> float:
    """F1 of shared words: 1 for the same words, 0.5 for one word of a three-word memory."""
    shared = len(cue & memory)
    if not shared:
        return 0.0
    precision, recall = shared / len(memory), shared / len(cue)
    return 2 * precision * recall / (precision + recall)


def channel_values(
    cue: Cue,
    memory: Memory,
    text: dict[int, float],
    scores: dict[str, dict[int, float]],
    settings: Settings,
) -> dict[str, float]:
    """Every channel the cue gives and the memory has, as a similarity in [0, 1]."""
    channels: dict[str, float] = {}
    for name in cue.channels():
        if name == "text":
            channels["text"] = text.get(memory.seq, 0.0)
        elif name == "place":
            assert cue.place is not None
            if memory.place is not None:
                distance = place_distance(cue.place, memory.place)
                channels["place"] = place_similarity(
                    distance, near_m=settings.place_near_m, scale_m=settings.place_scale_m
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


def complete_scores(
    store: ContextStore, cue: Cue, seqs: Sequence[int], scores: dict[str, dict[int, float]]
) -> None:
    """Compute the signal similarities not yet known for these candidates (in place)."""
    needed = {
        channel: [seq for seq in seqs if seq not in scores.get(channel, {})]
        for channel in ("image", "audio", "biometric")
        if channel in cue.channels()
    }
    features = store.signals(
        sorted({seq for channel in ("image", "audio") for seq in needed.get(channel, [])})
    )
    if cue.image is not None:
        have = [seq for seq in needed.get("image", []) if "image" in features.get(seq, {})]
        similarity = image_similarities(cue.image, [features[seq]["image"] for seq in have])
        scores.setdefault("image", {}).update(
            (seq, float(value)) for seq, value in zip(have, similarity, strict=True)
        )
    if cue.audio is not None:
        heard = [seq for seq in needed.get("audio", []) if "audio" in features.get(seq, {})]
        if heard:
            similarity = audio_similarities(cue.audio, [features[seq]["audio"] for seq in heard])
            scores.setdefault("audio", {}).update(
                (seq, float(value)) for seq, value in zip(heard, similarity, strict=True)
            )
    if cue.biometrics:
        readings = store.biometrics(needed.get("biometric", []))
        for seq, stored in readings.items():
            reading_similarity = biometric_similarity(cue.biometrics, stored)
            if reading_similarity is not None:
                scores.setdefault("biometric", {})[seq] = reading_similarity


def salience_boost(salience: Any) -> Any:
    """``0.85 + 0.15·salience``: a float, or an array of them (salience 0.5 when unset)."""
    return 0.85 + 0.15 * salience


def combined_score(channels: dict[str, float], salience: float | None) -> float:
    """The weighted mean of ``channels`` with the salience boost, in [0, 1]."""
    total = sum(WEIGHTS[name] for name in channels)
    if total == 0:
        return 0.0
    base = sum(WEIGHTS[name] * value for name, value in channels.items()) / total
    boost = float(salience_boost(0.5 if salience is None else salience))
    return round(min(1.0, max(0.0, base * boost)), 6)
