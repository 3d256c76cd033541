"""What a context recall or sense compares against: the cue, and the media it is built from.

Raw media (base64, or a local path where the caller allows it) are reduced to
derived features here, before anything is compared or stored (the raw bytes
are never kept).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from recalld import _validate as check
from recalld.context.signals import (
    AudioFeatures,
    ImageEncoder,
    ImageFeatures,
    audio_features,
    check_biometrics,
    image_features,
    load_media,
)
from recalld.errors import ValidationError
from recalld.model import Memory, Place, PlaceInput

__all__ = [
    "Cue",
    "Recollection",
    "Reminder",
    "ReminderMatch",
    "flat_place",
    "media_features",
    "parse_place",
]


class ReminderMatch(BaseModel):
    """One trigger of an intention that held, and what it met."""

    trigger: str
    detail: str


class Reminder(BaseModel):
    """Why an intention fired: its action, each trigger that held, and when it was due."""

    intention_id: str
    action: str
    why: str
    matched: list[ReminderMatch]
    due_at: datetime | None = None


class Recollection(BaseModel):
    """A memory that surfaced involuntarily: why, how strongly, and when.

    ``kind`` is ``reminder`` for an intention that fired (see
    :mod:`recalld.intentions`): its memory is the intention, ``channels`` the
    triggers that held (each 1.0) and ``reminder`` what they met.
    """

    memory: Memory
    score: float
    channels: dict[str, float]
    prompt_line: str
    fired_at: datetime
    kind: Literal["recollection", "reminder"] = "recollection"
    reminder: Reminder | None = None


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


def parse_place(value: dict[str, Any] | None) -> Place | None:
    """A validated :class:`Place` from a caller's place dict (None passes through)."""
    if value is None:
        return None
    return check.place(check.parse_model(PlaceInput, value, prefix="place."))


def media_features(
    image: str | None,
    audio: str | None,
    biometrics: dict[str, float] | None,
    allow_paths: bool,
    encoder: ImageEncoder | None,
) -> tuple[ImageFeatures | None, AudioFeatures | None, dict[str, float]]:
    """Decode the given media into features and validate the biometric readings."""
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
    if biometrics is not None and not isinstance(biometrics, Mapping):
        raise ValidationError(
            "biometrics", f"give an object of names and numbers, got {type(biometrics).__name__}"
        )
    readings = check_biometrics(biometrics or {})
    return image_part, audio_part, readings
