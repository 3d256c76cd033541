"""Settings: built once at an entrypoint (env prefix ``RECALLD_``) and passed down.

Nothing else in recalld reads ``os.environ``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "default_db_path"]


def default_db_path() -> Path:
    """The embedded default database: ``recalld.db`` in the user's data directory."""
    return Path(platformdirs.user_data_dir("recalld", appauthor=False)) / "recalld.db"


class Settings(BaseSettings):
    """Every knob recalld has, with the defaults a single-user install wants."""

    model_config = SettingsConfigDict(env_prefix="RECALLD_", extra="ignore")

    db: Path = Field(default_factory=default_db_path, description="SQLite database file")
    namespace: str = Field(default="default", description="namespace used when none is given")

    synchronous: Literal["FULL", "NORMAL"] = Field(
        default="FULL",
        description="FULL fsyncs every commit: an acknowledged write survives power loss",
    )
    busy_timeout_ms: int = Field(default=5_000, ge=0, description="SQLite busy_timeout")
    lock_retry_seconds: float = Field(
        default=30.0, gt=0, description="bound on retrying a write that stays locked"
    )
    fts: bool = Field(default=True, description="use FTS5 when available (else LIKE)")
    purge_interval_seconds: float = Field(
        default=60.0, gt=0, description="how often expired memories are purged"
    )

    max_content_bytes: int = Field(default=64 * 1024, gt=0)
    max_tags: int = Field(default=64, gt=0)
    max_tag_chars: int = Field(default=100, gt=0)
    max_meta_bytes: int = Field(default=16 * 1024, gt=0)
    max_limit: int = Field(default=1_000, gt=0, description="cap on any limit/k argument")
    max_query_terms: int = Field(default=64, gt=0, description="keyword terms kept per query")
