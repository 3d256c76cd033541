"""Hermes Agent's memory files: ``MEMORY.md`` (target ``memory``) and ``USER.md`` (``user``).

As Hermes documents them (``~/.hermes/memories/``): plain text whose entries
are separated by a line holding only ``§``; an entry may span several lines.
recalld's core-memory entries are single lines, so a multi-line entry is
joined with spaces (the import says how many were). The entries are added to
the target in file order after what it holds; an entry already there is
``unchanged``, and one that would take the target over its character limit,
or that the core-memory screen blocks, is refused with its entry and line
number (the limits are recalld's settings, which default to Hermes' own:
2,200 characters for ``memory``, 1,375 for ``user``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HermesEntry", "split_entries"]

SEPARATOR = "§"


@dataclass(frozen=True)
class HermesEntry:
    """One entry: its number, the line it starts on, its text (joined to one line)."""

    number: int
    line: int
    text: str
    joined_lines: int


def split_entries(text: str) -> list[HermesEntry]:
    """The entries of one memory file, in order (empty entries are dropped)."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    entries: list[HermesEntry] = []
    current: list[str] = []
    start = 1

    def flush() -> None:
        parts = [part.strip() for part in current if part.strip()]
        if parts:
            entries.append(
                HermesEntry(
                    number=len(entries) + 1,
                    line=start,
                    text=" ".join(parts),
                    joined_lines=len(parts),
                )
            )

    for number, line in enumerate(lines, start=1):
        if line.strip() == SEPARATOR:
            flush()
            current = []
            start = number + 1
            continue
        if not current and not line.strip():
            start = number + 1
            continue
        current.append(line)
    flush()
    return entries
