"""Records and value types shared by the engine and every adapter.

These pydantic models are the wire shapes too: the REST API and the MCP tools
reuse them instead of redefining fields by hand.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ExportRecord",
    "Filters",
    "GraphStatus",
    "Hit",
    "ImportLineError",
    "ImportReport",
    "IndexState",
    "Memory",
    "MemoryPatch",
    "NewMemory",
    "Page",
    "Place",
    "PlaceInput",
    "Receipt",
    "Stats",
    "Status",
]

IndexState = Literal["queued", "indexed", "failed"]

KEY_MAX_CHARS = 200
SHORT_TEXT_MAX_CHARS = 200
TITLE_MAX_CHARS = 500
SOURCE_MAX_CHARS = 2048


class Place(BaseModel):
    """Where a memory happened: both coordinates and a geohash are always stored."""

    model_config = ConfigDict(frozen=True)

    lat: float = Field(ge=-90, le=90)
    lon: float = Field(ge=-180, le=180)
    geohash: str
    name: str | None = None


class PlaceInput(BaseModel):
    """A place as a caller gives it: a geohash, or lat and lon (and an optional name)."""

    model_config = ConfigDict(extra="forbid")

    lat: float | None = Field(default=None, ge=-90, le=90)
    lon: float | None = Field(default=None, ge=-180, le=180)
    geohash: str | None = Field(default=None, min_length=1, max_length=12)
    name: str | None = Field(default=None, max_length=SHORT_TEXT_MAX_CHARS)


class NewMemory(BaseModel):
    """What a caller may give to ``remember``; the engine fills in the rest."""

    model_config = ConfigDict(extra="forbid")

    content: str
    id: str | None = Field(default=None, min_length=1, max_length=64)
    key: str | None = Field(default=None, min_length=1, max_length=KEY_MAX_CHARS)
    title: str | None = Field(default=None, max_length=TITLE_MAX_CHARS)
    kind: str = Field(default="note", min_length=1, max_length=SHORT_TEXT_MAX_CHARS)
    category: str | None = Field(default=None, min_length=1, max_length=SHORT_TEXT_MAX_CHARS)
    tags: list[str] = Field(default_factory=list)
    salience: float | None = Field(default=None, ge=0, le=1)
    source: str | None = Field(default=None, max_length=SOURCE_MAX_CHARS)
    at: datetime | str | None = None
    ttl_seconds: float | None = Field(default=None, gt=0)
    place: PlaceInput | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class MemoryPatch(BaseModel):
    """A partial update: only the fields set on the instance change (None clears a field)."""

    model_config = ConfigDict(extra="forbid")

    content: str | None = None
    title: str | None = Field(default=None, max_length=TITLE_MAX_CHARS)
    kind: str | None = Field(default=None, min_length=1, max_length=SHORT_TEXT_MAX_CHARS)
    category: str | None = Field(default=None, min_length=1, max_length=SHORT_TEXT_MAX_CHARS)
    tags: list[str] | None = None
    salience: float | None = Field(default=None, ge=0, le=1)
    source: str | None = Field(default=None, max_length=SOURCE_MAX_CHARS)
    at: datetime | str | None = None
    ttl_seconds: float | None = Field(default=None, gt=0)
    place: PlaceInput | None = None
    meta: dict[str, Any] | None = None


class Memory(BaseModel):
    """One stored memory, as every read returns it (DESIGN.md §3)."""

    id: str
    seq: int
    namespace: str
    key: str | None = None
    title: str | None = None
    content: str
    kind: str = "note"
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    salience: float | None = None
    source: str | None = None
    at: datetime | None = None
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    place: Place | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    access_count: int = 0
    last_accessed_at: datetime | None = None
    index_state: IndexState = "queued"


class Receipt(BaseModel):
    """What ``remember`` returns: the write is durable (not necessarily indexed)."""

    id: str
    seq: int
    namespace: str
    status: Literal["created", "overwritten", "unchanged"]
    created: bool
    index_state: IndexState
    job_id: str | None = None


class Hit(BaseModel):
    """A recall/search result: the memory, a score in [0, 1] and what explains it."""

    memory: Memory
    score: float = Field(ge=0, le=1)
    channels: dict[str, float] = Field(default_factory=dict)
    backends: list[str] = Field(default_factory=list)
    prompt_line: str


class Filters(BaseModel):
    """Narrowing for list/search/recall; every filter applies before the limit is cut."""

    model_config = ConfigDict(extra="forbid")

    kind: str | None = None
    category: str | None = None
    tags_any: list[str] = Field(default_factory=list)
    tags_all: list[str] = Field(default_factory=list)
    since: datetime | str | None = None
    until: datetime | str | None = None
    created_since: datetime | str | None = None
    created_until: datetime | str | None = None
    include_expired: bool = False


class Page(BaseModel):
    """One page of a listing; pass ``next_cursor`` back to get the next page."""

    memories: list[Memory]
    next_cursor: str | None = None


class Stats(BaseModel):
    """Counts and health of the store, scoped to the namespaces asked for."""

    count: int
    by_category: dict[str, int]
    by_kind: dict[str, int]
    by_namespace: dict[str, int]
    fts: bool
    search_backend: Literal["fts", "like"] = Field(
        description="fts (a full-text index: FTS5 or PostgreSQL's) or like; the name the"
        " rover seed's stats report (see keyword_backend for the engine)"
    )
    keyword_backend: Literal["fts5", "like", "postgres-fts"] = Field(
        description="the keyword index by name: fts5, like or postgres-fts"
    )
    db_size_bytes: int
    schema_version: int
    expired_pending_purge: int


class ExportRecord(BaseModel):
    """One line of a JSONL export: every field needed for a lossless round trip."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=64)
    namespace: str | None = None
    key: str | None = Field(default=None, min_length=1, max_length=KEY_MAX_CHARS)
    title: str | None = Field(default=None, max_length=TITLE_MAX_CHARS)
    content: str
    kind: str = Field(default="note", min_length=1, max_length=SHORT_TEXT_MAX_CHARS)
    category: str | None = Field(default=None, min_length=1, max_length=SHORT_TEXT_MAX_CHARS)
    tags: list[str] = Field(default_factory=list)
    salience: float | None = Field(default=None, ge=0, le=1)
    source: str | None = Field(default=None, max_length=SOURCE_MAX_CHARS)
    at: datetime | None = None
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    place: PlaceInput | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    access_count: int = Field(default=0, ge=0)
    last_accessed_at: datetime | None = None


