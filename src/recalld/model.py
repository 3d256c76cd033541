"""Records and value types shared by the engine and every adapter.

These pydantic models are the wire shapes too: the REST API and the MCP tools
reuse them instead of redefining fields by hand.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictFloat,
    ValidationInfo,
)
from pydantic_core import PydanticCustomError

from recalld._schema import (
    DATE_TIME,
    ID_PATTERN,
    KEY_PATTERN,
    NAME_PATTERN,
    NO_NUL_PATTERN,
    TEXT_PATTERN,
    VISIBLE_PATTERN,
    extra,
    nullable,
    replaced,
)
from recalld._time import parse_instant
from recalld.model_import import ImportLineError, ImportReport

__all__ = [
    "ExplainStage",
    "Explanation",
    "ExportRecord",
    "Filters",
    "Forgotten",
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
    "QueryFilters",
    "Receipt",
    "Stats",
    "Status",
]

IndexState = Literal["queued", "indexed", "failed"]
# After a write that dropped content: "done" (no byte of it is left in the database
# files), "pending" (a reader holds an older snapshot; it finishes in the background),
# "none" (nothing was dropped).
ScrubState = Literal["done", "pending", "none"]

KEY_MAX_CHARS = 200
SHORT_TEXT_MAX_CHARS = 200
SPEAKER_MAX_CHARS = 200
TITLE_MAX_CHARS = 500
SOURCE_MAX_CHARS = 2048
# A search or recall query, on every surface (the service checks it: _validate.query).
QUERY_MAX_CHARS = 10_000
# How deeply a JSON value (meta) may nest objects and arrays: deep enough for any real
# metadata, shallow enough that every encoder and renderer on the way handles it.
MAX_JSON_DEPTH = 32

# Numbers and flags on the wire are strict: JSON ``true`` is not the number 1 and the
# string "5" is not a number (the published schemas say so). Integers are accepted
# where a float is expected.


def _whole_number(value: Any) -> Any:
    """Refuse booleans and strings as integers; take 5.0 as 5 (JSON calls it an integer)."""
    if isinstance(value, bool | str):
        raise ValueError("must be an integer")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# An integer on the wire: a JSON number without a fractional part, never true or "5".
# With bounds, write Annotated[int, Field(ge=.., le=..), WHOLE_NUMBER]: the bounds must come
# before the validator for the published schema to say minimum/maximum.
WHOLE_NUMBER = BeforeValidator(_whole_number)
WholeNumber = Annotated[int, WHOLE_NUMBER]


def _given_count(value: Any) -> Any:
    """A count given on the wire is an integer: ``null`` is refused as it was when the
    field was a plain ``int`` (validators never run on a default, so leaving it out still
    means the surface's default)."""
    if value is None:
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return _whole_number(value)


# A count (``limit``, ``k``) declared ``int | None = None`` so that leaving it out yields
# the surface's default held to RECALLD_MAX_LIMIT (``_validate.limit``), while its schema
# stays a plain integer (``_schema.count_default``): use this instead of WHOLE_NUMBER,
# after the Field, so that an explicit null is refused as that schema says.
WHOLE_COUNT = BeforeValidator(_given_count)
# A time on the wire is text (RFC 3339); a datetime object only from Python callers.
Moment = Annotated[datetime, Strict()]


def _composed(value: Any) -> Any:
    """A key in one Unicode spelling (NFC): "café" typed precomposed and the decomposed
    "cafe" + U+0301 some tools send look alike, so they must name one memory, not two.
    Before the type and length checks: NFC can lengthen a key (U+0958 composes to two
    characters), and the 200 characters a key may hold are those it is stored with."""
    return unicodedata.normalize("NFC", value) if isinstance(value, str) else value


# A key as written: stored, and looked up, in NFC (see :func:`_composed`).
ComposedKey = Annotated[str | None, BeforeValidator(_composed)]
# A tag (a reminder's tag trigger) in NFC, as a memory's tags are kept (``_validate.tags``).
ComposedName = Annotated[str, BeforeValidator(_composed)]


def key_spellings(key: str) -> list[str]:
    """The spellings a memory under ``key`` may be stored with, in the order to try them:
    NFC (every write since the rule), then ``key`` as given and fully decomposed (NFD, what
    macOS and some tools send), either of which a memory written before the rule holds."""
    spellings = [unicodedata.normalize("NFC", key), key, unicodedata.normalize("NFD", key)]
    return list(dict.fromkeys(spellings))


# A TTL past this would reach beyond the year 9999 (about 317 years).
MAX_TTL_SECONDS = 1e10
# Times are kept to the microsecond: a shorter TTL would expire the memory as it is written.
MIN_TTL_SECONDS = 1e-6
TTL_RULE = f"must be a finite number of seconds from {MIN_TTL_SECONDS:g} to {MAX_TTL_SECONDS:g}"


def _ttl_in_range(value: Any) -> Any:
    """Refuse a number of seconds out of range, NaN and the infinities included, stating the
    range: NaN fails every comparison, and pydantic named only the bound it tried first
    ("less than or equal to 10000000000" for NaN). Not a number: left to the type check."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    finite = not isinstance(value, float) or math.isfinite(value)
    if finite and MIN_TTL_SECONDS <= value <= MAX_TTL_SECONDS:
        return value
    raise PydanticCustomError(
        "ttl_seconds", "{rule}, got {shown}", {"rule": TTL_RULE, "shown": _shown_number(value)}
    )


def _shown_number(value: int | float) -> str:
    """A number as a range error repeats it, cut to 32 characters. An integer too long for
    Python to write out (past 4,300 digits its repr raises, and the error said only that) is
    told by its size."""
    if isinstance(value, int) and value.bit_length() > 10_000:
        return f"{'a negative' if value < 0 else 'an'} integer of over 3,000 digits"
    shown = repr(value)
    return shown if len(shown) <= 32 else f"{shown[:29]}..."


def finite_between(
    low: float, high: float | None, *, low_excluded: bool = False
) -> BeforeValidator:
    """A check that a number is finite and from ``low`` (excluded with ``low_excluded``)
    to ``high`` (no bound when None), stating that range (NaN fails every comparison, and
    pydantic named only the bound it tried first: "less than or equal to 1" for a NaN
    salience; 1e400 and a 4,000-digit integer were only "a finite number" or "a valid
    number"). Not a number: left to the type check. Placed beside the field's own bounds,
    which the published schema keeps."""
    if high is None:
        rule = f"must be a finite number {'above' if low_excluded else 'of at least'} {low:g}"
    elif low_excluded:
        rule = f"must be a finite number above {low:g} and at most {high:g}"
    else:
        rule = f"must be a finite number from {low:g} to {high:g}"

    def check(value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return value
        # An integer too large for a float is out of any range (float() would raise).
        if isinstance(value, int) and value.bit_length() > 1_024:
            finite = False
        else:
            finite = not isinstance(value, float) or math.isfinite(value)
        above_low = value > low if low_excluded else value >= low
        if finite and above_low and (high is None or value <= high):
            return value
        raise PydanticCustomError(
            "number_range", "{rule}, got {shown}", {"rule": rule, "shown": _shown_number(value)}
        )

    return BeforeValidator(check)


SALIENCE_RANGE = finite_between(0.0, 1.0)
# A search's min_score (REST and native): a probability, as a hit's score is.
SCORE_RANGE = finite_between(0.0, 1.0)
LATITUDE_RANGE = finite_between(-90.0, 90.0)
LONGITUDE_RANGE = finite_between(-180.0, 180.0)
# The TTL check alone, for a dialect whose published schema states no bounds (chaoscore's
# seed): its refusals still state the range, whatever number was sent.
TTL_RANGE = BeforeValidator(_ttl_in_range)

# A TTL on the wire or from Python: a number (never true or "5") in the range. The bounds
# come before the check so that the published schema says minimum/maximum.
TtlSeconds = Annotated[
    StrictFloat,
    Field(ge=MIN_TTL_SECONDS, le=MAX_TTL_SECONDS),
    TTL_RANGE,
]
MAX_TAGS_PUBLISHED = 64
MAX_TAG_CHARS_PUBLISHED = 100
TAGS_SCHEMA = {
    "type": "array",
    "items": {"type": "string", "pattern": NAME_PATTERN, "maxLength": MAX_TAG_CHARS_PUBLISHED},
    "maxItems": MAX_TAGS_PUBLISHED,
}
GEOHASH_PATTERN = "^\\s*[0-9b-hjkmnp-zB-HJKMNP-Z]{1,12}\\s*$"
# A place is a geohash, or lat and lon (the engine also takes all three when they agree,
# which no schema can say, so the published form asks for one or the other).
PLACE_FORMS: dict[str, Any] = {
    "oneOf": [
        {
            "required": ["geohash"],
            "properties": {"geohash": {"type": "string"}},
            "not": {"anyOf": [{"required": ["lat"]}, {"required": ["lon"]}]},
        },
        {
            "required": ["lat", "lon"],
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "not": {"required": ["geohash"]},
        },
    ]
}


class Place(BaseModel):
    """Where a memory happened: both coordinates and a geohash are always stored."""

    model_config = ConfigDict(frozen=True)

    lat: float = Field(ge=-90, le=90)
    lon: float = Field(ge=-180, le=180)
    geohash: str
    name: str | None = None


class PlaceInput(BaseModel):
    """A place as a caller gives it: a geohash, or lat and lon (and an optional name)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=PLACE_FORMS)

    lat: Annotated[StrictFloat | None, LATITUDE_RANGE] = Field(default=None, ge=-90, le=90)
    lon: Annotated[StrictFloat | None, LONGITUDE_RANGE] = Field(default=None, ge=-180, le=180)
    geohash: str | None = Field(
        default=None,
        min_length=1,
        max_length=12,
        json_schema_extra=extra(pattern=GEOHASH_PATTERN),
    )
    name: str | None = Field(
        default=None,
        max_length=SHORT_TEXT_MAX_CHARS,
        json_schema_extra=extra(pattern=VISIBLE_PATTERN),
    )


class NewMemory(BaseModel):
    """What a caller may give to ``remember``; the engine fills in the rest."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(json_schema_extra=extra(pattern=TEXT_PATTERN))
    id: str | None = Field(
        default=None, min_length=1, max_length=64, json_schema_extra=extra(pattern=ID_PATTERN)
    )
    key: ComposedKey = Field(
        default=None,
        min_length=1,
        max_length=KEY_MAX_CHARS,
        json_schema_extra=extra(pattern=KEY_PATTERN),
    )
    title: str | None = Field(
        default=None, max_length=TITLE_MAX_CHARS, json_schema_extra=extra(pattern=NO_NUL_PATTERN)
    )
    kind: str = Field(
        default="note",
        min_length=1,
        max_length=SHORT_TEXT_MAX_CHARS,
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    category: str | None = Field(
        default=None,
        min_length=1,
        max_length=SHORT_TEXT_MAX_CHARS,
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    tags: list[str] = Field(default_factory=list, json_schema_extra=replaced(TAGS_SCHEMA))
    salience: Annotated[StrictFloat | None, SALIENCE_RANGE] = Field(default=None, ge=0, le=1)
    source: str | None = Field(
        default=None,
        min_length=1,
        max_length=SOURCE_MAX_CHARS,
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    speaker: str | None = Field(
        default=None,
        min_length=1,
        max_length=SPEAKER_MAX_CHARS,
        description="who said or wrote it (a conversation turn's speaker, a note's author)",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    at: Moment | str | None = Field(default=None, json_schema_extra=replaced(nullable(DATE_TIME)))
    ttl_seconds: TtlSeconds | None = None
    place: PlaceInput | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class MemoryPatch(BaseModel):
    """A partial update: only the fields set on the instance change (None clears a field)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1})

    # content and kind can be changed, never cleared: their schemas do not allow null.
    content: str | None = Field(
        default=None,
        json_schema_extra=replaced({"type": "string", "pattern": TEXT_PATTERN}, keep_default=False),
    )
    title: str | None = Field(
        default=None, max_length=TITLE_MAX_CHARS, json_schema_extra=extra(pattern=NO_NUL_PATTERN)
    )
    kind: str | None = Field(
        default=None,
        min_length=1,
        max_length=SHORT_TEXT_MAX_CHARS,
        json_schema_extra=replaced(
            {
                "type": "string",
                "minLength": 1,
                "maxLength": SHORT_TEXT_MAX_CHARS,
                "pattern": NAME_PATTERN,
            },
            keep_default=False,
        ),
    )
    category: str | None = Field(
        default=None,
        min_length=1,
        max_length=SHORT_TEXT_MAX_CHARS,
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    tags: list[str] | None = Field(default=None, json_schema_extra=replaced(nullable(TAGS_SCHEMA)))
    salience: Annotated[StrictFloat | None, SALIENCE_RANGE] = Field(default=None, ge=0, le=1)
    source: str | None = Field(
        default=None,
        min_length=1,
        max_length=SOURCE_MAX_CHARS,
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    speaker: str | None = Field(
        default=None,
        min_length=1,
        max_length=SPEAKER_MAX_CHARS,
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    at: Moment | str | None = Field(default=None, json_schema_extra=replaced(nullable(DATE_TIME)))
    ttl_seconds: TtlSeconds | None = None
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
    speaker: str | None = None
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
    status: Literal["created", "overwritten", "unchanged", "duplicate"] = Field(
        description="created; overwritten (the key existed); unchanged (the id existed with"
        " this content); duplicate (the same content is already stored: this is its receipt,"
        " and nothing was written)"
    )
    created: bool
    index_state: IndexState
    job_id: str | None = None
    scrub: ScrubState = Field(
        default="none",
        description="an overwrite dropped the old value: done, or pending while a reader"
        " holds an older snapshot",
    )


class Forgotten(BaseModel):
    """What ``forget`` did: whether the memory existed, and whether its bytes are gone.

    Truthy when something was deleted, so ``if memory.forget(id):`` reads naturally.
    """

    deleted: bool
    scrubbed: bool = Field(
        description="no byte of the memory is left in the database files (false: pending)"
    )
    scrub: ScrubState

    @classmethod
    def of(cls, deleted: bool, scrub: ScrubState) -> Forgotten:
        """The result for a delete that did (or did not) happen, scrubbed or pending."""
        return cls(deleted=deleted, scrubbed=scrub != "pending", scrub=scrub)

    def __bool__(self) -> bool:
        return self.deleted


class Hit(BaseModel):
    """A recall/search result: the memory, a score in [0, 1] and what explains it."""

    memory: Memory
    score: float = Field(ge=0, le=1)
    channels: dict[str, float] = Field(default_factory=dict)
    backends: list[str] = Field(default_factory=list)
    prompt_line: str


ExplainStage = Literal[
    "returned", "beyond_limit", "collapsed", "below_threshold", "not_in_pool", "excluded"
]


class Explanation(BaseModel):
    """Why a memory was (or was not) recalled for a query: stage, rank, every value, the cut.

    ``stage`` is the last stage the memory reached: ``excluded`` (a filter or
    its expiry hides it: see ``excluded_by``), ``not_in_pool`` (neither channel
    put it among its candidates), ``below_threshold`` (scored under
    ``min_score``), ``collapsed`` (a near-duplicate of ``duplicate_of``),
    ``beyond_limit`` (ranked after ``limit`` other hits) or ``returned``.
    ``rank`` (1 = best) and ``score`` are what it gets among the candidates (a
    returned memory's rank is its position among the hits: near-duplicates collapsed
    into another hit are not counted); they are given for every stage, as if it had
    been a candidate, except for an
    expired memory: what it said is never shown, so it is not scored (no rank,
    score 0, no channels or features).
    """

    memory_id: str
    query: str
    stage: ExplainStage
    reason: str
    excluded_by: list[str] = Field(default_factory=list)
    index_state: IndexState
    found_by: list[str] = Field(default_factory=list)
    rank: int | None = None
    candidates: int = 0
    score: float = Field(ge=0, le=1)
    min_score: float = Field(ge=0, le=1)
    limit: int
    duplicate_of: str | None = None
    turn_of: str | None = None
    """The memory whose turn this one goes on with (the same speaker, moments before, in
    its source): its keyword or vector features, and so its score up to that memory's,
    are the turn's (see "Scores and min_score" in the README)."""
    model: str
    channels: dict[str, float] = Field(default_factory=dict)
    features: dict[str, float] = Field(default_factory=dict)
    contributions: dict[str, float] = Field(default_factory=dict)


class QueryFilters(BaseModel):
    """Narrowing for search and recall; every filter applies before the limit is cut."""

    model_config = ConfigDict(extra="forbid")

    # Names, as a memory's own (checked by the service: a blank one would match nothing).
    kind: str | None = Field(default=None, json_schema_extra=extra(pattern=NAME_PATTERN))
    category: str | None = Field(default=None, json_schema_extra=extra(pattern=NAME_PATTERN))
    speaker: str | None = Field(
        default=None,
        description="only what this speaker said or wrote",
        json_schema_extra=extra(pattern=NAME_PATTERN),
    )
    has_key: StrictBool | None = Field(
        default=None,
        description="true: only memories written with a key (key/value records); false: only"
        " memories without one",
    )
    # As many and as long as a memory's own tags (checked by the service: _validate.tags).
    tags_any: list[str] = Field(default_factory=list, json_schema_extra=replaced(TAGS_SCHEMA))
    tags_all: list[str] = Field(default_factory=list, json_schema_extra=replaced(TAGS_SCHEMA))
    since: Moment | str | None = Field(
        default=None, json_schema_extra=replaced(nullable(DATE_TIME))
    )
    until: Moment | str | None = Field(
        default=None, json_schema_extra=replaced(nullable(DATE_TIME))
    )
    created_since: Moment | str | None = Field(
        default=None, json_schema_extra=replaced(nullable(DATE_TIME))
    )
    created_until: Moment | str | None = Field(
        default=None, json_schema_extra=replaced(nullable(DATE_TIME))
    )


class Filters(QueryFilters):
    """Narrowing for list, search and recall; ``include_expired`` is for the admin listing
    only (search and recall refuse it: expired memories are never returned there)."""

    include_expired: StrictBool = False


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
    db_size_bytes: int | None = Field(
        default=None, description="the database files' size; only for callers of every namespace"
    )
    schema_version: int
    expired_pending_purge: int
    pending_scrubs: int | None = Field(
        default=0,
        description="content-dropping writes (of every namespace) whose bytes are not scrubbed"
        " yet; only for callers of every namespace, else null",
    )

    def confined(self) -> Stats:
        """These stats as a caller confined to some namespaces sees them: the figures of the
        whole database (its size, every namespace's pending scrubs) are null."""
        return self.model_copy(update={"db_size_bytes": None, "pending_scrubs": None})


# Seconds since 1970 written as text: pydantic reads them (review 56a: an import line's
# "at": "1700000000" imported before import times were read as remember reads them).
_EPOCH_TEXT = re.compile(r"[+-]?\d+(?:\.\d+)?")


def _imported_instant(value: Any, info: ValidationInfo) -> Any:
    """An import line's time written as text, read as ``remember`` reads it
    (:func:`parse_instant`: a leap second and a lower-case ``t`` or ``z`` are RFC 3339;
    pydantic refused the line). A number stays pydantic's: seconds since 1970, also when
    written as text (``"1700000000"``), as earlier versions imported it."""
    if isinstance(value, str) and not _EPOCH_TEXT.fullmatch(value):
        return parse_instant(info.field_name or "time", value)
    return value


# A time of an import line: the JSON schema of a date-time, text read by _imported_instant.
ImportedInstant = Annotated[datetime | None, BeforeValidator(_imported_instant)]


class ExportRecord(BaseModel):
    """One memory line of a JSONL export: every field needed for a lossless round trip.

    Written by ``export`` with every field; an imported line needs only ``content``
    (a line without ``id`` is a new memory, unless it repeats a stored one; without
    times it is stamped now).
    """

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, min_length=1, max_length=64)
    namespace: str | None = None
    key: ComposedKey = Field(default=None, min_length=1, max_length=KEY_MAX_CHARS)
    title: str | None = Field(default=None, max_length=TITLE_MAX_CHARS)
    content: str
    # Bounded by the import, not here: an older version stored a kind of 200 क़ 400 code
    # points long, and its shortest spelling is held to the limit (recalld._validate.
    # composed_name), as a tag's is; a bound of 600 here was the limit a 601-character
    # kind was told, where one of 300 was told 200 (review of pass e66).
    kind: str = Field(default="note", min_length=1)
    category: str | None = Field(default=None, min_length=1)
    tags: list[str] = Field(default_factory=list)
    salience: Annotated[StrictFloat | None, SALIENCE_RANGE] = Field(default=None, ge=0, le=1)
    source: str | None = Field(default=None, min_length=1, max_length=SOURCE_MAX_CHARS)
    speaker: str | None = Field(default=None, min_length=1, max_length=SPEAKER_MAX_CHARS)
    at: ImportedInstant = None
    created_at: ImportedInstant = None
    updated_at: ImportedInstant = None
    expires_at: ImportedInstant = None
    place: PlaceInput | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    # The store keeps a 64-bit integer: a larger count crashed the line's whole chunk.
    access_count: WholeNumber = Field(default=0, ge=0, le=2**63 - 1)
    last_accessed_at: ImportedInstant = None


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
    """A worker's last heartbeat. A worker serves every namespace: what it is doing and how
    much it did (``state``, ``processed``, ``failed``) are null for a caller confined to
    some namespaces (see :meth:`Status.confined`)."""

    id: str
    pid: int
    host: str
    model: str
    state: str | None = Field(description="busy, idle or stopped; null for a confined caller")
    started_at: datetime
    heartbeat_at: datetime
    heartbeat_age_seconds: float
    alive: bool
    processed: int | None = Field(description="jobs done, of every namespace; null if confined")
    failed: int | None = Field(
        description="jobs failed for good, every namespace; null if confined"
    )


class IndexStatus(BaseModel):
    """The vector index of the configured model, as far as this process knows it.

    ``vectors`` counts the namespaces asked about; the rest describes the process's
    index of every namespace, and is null for a caller confined to some namespaces.
    """

    model: str
    dimension: int | None = Field(
        default=None, description="of the loaded index (null before a vector recall, or confined)"
    )
    vectors: int = Field(description="embeddings of this model in the namespaces asked about")
    loaded: bool | None = Field(
        description="whether this process loaded the index; null if confined"
    )
    loaded_vectors: int | None = Field(default=0, description="rows loaded; null if confined")
    ann: bool | None = Field(default=False, description="whether it uses HNSW; null if confined")
    ann_rows: int | None = Field(default=0, description="rows in the HNSW graph; null if confined")
    file_bytes: int | None = Field(
        default=0, description="the saved graph's size; null if confined"
    )


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
    pending_scrubs: int | None = Field(
        default=0,
        description="content-dropping writes (of every namespace) whose bytes are not scrubbed"
        " yet; only for callers of every namespace, else null",
    )

    def confined(self) -> Status:
        """This status as a caller confined to some namespaces sees it: nothing that moves
        with another namespace's activity. The queue, embeddings, failures and graph count
        the namespaces asked about already; the figures of the whole database or process
        (pending scrubs, each worker's state and job counts, the loaded index) are null."""
        workers = [
            worker.model_copy(update={"state": None, "processed": None, "failed": None})
            for worker in self.workers
        ]
        index = None
        if self.index is not None:
            # The dimension is read from the loaded index: it tells whether anyone searched.
            process = ("dimension", "loaded", "loaded_vectors", "ann", "ann_rows", "file_bytes")
            index = self.index.model_copy(update=dict.fromkeys(process))
        return self.model_copy(update={"pending_scrubs": None, "workers": workers, "index": index})
