"""The core-memory entries of an import, added one by one (split out of
:mod:`recalld.transfer`, integration read, stop 69): a ``recalld.core`` line's, and a
Hermes file's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from recalld.errors import ValidationError
from recalld.model import ImportLineError, ImportReport

if TYPE_CHECKING:
    from recalld.core_memory import CoreMemory

__all__ = ["restore_core_entries"]


def restore_core_entries(
    core: CoreMemory,
    target: str,
    entries: Sequence[str],
    namespace: str,
    report: ImportReport,
    *,
    position: Callable[[int], dict[str, int]],
    field: str | None = None,
) -> None:
    """Add each entry to a core-memory target in order, one batch each, so an entry that
    does not fit (or that the screen blocks) is refused alone with its ``position``
    (and, given ``field``, named as ``field[index]``: one line holds many entries);
    an entry already there is ``unchanged``."""
    from recalld.core_memory import CoreMemoryFullError

    for index, entry in enumerate(entries):
        named = "" if field is None else f"{field}[{index}]: "
        try:
            result = core.apply(target, [{"action": "add", "content": entry}], namespace=namespace)
        except CoreMemoryFullError as full:
            report.refuse(
                ImportLineError(
                    **position(index),
                    error=f"{named}does not fit in core memory {target!r}: it would hold"
                    f" {full.would_be} chars, over its limit of {full.state.limit}"
                    f" (now {full.state.usage})",
                )
            )
            continue
        except ValidationError as error:
            message = error.message if error.field.startswith("operations[") else str(error)
            report.refuse(ImportLineError(**position(index), error=named + message))
            continue
        report.count("unchanged" if result.duplicates else "created", "core entries")