class ImportLineError(BaseModel):
    """Why one line of an import was refused (nothing of it was written)."""

    line: int
    error: str


class ImportReport(BaseModel):
    """What an import did, line by line."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    errors: list[ImportLineError] = Field(default_factory=list)


class JobError(BaseModel):
    """An embedding job that failed (for good, or waiting to retry) and its last error."""

    job_id: str
    memory_id: str
    namespace: str
    model: str
    state: str
    attempts: int
    error: str | None = None
    updated_at: datetime


class WorkerStatus(BaseModel):
    """A worker's last heartbeat."""

    id: str
    pid: int
    host: str
    model: str
    state: str
    started_at: datetime
    heartbeat_at: datetime
    heartbeat_age_seconds: float
    alive: bool
    processed: int
    failed: int


class IndexStatus(BaseModel):
    """The vector index of the configured model, as far as this process knows it."""

    model: str
    dimension: int | None = None
    vectors: int
    loaded: bool
    loaded_vectors: int = 0
    ann: bool = False
    ann_rows: int = 0
    file_bytes: int = 0


class GraphStatus(BaseModel):
    """The knowledge graph of some namespaces: its size, its extraction jobs and extractor."""

    state: Literal["disabled", "empty", "building", "ready"]
    extractor: str | None = Field(description="the extractor and its version (the jobs' model)")
    extractor_version: str | None = Field(default=None, description="library and model versions")
    requested_extractor: str = Field(description="what RECALLD_GRAPH_EXTRACTOR asked for")
    warning: str | None = Field(default=None, description="why the extractor differs, if it does")
    entities: int = 0
    relations: int = 0
    mentions: int = 0
    observations: int = 0
    memories_extracted: int = Field(default=0, description="memories extracted by this extractor")
    jobs: dict[str, int] = Field(default_factory=dict, description="graph jobs by state")
    last_errors: list[JobError] = Field(default_factory=list)


class Status(BaseModel):
    """Indexing health for some namespaces: the queue, embeddings, failures, workers, index."""

    namespaces: list[str]
    embedder: str | None
    search_backends: list[str]
    keyword_backend: Literal["fts5", "like", "postgres-fts"]
    vector_backend: Literal["in-process", "database"] | None = Field(
        default=None,
        description="where vectors are searched: each process's own index, or the database"
        " (pgvector); None without an embedder",
    )
    queue: dict[str, int]
    memories_by_index_state: dict[str, int]
    embeddings: dict[str, int]
    failed_jobs: list[JobError] = Field(default_factory=list)
    workers: list[WorkerStatus] = Field(default_factory=list)
    index: IndexStatus | None = None
    graph: GraphStatus | None = None
