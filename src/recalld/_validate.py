"""Input checks shared by the service: each failure names the field and the limit."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

import pydantic
import pygeohash

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.model import Place, PlaceInput

ModelT = TypeVar("ModelT", bound=pydantic.BaseModel)

NAMESPACE_PATTERN = re.compile(r"^[\w.:@/-]{1,100}$")
ID_PATTERN = re.compile(r"^[\w.:-]{1,64}$")
GEOHASH_ALPHABET = frozenset("0123456789bcdefghjkmnpqrstuvwxyz")
# Precision used when a place is given as coordinates: 10 characters is ~1 m.
GEOHASH_PRECISION = 10


def parse_model(model: type[ModelT], data: Any, *, prefix: str = "") -> ModelT:
    """Validate ``data`` into ``model``; the first problem becomes a :class:`ValidationError`."""
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or "input"
        raise ValidationError(f"{prefix}{location}", first["msg"]) from None


def namespace(value: str) -> str:
    """A namespace: 1-100 letters, digits or ``._:@/-``."""
    if not NAMESPACE_PATTERN.match(value):
        raise ValidationError(
            "namespace", f"must be 1-100 letters, digits or . _ : @ / - (got {value!r})"
        )
    return value


def memory_id(value: str) -> str:
    """A client-supplied id: 1-64 letters, digits or ``._:-``."""
    if not ID_PATTERN.match(value):
        raise ValidationError("id", f"must be 1-64 letters, digits or . _ : - (got {value!r})")
    return value


def content(value: str, settings: Settings, field: str = "content") -> str:
    """Non-empty text no larger than ``max_content_bytes`` (UTF-8)."""
    if not value.strip():
        raise ValidationError(field, "must not be empty")
    size = len(value.encode("utf-8", errors="surrogatepass"))
    if size > settings.max_content_bytes:
        raise ValidationError(
            field, f"is {size} bytes; the limit is {settings.max_content_bytes} bytes"
        )
    return value


def tags(values: list[str], settings: Settings) -> tuple[str, ...]:
    """Trimmed, de-duplicated tags in their given order, within the count and length limits."""
    cleaned: list[str] = []
    for value in values:
        tag = value.strip()
        if not tag:
            raise ValidationError("tags", "a tag must not be empty")
        if len(tag) > settings.max_tag_chars:
            raise ValidationError(
                "tags",
                f"tag {tag[:20]!r}... is {len(tag)} chars; the limit is {settings.max_tag_chars}",
            )
        if tag not in cleaned:
            cleaned.append(tag)
    if len(cleaned) > settings.max_tags:
        raise ValidationError("tags", f"{len(cleaned)} tags; the limit is {settings.max_tags}")
    return tuple(cleaned)


def meta(value: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """A JSON object no larger than ``max_meta_bytes`` once serialised."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValidationError("meta", f"must be a JSON object: {error}") from None
    size = len(text.encode("utf-8"))
    if size > settings.max_meta_bytes:
        raise ValidationError("meta", f"is {size} bytes; the limit is {settings.max_meta_bytes}")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def place(value: PlaceInput) -> Place:
    """Resolve a geohash or lat+lon into a :class:`Place` holding both."""
    if value.lat is not None or value.lon is not None:
        if value.lat is None or value.lon is None:
            raise ValidationError("place", "give both lat and lon, or a geohash")
        encoded = pygeohash.encode(value.lat, value.lon, precision=GEOHASH_PRECISION)
        if value.geohash is not None:
            given = _geohash(value.geohash)
            if not encoded.startswith(given):
                raise ValidationError(
                    "place.geohash", f"{given!r} does not contain lat {value.lat}, lon {value.lon}"
                )
        return Place(lat=value.lat, lon=value.lon, geohash=encoded, name=value.name)
    if value.geohash is None:
        raise ValidationError("place", "give a geohash, or lat and lon")
    given = _geohash(value.geohash)
    centre = pygeohash.decode(given)
    return Place(
        lat=float(centre.latitude), lon=float(centre.longitude), geohash=given, name=value.name
    )


def _geohash(value: str) -> str:
    text = value.strip().lower()
    if not text or len(text) > 12 or not set(text) <= GEOHASH_ALPHABET:
        raise ValidationError(
            "place.geohash", f"must be 1-12 characters of the geohash alphabet (got {value!r})"
        )
    return text


def speaker(value: str | None) -> str | None:
    """Who said or wrote a memory: one line of printable text (trimmed), or None."""
    if value is None:
        return None
    name = " ".join(value.split())
    if not name:
        raise ValidationError("speaker", "must not be blank")
    if any(not character.isprintable() for character in name):
        raise ValidationError("speaker", "must be printable text on one line")
    return name


def min_score(value: float | None, field: str = "min_score") -> float | None:
    """A score threshold in [0, 1] (None: the caller's default applies)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(field, f"must be a number between 0 and 1, got {value!r}")
    if not 0.0 <= float(value) <= 1.0 or value != value:
        raise ValidationError(field, f"must be between 0 and 1, got {value}")
    return float(value)


def limit(value: int, settings: Settings, field: str = "limit") -> int:
    """A result count between 1 and ``max_limit``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, f"must be an integer, got {value!r}")
    if not 1 <= value <= settings.max_limit:
        raise ValidationError(field, f"must be between 1 and {settings.max_limit}, got {value}")
    return value
