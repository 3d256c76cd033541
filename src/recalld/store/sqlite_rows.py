"""How memories, tokens and scopes look in SQLite: column lists and row conversions.

Shared by :mod:`recalld.store.sqlite` and its companions, so none of them
imports another's private helpers. SQLite keeps instants as fixed-width UTC
text (:func:`recalld._time.to_storage`, which sorts chronologically), ``at`` as
the ISO 8601 text it was given (its offset kept) beside ``at_utc``, and tags
and ``meta`` as JSON text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from recalld._time import from_storage, to_storage
from recalld._validate import json_depth
from recalld.model import MAX_JSON_DEPTH, Memory, Place
from recalld.store.base import UNREADABLE_META_KEY, MemoryRecord, Scope, TokenRecord
from recalld.store.sql import escape_like, json_compact, json_text, scope_clause, substring_pattern

__all__ = [
    "COLUMNS",
    "OTHER_NAMESPACES",
    "SELECT_COLUMNS",
    "TOKEN_COLUMNS",
    "WRITE_COLUMNS",
    "decode_meta",
    "escape_like",
    "id_list",
    "optional_time",
    "record_values",
    "row_to_memory",
    "row_to_token",
    "scope_sql",
    "stamp",
    "storage_time",
    "substring_pattern",
]

logger = logging.getLogger(__name__)

COLUMNS = (
    "seq",
    "id",
    "namespace",
    "key",
    "title",
    "content",
    "kind",
    "category",
    "tags",
    "salience",
    "source",
    "speaker",
    "at",
    "at_utc",
    "created_at",
    "updated_at",
    "expires_at",
    "lat",
    "lon",
    "geohash",
    "place_name",
    "meta",
    "access_count",
    "last_accessed_at",
    "index_state",
)
SELECT_COLUMNS = ", ".join(f"m.{name}" for name in COLUMNS)
WRITE_COLUMNS = COLUMNS[1:]
TOKEN_COLUMNS = "id, name, token_hash, scopes, created_at, last_used_at, revoked_at"
# True when the file holds a memory of a namespace other than ``:ns`` (two index probes).
OTHER_NAMESPACES = (
    "EXISTS (SELECT 1 FROM memories WHERE namespace < :ns)"
    " OR EXISTS (SELECT 1 FROM memories WHERE namespace > :ns)"
)


def stamp(value: datetime | None) -> str | None:
    """The stored form of an optional instant."""
    return None if value is None else to_storage(value)


# The name main's modules use for :func:`stamp`.
storage_time = stamp


def decode_meta(text: str, memory_id: str) -> dict[str, Any]:
    """A stored meta, or (when it cannot be rendered as it is) a description of the problem
    with the stored text, so one odd row never breaks a listing, a search or an export."""
    reason = None
    try:
        if text.count("{") + text.count("[") > MAX_JSON_DEPTH:
            # Only a row written before the depth limit existed can be this deep.
            value: Any = json.loads(text)
            if json_depth(value) > MAX_JSON_DEPTH:
                reason = f"meta is nested deeper than {MAX_JSON_DEPTH} levels"
        else:
            value = json.loads(text)
        if reason is None and not isinstance(value, dict):
            reason = "meta is not a JSON object"
    except RecursionError:
        reason = f"meta is nested deeper than {MAX_JSON_DEPTH} levels"
    except ValueError as error:
        reason = f"meta is not valid JSON ({error})"
    if reason is None:
        decoded: dict[str, Any] = value
        return decoded
    logger.warning("memory %s: %s; it is read with its meta as text", memory_id, reason)
    return {UNREADABLE_META_KEY: {"reason": reason, "text": text}}


def optional_time(value: Any) -> datetime | None:
    """A stored optional instant (or ISO 8601 text) read back."""
    return None if value is None else from_storage(str(value))


def id_list(values: Sequence[int]) -> str:
    """Integers as a JSON array, for ``IN (SELECT value FROM json_each(?))``."""
    return json.dumps([int(value) for value in values])


def row_to_memory(row: Sequence[Any]) -> Memory:
    """A :data:`SELECT_COLUMNS` row as a :class:`Memory`."""
    values = dict(zip(COLUMNS, row, strict=True))
    place = None
    if values["lat"] is not None and values["lon"] is not None:
        place = Place(
            lat=values["lat"],
            lon=values["lon"],
            geohash=values["geohash"],
            name=values["place_name"],
        )
    return Memory(
        id=values["id"],
        seq=values["seq"],
        namespace=values["namespace"],
        key=values["key"],
        title=values["title"],
        content=values["content"],
        kind=values["kind"],
        category=values["category"],
        tags=json.loads(values["tags"]),
        salience=values["salience"],
        source=values["source"],
        speaker=values["speaker"],
        at=optional_time(values["at"]),
        created_at=from_storage(values["created_at"]),
        updated_at=from_storage(values["updated_at"]),
        expires_at=optional_time(values["expires_at"]),
        place=place,
        meta=decode_meta(values["meta"], values["id"]),
        access_count=values["access_count"],
        last_accessed_at=optional_time(values["last_accessed_at"]),
        index_state=values["index_state"],
    )


def record_values(record: MemoryRecord) -> tuple[Any, ...]:
    """The :data:`WRITE_COLUMNS` values of a record, in order."""
    place = record.place
    return (
        record.id,
        record.namespace,
        record.key,
        record.title,
        record.content,
        record.kind,
        record.category,
        json_text(list(record.tags)),
        record.salience,
        record.source,
        record.speaker,
        None if record.at is None else record.at.isoformat(),
        stamp(record.at),
        to_storage(record.created_at),
        to_storage(record.updated_at),
        stamp(record.expires_at),
        None if place is None else place.lat,
        None if place is None else place.lon,
        None if place is None else place.geohash,
        None if place is None else place.name,
        json_compact(record.meta),
        record.access_count,
        stamp(record.last_accessed_at),
        record.index_state,
    )


def row_to_token(row: Sequence[Any]) -> TokenRecord:
    """A :data:`TOKEN_COLUMNS` row as a :class:`TokenRecord`."""
    token_id, name, token_hash, scopes, created_at, last_used_at, revoked_at = row
    return TokenRecord(
        id=token_id,
        name=name,
        token_hash=token_hash,
        scopes=json.loads(scopes),
        created_at=from_storage(created_at),
        last_used_at=optional_time(last_used_at),
        revoked_at=optional_time(revoked_at),
    )


def scope_sql(scope: Scope, params: dict[str, Any]) -> str:
    """The WHERE clause (over alias ``m``) that makes rows visible to ``scope``."""

    def bind(name: str, value: Any) -> str:
        params[name] = value
        return f":{name}"

    return scope_clause(scope, bind, to_storage)
