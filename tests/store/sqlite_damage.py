"""Damage a SQLite store's file the way a failing disk does, for the tests of what
recalld does with a damaged database."""

from __future__ import annotations

from pathlib import Path

import apsw


def damage_a_memories_leaf(path: Path) -> None:
    """Overwrite one leaf page of the ``memories`` table (the middle one) with garbage:
    an invalid page type, so a read that reaches it fails as damaged."""
    inspect = apsw.Connection(str(path))
    try:
        page_size = int(str(inspect.execute("PRAGMA page_size").fetchall()[0][0]))
        leaves = inspect.execute(
            "SELECT pageno FROM dbstat WHERE name = 'memories' AND pagetype = 'leaf'"
            " ORDER BY pageno"
        ).fetchall()
    finally:
        inspect.close()
    damaged_page = int(str(leaves[len(leaves) // 2][0]))
    with path.open("r+b") as handle:
        handle.seek((damaged_page - 1) * page_size)
        handle.write(b"\x07" * page_size)
