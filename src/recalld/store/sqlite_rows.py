"""Rows of the SQLite store: the column list, row <-> record mapping, the scope's WHERE clause.

Pure functions over values (no connection), shared by the store and its companions.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from recalld._time import from_storage, to_storage
from recalld._validate import json_depth
from recalld.model import MAX_JSON_DEPTH, Memory, Place
from recalld.store.base import UNREADABLE_META_KEY, MemoryRecord, Scope, TokenRecord

__all__ = [
    "COLUMNS",
    "SELECT_COLUMNS",
    "TOKEN_COLUMNS",
    "WRITE_COLUMNS",
    "escape_like",
    "record_values",
    "row_to_memory",
    "row_to_token",
    "scope_sql",
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


def storage_time(value: Any) -> str | None:
    return None if value is None else to_storage(value)


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


def row_to_memory(row: Sequence[Any]) -> Memory:
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
        at=None if values["at"] is None else from_storage(values["at"]),
        created_at=from_storage(values["created_at"]),
        updated_at=from_storage(values["updated_at"]),
        expires_at=None if values["expires_at"] is None else from_storage(values["expires_at"]),
        place=place,
        meta=decode_meta(values["meta"], values["id"]),
        access_count=values["access_count"],
        last_accessed_at=(
            None if values["last_accessed_at"] is None else from_storage(values["last_accessed_at"])
        ),
        index_state=values["index_state"],
    )


def record_values(record: MemoryRecord) -> tuple[Any, ...]:
    place = record.place
    return (
        record.id,
        record.namespace,
        record.key,
        record.title,
        record.content,
        record.kind,
        record.category,
        json.dumps(list(record.tags), ensure_ascii=False),
        record.salience,
        record.source,
        record.speaker,
        None if record.at is None else record.at.isoformat(),
        storage_time(record.at),
        to_storage(record.created_at),
        to_storage(record.updated_at),
        storage_time(record.expires_at),
        None if place is None else place.lat,
        None if place is None else place.lon,
        None if place is None else place.geohash,
        None if place is None else place.name,
        json.dumps(record.meta, ensure_ascii=False, separators=(",", ":")),
        record.access_count,
        storage_time(record.last_accessed_at),
        record.index_state,
    )


TOKEN_COLUMNS = "id, name, token_hash, scopes, created_at, last_used_at, revoked_at"


def row_to_token(row: Sequence[Any]) -> TokenRecord:
    token_id, name, token_hash, scopes, created_at, last_used_at, revoked_at = row
    return TokenRecord(
        id=token_id,
        name=name,
        token_hash=token_hash,
        scopes=json.loads(scopes),
        created_at=from_storage(created_at),
        last_used_at=None if last_used_at is None else from_storage(last_used_at),
        revoked_at=None if revoked_at is None else from_storage(revoked_at),
    )


def substring_pattern(text: str) -> str:
    """What a query without word terms searches as a substring: its printable characters
    (a NUL would end the LIKE pattern early and match everything), trimmed, at most 200."""
    return "".join(c for c in text if c.isprintable() or c == " ").strip()[:200]


def escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def scope_sql(scope: Scope, params: dict[str, Any]) -> str:
    """The WHERE clause (over alias ``m``) that makes rows visible to ``scope``."""
    clauses: list[str] = []
    names = []
    for index, namespace in enumerate(scope.namespaces):
        params[f"ns{index}"] = namespace
        names.append(f":ns{index}")
    clauses.append(f"m.namespace IN ({', '.join(names)})" if names else "0")
    if not scope.include_expired:
        params["now"] = to_storage(scope.now)
        clauses.append("(m.expires_at IS NULL OR m.expires_at > :now)")
    if scope.kind is not None:
        params["kind"] = scope.kind
        clauses.append("m.kind = :kind")
    if scope.category is not None:
        params["category"] = scope.category
        clauses.append("m.category = :category")
    if scope.speaker is not None:
        params["speaker"] = scope.speaker
        clauses.append("m.speaker = :speaker")
    if scope.tags_any:
        placeholders = []
        for index, tag in enumerate(scope.tags_any):
            params[f"any{index}"] = tag
            placeholders.append(f":any{index}")
        clauses.append(
            "EXISTS (SELECT 1 FROM memory_tags t WHERE t.seq = m.seq"
            f" AND t.tag IN ({', '.join(placeholders)}))"
        )
    for index, tag in enumerate(scope.tags_all):
        params[f"all{index}"] = tag
        clauses.append(
            f"EXISTS (SELECT 1 FROM memory_tags t WHERE t.seq = m.seq AND t.tag = :all{index})"
        )
    for name, column, operator in (
        ("since", "at_utc", ">="),
        ("until", "at_utc", "<"),
        ("created_since", "created_at", ">="),
        ("created_until", "created_at", "<"),
    ):
        value = getattr(scope, name)
        if value is not None:
            params[name] = to_storage(value)
            clauses.append(f"m.{column} {operator} :{name}")
    return " AND ".join(clauses)
