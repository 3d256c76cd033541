"""How memories, tokens and scopes look in PostgreSQL: column lists and row conversions.

Shared by :mod:`recalld.store.postgres` and its companions. Instants are
``timestamptz`` (read back as aware UTC datetimes: every connection runs with
``TimeZone=UTC``); ``at`` is its instant ``at_utc`` plus ``at_offset`` (seconds
east of UTC), so a memory's local time of day comes back as it was given;
tags and ``meta`` are ``jsonb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from psycopg.types.json import Jsonb

from recalld.model import Memory, Place
from recalld.store.base import MemoryRecord, Scope, TokenRecord
from recalld.store.sql import scope_clause

__all__ = [
    "COLUMNS",
    "SELECT_COLUMNS",
    "TOKEN_COLUMNS",
    "WRITE_COLUMNS",
    "Parameters",
    "local_instant",
    "offset_seconds",
    "record_values",
    "row_to_memory",
    "row_to_token",
    "scope_sql",
]

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
    "at_utc",
    "at_offset",
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


class Parameters(dict[str, Any]):
    """Named query parameters that hand out ``%(name)s`` placeholders."""

    def bind(self, name: str, value: Any) -> str:
        """Record ``value`` under ``name``; returns its placeholder."""
        self[name] = value
        return f"%({name})s"


def offset_seconds(moment: datetime) -> int:
    """The UTC offset of an aware datetime, in seconds."""
    offset = moment.utcoffset()
    return 0 if offset is None else int(offset.total_seconds())


def local_instant(instant: datetime | None, offset: int | None) -> datetime | None:
    """An instant read back on the local clock it was stored with."""
    if instant is None:
        return None
    if not offset:
        return instant.astimezone(UTC)
    return instant.astimezone(timezone(timedelta(seconds=offset)))


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
        tags=list(values["tags"]),
        salience=values["salience"],
        source=values["source"],
        speaker=values["speaker"],
        at=local_instant(values["at_utc"], values["at_offset"]),
        created_at=values["created_at"],
        updated_at=values["updated_at"],
        expires_at=values["expires_at"],
        place=place,
        meta=dict(values["meta"]),
        access_count=values["access_count"],
        last_accessed_at=values["last_accessed_at"],
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
        Jsonb(list(record.tags)),
        record.salience,
        record.source,
        record.speaker,
        record.at,
        None if record.at is None else offset_seconds(record.at),
        record.created_at,
        record.updated_at,
        record.expires_at,
        None if place is None else place.lat,
        None if place is None else place.lon,
        None if place is None else place.geohash,
        None if place is None else place.name,
        Jsonb(record.meta),
        record.access_count,
        record.last_accessed_at,
        record.index_state,
    )


def row_to_token(row: Sequence[Any]) -> TokenRecord:
    """A :data:`TOKEN_COLUMNS` row as a :class:`TokenRecord`."""
    token_id, name, token_hash, scopes, created_at, last_used_at, revoked_at = row
    return TokenRecord(
        id=token_id,
        name=name,
        token_hash=token_hash,
        scopes=dict(scopes),
        created_at=created_at,
        last_used_at=last_used_at,
        revoked_at=revoked_at,
    )


def scope_sql(scope: Scope, params: Parameters) -> str:
    """The WHERE clause (over alias ``m``) that makes rows visible to ``scope``."""
    return scope_clause(scope, params.bind, lambda moment: moment)
