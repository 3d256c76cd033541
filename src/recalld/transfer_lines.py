"""How an export's lines are read back (:mod:`recalld.transfer` writes and imports them).

The kinds of the structure lines and the fields each holds: a structure line is
read as strictly as a memory line (whose fields are
:class:`recalld.model.ExportRecord`'s): a field it does not hold (a newer export's,
a typo) and text given as another JSON type are refused with the field's name,
never dropped or turned into text. And what a memory line with an id does to the
memory it names: what the line does not say is kept, and it is ``unchanged`` when
it says nothing new. And the memories an export's lines hold (:class:`ExportedSeqs`),
the only ones its entity and intention lines may name.
"""

from __future__ import annotations

import contextlib
import copy
import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from recalld import _validate as check
from recalld.conflicts import rerun_on_conflict
from recalld.errors import StorageError, ValidationError
from recalld.model import ExportRecord, ImportReport, Memory, PlaceInput
from recalld.store.base import MemoryRecord, stored_record

__all__ = [
    "CORE_LINE",
    "ENTITY_LINE",
    "INTENTION_LINE",
    "LINE_FIELDS",
    "PENDING_LINE",
    "RELATION_LINE",
    "SENSES_LINE",
    "ExportedSeqs",
    "kept_unstated",
    "legacy_place",
    "line_text",
    "stopped_import",
    "stopped_import_told",
    "structure_kind",
    "unchanged",
]

CORE_LINE = "recalld.core"
ENTITY_LINE = "recalld.entity"
RELATION_LINE = "recalld.relation"
SENSES_LINE = "recalld.senses"
INTENTION_LINE = "recalld.intention"
PENDING_LINE = "recalld.pending"

_COMMON = frozenset({"type", "namespace"})
LINE_FIELDS: dict[str, frozenset[str]] = {
    CORE_LINE: _COMMON | {"target", "entries"},
    ENTITY_LINE: _COMMON | {"name", "entity_type", "observations"},
    RELATION_LINE: _COMMON | {"from", "to", "relation_type"},
    SENSES_LINE: _COMMON | {"id", "signals", "biometrics"},
    INTENTION_LINE: _COMMON
    | {
        "id",
        "state",
        "repeat",
        "min_interval_seconds",
        "zone",
        "scheduled",
        "created_at",
        "expires_at",
        "next_due",
        "triggers",
    },
    PENDING_LINE: _COMMON | {"id", "fired_at", "score", "channels", "details"},
}


def structure_kind(value: dict[str, Any]) -> str:
    """The kind (``type``) of a structure line, checked with its fields: an unknown kind,
    or a field that kind of line does not hold, is refused naming it."""
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in LINE_FIELDS:
        raise ValidationError(
            "type",
            f"a recalld export line is a memory (no type), {CORE_LINE}, {ENTITY_LINE},"
            f" {RELATION_LINE}, {SENSES_LINE}, {INTENTION_LINE} or {PENDING_LINE};"
            f" got {kind!r}",
        )
    for name in value:
        if name not in LINE_FIELDS[kind]:
            raise ValidationError(
                name,
                f"not a field of a {kind} line (it has {', '.join(sorted(LINE_FIELDS[kind]))})",
            )
    return kind


def line_text(value: dict[str, Any], name: str) -> str:
    """The text field ``name`` of a structure line (missing: empty, which its own check
    refuses); another JSON type is refused rather than turned into its text."""
    text = value.get(name, "")
    if not isinstance(text, str):
        raise ValidationError(name, f"must be text, got {type(text).__name__}")
    return text


def kept_unstated(
    record: ExportRecord, stored: MemoryRecord, existing: Memory | None
) -> MemoryRecord:
    """``stored`` (``record``'s row) with what the line does not say: kept from
    ``existing``, the memory it replaces, as a key overwrite keeps them (its creation
    time, access counts, and ``at``), or for a new memory ``at`` its creation time
    (omitted, ``at`` is when it was written; a memory without one no time filter finds)."""
    if existing is None:
        return stored if stored.at is not None else replace(stored, at=stored.created_at)
    kept: dict[str, Any] = {}
    if record.at is None:
        kept["at"] = existing.at
    if record.created_at is None:
        kept["created_at"] = existing.created_at
    if "access_count" not in record.model_fields_set and record.last_accessed_at is None:
        kept["access_count"] = existing.access_count
        kept["last_accessed_at"] = existing.last_accessed_at
    return replace(stored, **kept)


def unchanged(existing: Memory, stored: MemoryRecord, *, has_time: bool) -> bool:
    """Whether an imported record leaves the stored one as it is: not newer (when the
    line says when it was updated), else every field the line sets the same (``at``
    with its offset: the local time of day matters), its times and counts aside."""
    if has_time:
        return stored.updated_at <= existing.updated_at
    current = stored_record(existing)
    kept = ("created_at", "updated_at", "access_count", "last_accessed_at", "index_state")
    line = replace(stored, **{name: getattr(current, name) for name in kept})
    offsets = (None if at is None else at.utcoffset() for at in (current.at, line.at))
    return line == current and len(set(offsets)) == 1


