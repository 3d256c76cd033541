"""Settings for the tests where another connection holds SQLite's write lock: no model,
no graph, and a lock retry bound of 50 ms, so a wait that should not happen fails fast."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recalld.config import Settings


def locked_settings(db_path: Path, **overrides: Any) -> Settings:
    """Settings on ``db_path`` giving up on a held lock after 50 ms (``busy_timeout`` 0,
    unless ``overrides`` say otherwise)."""
    given: dict[str, Any] = {
        "db": db_path,
        "embedder": "none",
        "graph_extractor": "none",
        "busy_timeout_ms": 0,
        "lock_retry_seconds": 0.05,
    }
    return Settings(**(given | overrides))
