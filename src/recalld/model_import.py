"""What an import reports: its counts and the lines or items it refused (split out of
:mod:`recalld.model`, integration read, stop 69)."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

__all__ = ["MAX_IMPORT_ERRORS_KEPT", "ImportLineError", "ImportReport", "RefusalLog"]


class ImportLineError(BaseModel):
    """Why one line (or item) of an import was refused; nothing of it was written.

    ``line`` is the line number in a file of lines (JSONL, Markdown); ``item``
    the number of the item in a JSON document (a conversation, a memory, an
    entry), counting from 1. One of them is always given.
    """

    line: int | None = None
    item: int | None = None
    error: str


MAX_IMPORT_ERRORS_KEPT = 1000
"""How many refused lines or items an import report lists (integration read, stop 69):
every one was kept, so 2 MB of junk lines drew an 85 MB answer. ``errors_total`` counts them all."""


class RefusalLog(BaseModel):
    """The refused lines or items of an import: the first :data:`MAX_IMPORT_ERRORS_KEPT`
    (by line, then item, number) in ``errors``, all of them counted in ``errors_total``."""

    errors: list[ImportLineError] = Field(default_factory=list)
    errors_total: int = 0

    @model_validator(mode="after")
    def _count_given(self) -> RefusalLog:
        self.errors_total = max(self.errors_total, len(self.errors))
        self.order_errors()
        return self

    def refuse(self, error: ImportLineError) -> None:
        """Count ``error``; keep it while it is among the first refusals."""
        self.errors_total += 1
        self.errors.append(error)
        if len(self.errors) >= 2 * MAX_IMPORT_ERRORS_KEPT:  # bounded memory, amortised sort
            self.order_errors()

    def refuse_all(self, other: RefusalLog) -> None:
        """Take ``other``'s refusals (and its count of those it did not keep)."""
        for error in other.errors:
            self.refuse(error)
        self.errors_total += other.errors_total - len(other.errors)

    def order_errors(self) -> None:
        """Sort ``errors`` by line, then item, number and keep the first ones."""
        self.errors.sort(key=lambda error: (error.line or 0, error.item or 0))
        del self.errors[MAX_IMPORT_ERRORS_KEPT:]


class ImportReport(RefusalLog):
    """What an import did: counts, and the refused lines or items with their numbers
    (the first :data:`MAX_IMPORT_ERRORS_KEPT`; ``errors_total`` counts them all).

    ``created``/``updated``/``unchanged`` count records written new, replaced
    by a newer version, or already there as they are; ``skipped`` what was left
    out on purpose (a repeat of a stored memory, tool and system messages);
    ``details`` breaks the counts down by what was imported (memories, core
    entries, conversations, turns, entities, relations, observations).
    """

    format: str = "recalld"
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    details: dict[str, int] = Field(default_factory=dict)

    def count(self, outcome: str, what: str, number: int = 1) -> None:
        """Add ``number`` to the ``outcome`` counter and to ``details[what]`` (when written)."""
        setattr(self, outcome, getattr(self, outcome) + number)
        if outcome in ("created", "updated") and number:
            self.details[what] = self.details.get(what, 0) + number
