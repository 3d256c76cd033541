"""How an import's memory line becomes the record it stores (:mod:`recalld.transfer`
imports the lines): every field checked as a write checks it, naming the field and its
limit, and the line's own times and counts kept."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from recalld import _validate as check
from recalld._time import parse_instant
from recalld.store.base import MemoryRecord
from recalld.transfer_lines import legacy_place
from recalld.writing import kind_as_stored

if TYPE_CHECKING:
    from datetime import datetime

    from recalld.config import Settings
    from recalld.model import ExportRecord, IndexState

__all__ = ["imported_record", "line_times"]


def imported_record(
    record: ExportRecord,
    record_id: str,
    namespace: str,
    settings: Settings,
    now: datetime,
    index_state: IndexState,
) -> MemoryRecord:
    """The record a memory line with an id (``record_id``) stores in ``namespace``: a
    line without ``updated_at`` is stamped ``now`` (and created then, without
    ``created_at``)."""
    updated_at = (
        now if record.updated_at is None else parse_instant("updated_at", record.updated_at)
    )
    return MemoryRecord(
        id=record_id,
        namespace=namespace,
        key=check.key(record.key),
        title=check.optional_text(record.title, "title"),
        content=check.content(record.content, settings),
        kind=kind_as_stored(record.kind),
        category=check.category(record.category, as_given=True),
        tags=check.tags(record.tags, settings, as_given=True),
        salience=record.salience,
        source=check.optional_name(record.source, "source"),
        speaker=check.speaker(record.speaker),
        at=None if record.at is None else parse_instant("at", record.at),
        created_at=updated_at
        if record.created_at is None
        else parse_instant("created_at", record.created_at),
        updated_at=updated_at,
        expires_at=None
        if record.expires_at is None
        else parse_instant("expires_at", record.expires_at),
        place=None if record.place is None else check.place(legacy_place(record.place)),
        meta=check.meta(record.meta, settings),
        access_count=record.access_count,
        last_accessed_at=(
            None
            if record.last_accessed_at is None
            else parse_instant("last_accessed_at", record.last_accessed_at)
        ),
        index_state=index_state,
    )


def line_times(record: ExportRecord) -> dict[str, Any]:
    """The fields of a memory line that ``remember`` sets itself, as the line gives them
    (only those it gives): its times and its access count."""
    kept: dict[str, Any] = {}
    for name in ("created_at", "updated_at", "expires_at", "last_accessed_at"):
        value = getattr(record, name)
        if value is not None:
            kept[name] = parse_instant(name, value)
    if record.access_count:
        kept["access_count"] = record.access_count
    return kept