def legacy_place(place: PlaceInput) -> PlaceInput:
    """A place as an older version may have written it: its name's line breaks and
    invisible characters (refused in a name now) read as spaces, so its memory is not lost
    with the line."""
    if place.name is None or check.invisible(place.name) is None:
        return place
    return place.model_copy(update={"name": " ".join(check.INVISIBLE.sub(" ", place.name).split())})


class ExportedSeqs:
    """The seqs of the memory lines an export wrote: 8 bytes each (a set of ints takes
    about 60), read in ascending order (:meth:`Store.iterate`'s), looked up by bisection."""

    def __init__(self) -> None:
        self._seqs = array("q")

    def add(self, seq: int) -> None:
        """Note ``seq``, kept in order whatever order it comes in."""
        if self._seqs and seq <= self._seqs[-1]:
            self._seqs.insert(bisect_left(self._seqs, seq), seq)
        else:
            self._seqs.append(seq)

    def __contains__(self, seq: object) -> bool:
        if not isinstance(seq, int):
            return False
        index = bisect_left(self._seqs, seq)
        return index < len(self._seqs) and self._seqs[index] == seq


@contextlib.contextmanager
def stopped_import(
    chunk: Sequence[Any], report: Any, *, in_file_order: bool = True
) -> Iterator[None]:
    """Around one chunk's transaction: a database failure in it (a full disk) says where
    the import stopped and that the chunks before it are kept.

    An import writes a chunk of lines per transaction, so a disk that filled at the
    fourth left the first three imported, and the error said only "the disk holding the
    database is full; nothing was written", as if the whole import had left nothing.
    The error keeps its class (``DiskFullError`` is still REST's 503 ``disk_full``).
    ``in_file_order`` is false where lines are written by kind, not by line number (the
    lines after every memory: senses, reminders, core memory, the graph; an mcp-memory
    file's entities, then its relations), where "the lines before it" would not be
    true: the message says what was written before it is kept, with the counts."""
    imported, counts = _kept(report)
    try:
        yield
    except StorageError as error:
        if not imported:
            raise
        first = next((_line_number(item) for item in chunk), None)
        kept = (
            "The lines before it are imported and kept"
            if in_file_order
            else "Every line written before it is imported and kept"
        )
        stopped = copy.copy(error)
        stopped.args = (
            f"the import stopped at line {first}: {error}. {kept} ({counts}); import the"
            " file again once that is fixed, which skips what is already there",
        )
        raise stopped from error


def _kept(report: Any) -> tuple[int, str]:
    """How many records an import's report counts so far, and those counts in words: an
    :class:`ImportReport`, or an mcp-memory file's ``KnowledgeImportReport``."""
    if isinstance(report, ImportReport):
        imported = report.created + report.updated + report.unchanged
        return imported, f"{report.created} created, {report.updated} updated"
    imported = report.entities + report.observations + report.relations + report.unchanged
    return imported, (
        f"{report.entities} entities, {report.observations} observations,"
        f" {report.relations} relations created"
    )


def _line_number(item: Any) -> int | None:
    """The line number of a chunk's item: a parsed line, a refused one, or the number."""
    if isinstance(item, int):
        return item
    number: int | None = item.number if hasattr(item, "number") else item.line
    return number


# stopped_import's message: where the import stopped, its cause, and what it kept.
_STOPPED = re.compile(
    r"the import stopped at line (\S+): .*\. ((?:The lines before it are|Every line written"
    r" before it is) imported and kept \(.*)",
    re.DOTALL,
)


def stopped_import_told(error: BaseException, cause: str) -> str | None:
    """For an import a database failure stopped after some chunks (see
    :func:`stopped_import`): its message with ``cause`` (what a client is told) in place
    of the error's own (the log's); None for any other error. A client told only "nothing
    was written" took the chunks kept for lost (review of pass b64)."""
    stopped = _STOPPED.fullmatch(str(error))
    if stopped is None:
        return None
    return f"the import stopped at line {stopped[1]}: {cause}. {stopped[2]}"


Expired = set[tuple[str, str]]


def rerun_chunk(
    write: Callable[[ImportReport, Expired | None], None],
    report: ImportReport,
    expired: Expired | None,
) -> None:
    """``write(counts, expired)``, one chunk's transaction, run again whole while PostgreSQL
    breaks it as a deadlock or serialization failure (:func:`recalld.conflicts.rerun_on_conflict`),
    into ``report`` and ``expired`` the counts of the attempt that committed only: one
    conflict answered the whole import 503 (integration read, stop 69)."""

    def attempt() -> tuple[ImportReport, Expired | None]:
        counts = ImportReport(format=report.format)
        seen: Expired | None = None if expired is None else set()
        write(counts, seen)
        return counts, seen

    counts, seen = rerun_on_conflict(attempt, what="import")
    add_counts(report, counts)
    if expired is not None and seen:
        expired.update(seen)


def add_counts(report: ImportReport, counts: ImportReport) -> None:
    """Add one committed chunk's ``counts`` (and refusals) to ``report``."""
    for outcome in ("created", "updated", "unchanged", "skipped"):
        setattr(report, outcome, getattr(report, outcome) + getattr(counts, outcome))
    for what, number in counts.details.items():
        report.details[what] = report.details.get(what, 0) + number
    report.refuse_all(counts)
