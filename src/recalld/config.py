"""Settings: built once at an entrypoint (env prefix ``RECALLD_``) and passed down.

Nothing else in recalld reads ``os.environ``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import platformdirs
import pydantic
from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from recalld import errors
from recalld._location import CONNINFO_REFUSED, is_conninfo, is_postgres_url, redact_url
from recalld.config_errors import InvalidSettingsError

__all__ = [
    "MAX_COUNT",
    "MAX_DURATION_SECONDS",
    "MAX_EMBEDDER_DIMENSION",
    "MAX_EMBEDDER_THREADS",
    "MAX_POOL_CONNECTIONS",
    "MAX_TIMEOUT_MS",
    "InvalidSettingsError",
    "Settings",
    "default_cache_directory",
    "default_db_path",
    "spelled_variables",
    "unknown_variables",
]

# The longest duration any setting may give (100 years): a time that far from now, added
# or taken away, is still a date, and a wait that long is still a timeout (a larger one,
# or inf, made every sense, every forget's scrub wait or every job claim fail).
MAX_DURATION_SECONDS = 100 * 366 * 24 * 3600.0
# The longest timeout handed to SQLite (busy timeout) or PostgreSQL (lock_timeout,
# tcp_user_timeout) in milliseconds: theirs is a 32-bit int (about 24.8 days).
MAX_TIMEOUT_MS = 2**31 - 1
# The largest count or size any integer setting may give (limits, batches, candidates,
# attempts, threads, bytes). Unbounded, a value past SQLite's 64-bit integers made every
# recall, listing or worker batch that binds it fail with an OverflowError traceback;
# this bound leaves room for the arithmetic done on it (a page asks for limit + 1).
MAX_COUNT = 2**31 - 1
# Bounds of the embedder's own sizes. Threads: onnxruntime starts every intra-op thread
# when the model loads (100,000 hung the first recall for minutes); more than 256 gains a
# short text nothing. Dimension: the longest vector of any embedding model in use is a few
# thousand floats; 2147483647 made every write allocate 8 GB.
MAX_EMBEDDER_THREADS = 256
MAX_EMBEDDER_DIMENSION = 65_536
# PostgreSQL's own bound on connections (max_connections, MAX_BACKENDS): a pool kept at
# two billion connections only retried its failing connects for ever.
MAX_POOL_CONNECTIONS = 262_143


def default_cache_directory() -> Path:
    """Derived files recalld may rebuild at will (the fast form of the default model)."""
    return _user_directory(platformdirs.user_cache_dir, "RECALLD_CACHE_DIR", "XDG_CACHE_HOME")


def default_db_path() -> Path:
    """The embedded default database: ``recalld.db`` in the user's data directory."""
    directory = _user_directory(platformdirs.user_data_dir, "RECALLD_DB", "XDG_DATA_HOME")
    return directory / "recalld.db"


def _user_directory(where: Callable[..., str], variable: str, xdg: str) -> Path:
    """recalld's directory of the kind ``where`` gives; a :class:`ValidationError` naming
    ``variable`` when there is no home to put it in (HOME unset or relative and the user
    without one in the password database, as in a container run under an arbitrary uid):
    platformdirs' RuntimeError was a traceback on the first command."""
    try:
        return Path(where("recalld", appauthor=False))
    except RuntimeError:
        from recalld.errors import ValidationError

        raise ValidationError(
            variable,
            f"is not set, and this user has no home directory for the default (HOME is"
            f" unset or not absolute); set {variable}, or HOME or {xdg} to an absolute path",
        ) from None


class Settings(BaseSettings):
    """Every knob recalld has, with the defaults a single-user install wants."""

    # validate_assignment: `settings.db = 5` or `settings.min_score = 7` after construction
    # was taken as it was, failing later (or never); it is checked as the constructor checks.
    model_config = SettingsConfigDict(
        env_prefix="RECALLD_", extra="ignore", validate_assignment=True
    )

    # Hidden from the type checker, which keeps the signature pydantic gives (each
    # setting's own type): these two take any name and value, to check them at run time.
    if not TYPE_CHECKING:

        def __init__(self, **values: Any) -> None:
            """The settings: ``values`` over the ``RECALLD_*`` environment over the defaults.

            A value that does not fit, a name that is no setting, or one setting given twice
            (``db=`` and ``DB=``: the names are read whatever their case) raises
            :class:`InvalidSettingsError` (a :class:`recalld.ValidationError`) naming it."""
            spellings: dict[str, str] = {}
            for name in values:
                if name.startswith("_"):
                    continue  # pydantic-settings' own arguments (_env_file ...)
                other = spellings.setdefault(name.lower(), name)
                if other != name:
                    raise errors.ValidationError(
                        f"{other} and {name}", "name one setting whatever their case: give one"
                    )
            try:
                super().__init__(**values)
            except pydantic.ValidationError as error:
                raise InvalidSettingsError.of(error) from None
            except SettingsError as error:
                raise InvalidSettingsError.unreadable(error) from None

        def __setattr__(self, name: str, value: Any) -> None:
            """Set one setting, checked as the constructor checks it (see :meth:`__init__`)."""
            if name.startswith("_"):
                super().__setattr__(name, value)
                return
            refuse_unknown_settings({name: value}, type(self))
            before, given_before = self.__dict__[name], name in self.model_fields_set
            try:
                super().__setattr__(name, value)
            except pydantic.ValidationError as error:
                raise InvalidSettingsError.of(error) from None
            # pydantic checks only the setting assigned: a check comparing it with another
            # (see _compared_problem) runs here, and a refusal gives the setting its value back.
            problem = self._compared_problem()
            if problem is not None:
                self.__dict__[name] = before
                if not given_before:  # nor is it counted as given (model_dump(exclude_unset))
                    self.model_fields_set.discard(name)
                raise InvalidSettingsError(name, problem, [((name,), problem, value)])

        def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False):
            """A copy with ``update``'s settings changed, each checked as an assignment is
            (see :meth:`__setattr__`), and the settings compared once all are changed.

            pydantic's checks nothing: ``update={"min_score": 7}``, or a name that is no
            setting, was taken as given (stop 67's leftover). The original is unchanged."""
            changes = dict(update or {})
            refuse_unknown_settings(
                {name: value for name, value in changes.items() if not name.startswith("_")},
                type(self),
            )
            copied = super().model_copy(deep=deep)
            for name, value in changes.items():
                try:
                    # pydantic's own check of one assignment; compared below, once all are in.
                    BaseSettings.__setattr__(copied, name, value)
                except pydantic.ValidationError as error:
                    raise InvalidSettingsError.of(error) from None
            problem = copied._compared_problem()
            if problem is not None:
                given = [((name,), problem, value) for name, value in changes.items()]
                raise InvalidSettingsError(", ".join(sorted(changes)), problem, given)
            return copied

    def _compared_problem(self) -> str | None:
        """What is wrong between two settings, as their validators say it at construction."""
        if self.postgres_pool_max < self.postgres_pool_min:
            return (
                f"leaves RECALLD_POSTGRES_POOL_MAX ({self.postgres_pool_max}) below"
                f" RECALLD_POSTGRES_POOL_MIN ({self.postgres_pool_min}): the maximum must be"
                " at least the minimum"
            )
        dimension = self.embedder_dimension
        if self.embedder == "hashing" and dimension is not None and dimension < 8:
            return "leaves RECALLD_EMBEDDER_DIMENSION below 8, the hashing embedder's least"
        key, url = self.embedder_api_key, self.embedder_url
        if key is not None and key.get_secret_value() and url and "@" in urlsplit(url).netloc:
            return (
                "leaves RECALLD_EMBEDDER_API_KEY set beside a user and password in"
                " RECALLD_EMBEDDER_URL: give the endpoint's credentials in one of them"
            )
        return None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The default sources, once the environment is known to name each setting it
        sets once: the variables are read whatever their case, so RECALLD_DB and
        recalld_db name one setting, and set to two values one was used, which depended
        on the environment's order. (Called at each construction; the settings given
        as arguments are not read there, so not looked at.)"""
        given = init_settings.init_kwargs if isinstance(init_settings, InitSettingsSource) else {}
        refuse_unknown_settings(given, settings_cls)
        spelled_variables(given=given)
        return init_settings, env_settings, dotenv_settings, file_secret_settings

    db: Path | str = Field(
        default_factory=default_db_path,
        description="SQLite database file, or a postgresql:// URL (PostgreSQL with pgvector)",
    )
    namespace: str = Field(default="default", description="namespace used when none is given")

    synchronous: Literal["FULL", "NORMAL"] = Field(
        default="FULL",
        description="FULL fsyncs every commit: an acknowledged write survives power loss",
    )
    busy_timeout_ms: int = Field(
        default=5_000, ge=0, le=MAX_TIMEOUT_MS, description="SQLite busy_timeout"
    )
    lock_retry_seconds: float = Field(
        default=30.0,
        gt=0,
        le=MAX_DURATION_SECONDS,
        description="bound on retrying a write that stays locked",
    )
    fts: bool = Field(default=True, description="use FTS5 when available (else LIKE)")

    # -- PostgreSQL (issue 15) ----------------------------------------------------
    postgres_pool_min: int = Field(
        default=1, ge=0, le=MAX_POOL_CONNECTIONS, description="connections kept open"
    )
    postgres_pool_max: int = Field(
        default=10, gt=0, le=MAX_POOL_CONNECTIONS, description="connections at most"
    )
    postgres_connect_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=MAX_TIMEOUT_MS // 1000,
        description="how long opening a connection may take",
    )
    postgres_vacuum_after_forget: Literal["off", "vacuum", "full"] = Field(
        default="vacuum",
        description="after a forget: VACUUM the touched tables (dead rows and their index"
        " entries go), VACUUM FULL (tables rewritten into new files; locks them), or off"
        " (autovacuum, later)",
    )
    postgres_ef_search: int = Field(
        default=100, gt=0, le=1000, description="hnsw.ef_search for vector recall"
    )
    purge_interval_seconds: float = Field(
        default=60.0,
        gt=0,
        le=MAX_DURATION_SECONDS,
        description="how often expired memories are purged",
    )
    scrub_wait_seconds: float = Field(
        default=2.0,
        ge=0,
        le=MAX_TIMEOUT_MS // 1000,
        description="how long a forget (or another content-dropping write) waits for readers"
        " of older snapshots before it answers that scrubbing is pending",
    )
    scrub_poll_seconds: float = Field(
        default=1.0,
        gt=0,
        le=MAX_DURATION_SECONDS,
        description="how often pending scrubs are retried in the background",
    )
    reserve_bytes: int = Field(
        default=1024 * 1024,
        ge=0,
        le=MAX_COUNT,
        description="room kept beside the database (<db>-reserve) so forget works on a full"
        " disk; 0 turns it off",
    )

    max_content_bytes: int = Field(default=64 * 1024, gt=0, le=MAX_COUNT)
    max_tags: int = Field(default=64, gt=0, le=MAX_COUNT)
    max_tag_chars: int = Field(default=100, gt=0, le=MAX_COUNT)
    max_meta_bytes: int = Field(default=16 * 1024, gt=0, le=MAX_COUNT)
    max_limit: int = Field(
        default=1_000, gt=0, le=MAX_COUNT, description="cap on any limit/k argument"
    )
    max_query_terms: int = Field(
        default=64, gt=0, le=MAX_COUNT, description="keyword terms kept per query"
    )

    image_encoder: str | None = Field(
        default=None,
        description="optional image model plug-in, 'module:factory' (see context.signals)",
    )
    # Finite: at inf every place was the same place and every distance equally near.
    place_near_m: float = Field(
        default=50.0, gt=0, allow_inf_nan=False, description="same place within this"
    )
    place_scale_m: float = Field(
        default=1_000.0, gt=0, allow_inf_nan=False, description="place similarity fall-off"
    )
    fire_score: float = Field(default=0.55, ge=0, le=1, description="sense: score to fire")
    fire_channel: float = Field(
        default=0.6, ge=0, le=1, description="sense: a channel counts as evidence from here"
    )
    fire_strong: float = Field(
        default=0.9, ge=0, le=1, description="sense: text/image/audio alone fires from here"
    )
    fire_limit: int = Field(
        default=3,
        ge=1,
        le=100,
        description="sense: at most this many memories fire at once (the strongest)",
    )
    habituation_seconds: float = Field(
        default=3 * 3600.0,
        ge=0,
        le=MAX_DURATION_SECONDS,
        description="a fired memory stays quiet this long",
    )

    # -- prospective memory (issue 17) -------------------------------------------
    zone: str | None = Field(
        default=None,
        description="the user's time zone for reminders, the periods questions name, and the"
        " present time of a sense or of a memory written without at (IANA name or +HH:MM);"
        " default: this machine's current offset",
    )
    reminder_default_time: str = Field(
        default="09:00", description="the time of a reminder phrase naming only a day"
    )
    intention_min_interval_seconds: float = Field(
        default=3600.0,
        ge=0,
        le=MAX_DURATION_SECONDS,
        description="every_time intentions: default gap between firings",
    )
    intention_min_recurrence_seconds: float = Field(
        default=60.0,
        ge=0,
        le=MAX_DURATION_SECONDS,
        description="a recurrence's occurrences come at least this far apart (no SECONDLY flood)",
    )
    intention_window_minutes: float = Field(
        default=60.0,
        gt=0,
        le=MAX_DURATION_SECONDS / 60,
        description="a recurrence beside sensed triggers holds this long",
    )
    intention_reading_gap_seconds: float = Field(
        default=600.0,
        gt=0,
        le=MAX_DURATION_SECONDS,
        description="a longer gap between readings restarts a streak",
    )
    scheduler_thread: bool = Field(
        default=False,
        description="fire time-only intentions from a thread of this process (servers turn it on)",
    )
    scheduler_poll_seconds: float = Field(
        default=1.0,
        gt=0,
        le=MAX_DURATION_SECONDS,
        description="the scheduler re-reads the next due time this often",
    )

    core_user_chars: int = Field(
        default=1_375,
        gt=0,
        le=MAX_COUNT,
        description="character limit of the core memory's user target",
    )
    core_memory_chars: int = Field(
        default=2_200,
        gt=0,
        le=MAX_COUNT,
        description="character limit of the core memory's memory target",
    )
    core_screen: Literal["strict", "off"] = Field(
        default="strict",
        description="strict: refuse core-memory entries that read as instructions to the model"
        " (prompt injection, role hijack, exfiltration, secrets, persistence, hidden HTML);"
        " off: store them as given (see recalld.core_screen)",
    )

    host: str = Field(default="127.0.0.1", description="address `recalld serve` binds")
    port: int = Field(default=8765, ge=0, le=65535, description="port `recalld serve` binds")
    max_body_bytes: int = Field(
        default=1024 * 1024,
        gt=0,
        le=MAX_COUNT,
        description="largest HTTP request body accepted (413 above)",
    )
    max_import_bytes: int = Field(
        default=64 * 1024 * 1024,
        gt=0,
        le=MAX_COUNT,
        description="largest JSONL upload to /v1/import",
    )
    cors_origins: list[str] = Field(
        default_factory=list, description="origins allowed by CORS (none: CORS is off)"
    )

    # -- semantic recall (issue 3) ---------------------------------------------
    embedder: Literal["minilm", "hashing", "http", "torch", "none"] = Field(
        default="minilm",
        description=(
            "minilm: the offline all-MiniLM-L6-v2 int8 ONNX model (default); hashing: a"
            " deterministic test embedder; http: an OpenAI-compatible endpoint; torch:"
            " sentence-transformers (extra [torch]); none: keyword recall only"
        ),
    )
    embedder_model_path: Path | None = Field(
        default=None, description="an ONNX (minilm) or sentence-transformers (torch) model"
    )
    embedder_tokenizer_path: Path | None = Field(
        default=None, description="tokenizer.json for a custom ONNX model"
    )
    embedder_model_sha256: str | None = Field(
        default=None, description="expected sha256 of a custom ONNX model file"
    )
    embedder_model: str | None = Field(
        default=None, description="model name (http) or recorded name of a custom model"
    )
    embedder_dimension: int | None = Field(
        default=None, gt=0, le=MAX_EMBEDDER_DIMENSION, description="vector length"
    )
    embedder_threads: int = Field(
        default=1, gt=0, le=MAX_EMBEDDER_THREADS, description="onnxruntime intra-op threads"
    )
    embedder_variant: Literal["blockwise-int8", "dynamic-int8", "installed"] = Field(
        default="blockwise-int8",
        description=(
            "minilm: blockwise-int8 runs 8-bit MatMuls derived locally from the installed file"
            " (~1.7x faster queries, ~80 MB less memory, cosine >= 0.996 with its vectors);"
            " installed runs the installed file as it is; dynamic-int8 is an earlier"
            " derived form"
        ),
    )
    cache_dir: Path = Field(
        default_factory=default_cache_directory,
        description="derived files (the minilm blockwise-int8 model), rebuilt when missing",
    )
    embedder_url: str | None = Field(default=None, description="base URL of the http embedder")
    embedder_api_key: SecretStr | None = Field(default=None, description="http embedder key")
    embedder_timeout_seconds: float = Field(default=60.0, gt=0, le=MAX_DURATION_SECONDS)

    worker_thread: bool = Field(
        default=False,
        description="run the embedding worker as a thread of this process, and load the vector"
        " index and the model once open, not at the first recall (servers turn it on)",
    )
    worker_batch_size: int = Field(
        default=64, gt=0, le=MAX_COUNT, description="jobs claimed per batch"
    )
    recall_catch_up: int = Field(
        default=64,
        ge=0,
        le=MAX_COUNT,
        description="recall and search first embed the queued memories themselves when at most"
        " this many are queued (what was just written is found by meaning); 0 turns it off",
    )
    worker_lease_seconds: float = Field(
        default=120.0,
        gt=0,
        le=MAX_DURATION_SECONDS,
        description="a claimed job is taken over after this long",
    )
    worker_max_attempts: int = Field(
        default=5, gt=0, le=MAX_COUNT, description="tries before a job fails"
    )
    worker_retry_seconds: float = Field(
        default=2.0,
        ge=0,
        le=MAX_DURATION_SECONDS,
        description="first retry delay; doubles each attempt",
    )
    worker_retry_max_seconds: float = Field(default=300.0, ge=0, le=MAX_DURATION_SECONDS)
    worker_poll_seconds: float = Field(
        default=1.0,
        gt=0,
        le=MAX_DURATION_SECONDS,
        description="how often an idle worker looks for new jobs",
    )
    vector_ann_threshold: int = Field(
        default=20_000,
        ge=0,
        le=MAX_COUNT,
        description="vectors of one model above which an HNSW index answers unfiltered queries",
    )
    # -- recall (issue 11) -----------------------------------------------------
    # 0.02: the largest threshold costing at most 0.01 of R@5 on the LoCoMo dev split
    # (leave-one-conversation-out); there it leaves 95 % of unrelated questions with no hit.
    min_score: float = Field(
        default=0.02,
        ge=0,
        le=1,
        description=(
            "recall/search return only hits scoring at least this (a calibrated probability);"
            " also what the seed dialects use, whose schemas take no threshold"
        ),
    )
    keyword_candidates: int = Field(
        default=100, gt=0, le=10_000, description="keyword matches in recall's candidate pool"
    )
    vector_candidates: int = Field(
        default=100, gt=0, le=10_000, description="nearest vectors in recall's candidate pool"
    )
    period_candidates: int = Field(
        default=30,
        ge=0,
        le=10_000,
        description="nearest vectors of the period a question names (last weekend, in May 2023)"
        " added to recall's candidate pool; 0: none",
    )
    duplicate_cosine: float = Field(
        default=0.97, ge=0, le=1, description="hits at least this similar collapse into one"
    )

    # -- knowledge graph (issue 12) ---------------------------------------------
    graph_extractor: Literal["spacy", "rules", "none"] = Field(
        default="spacy",
        description=(
            "spacy: entities and relations from spaCy's small English pipeline (default; falls"
            " back to rules, with a warning, when the model package is missing); rules: the"
            " rule-based extractor, no model; none: no graph is built"
        ),
    )
    graph_batch_size: int = Field(
        default=32, gt=0, le=MAX_COUNT, description="memories extracted per batch"
    )
    graph_recall: bool = Field(
        default=False,
        description="hybrid recall adds what the knowledge graph reaches to its candidates"
        " and gives the reranker graph features (off, the default: the graph is browsed and"
        " queried by its own tools; on LoCoMo it ranked no better and cost a fifth of a recall)",
    )
    graph_seed_limit: int = Field(
        default=8,
        gt=0,
        le=MAX_COUNT,
        description="entities of the query (and of top hits) that seed a walk",
    )
    graph_fanout: int = Field(
        default=200,
        gt=0,
        le=MAX_COUNT,
        description="memories followed per entity in a walk (an entity in more is only a seed)",
    )
    graph_page_size: int = Field(
        default=100,
        gt=0,
        le=MAX_COUNT,
        description="entities per page of read_graph and the graph listings",
    )

    @field_validator("db", mode="before")
    @classmethod
    def _database_location(cls, value: Any) -> Any:
        """A ``postgresql://`` (or ``postgres://``) URL stays text; anything else is a path.
        Either is refused when it is not UTF-8 (SQLite opens files by UTF-8 names, psycopg
        sends the URL as UTF-8: a Latin-1 ``--db`` in a UTF-8 shell failed every command
        with a traceback)."""
        url = is_postgres_url(value)
        if is_conninfo(value):
            # Taken for a file name, it created a new SQLite database named after the
            # string (password included) in the working directory, printed that name,
            # and kept every memory there instead of in PostgreSQL. The value is not
            # repeated: it may hold a password.
            raise ValueError(CONNINFO_REFUSED)
        if isinstance(value, str) and not url:
            value = Path(value)
        if isinstance(value, str | Path):
            if "\x00" in str(value):
                # No file name or URL holds one: recalld.open failed with a bare
                # "ValueError: embedded null byte" from the file check, naming no field.
                raise ValueError("holds a NUL character (U+0000), which no path or URL may hold")
            try:
                str(value).encode("utf-8")
            except UnicodeEncodeError as error:
                byte = str(value)[error.start].encode("utf-8", "surrogateescape")
                what = "psycopg sends the URL" if url else "SQLite names files"
                raise ValueError(
                    f"holds the byte 0x{byte.hex()}, which is not UTF-8 ({what} in UTF-8);"
                    " give UTF-8 text"
                ) from None
        return str(value).strip() if url else value

    # An empty value is not "unset": an empty RECALLD_CACHE_DIR was the path ".", so the
    # 58 MB derived model was written into whatever directory recalld ran from; an empty
    # RECALLD_EMBEDDER_URL failed the first write with a ValueError traceback. (An empty
    # RECALLD_EMBEDDER_API_KEY still means no key, as it always did.)
    @field_validator(
        "cache_dir",
        "embedder_model_path",
        "embedder_tokenizer_path",
        "embedder_url",
        "embedder_model",
        "image_encoder",
        "host",
        mode="before",
    )
    @classmethod
    def _not_blank(cls, value: Any) -> Any:
        """Refuse an empty or blank value: leave the variable unset for the default."""
        if isinstance(value, str) and not value.strip():
            raise ValueError("is empty; give a value, or unset the variable for the default")
        return value

    @field_validator("embedder_url")
    @classmethod
    def _embedder_url(cls, value: str | None) -> str | None:
        """An ``http://`` or ``https://`` URL (urllib refused any other with a traceback)."""
        if value is not None and urlsplit(value.strip()).scheme.lower() not in ("http", "https"):
            raise ValueError("must be an http:// or https:// URL")
        return value

    @field_validator("embedder_api_key")
    @classmethod
    def _one_credential(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        """A key, or a user and password in ``RECALLD_EMBEDDER_URL``: not both (one
        ``Authorization`` header carries one of them)."""
        url = info.data.get("embedder_url")
        if value is not None and value.get_secret_value() and url and "@" in urlsplit(url).netloc:
            raise ValueError(
                "is set while RECALLD_EMBEDDER_URL holds a user and password: give the"
                " endpoint's credentials in one of them"
            )
        return value

    # A namespace, zone or clock time that does not parse is refused here, naming its
    # variable, as every other setting is: checked only where it was first used, a server
    # started and then refused every request, and `recalld stats` said nothing.
    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        """1-100 letters, digits or ``._:@/-``, as every call's own namespace."""
        from recalld._validate import NAMESPACE_PATTERN, decomposed_note

        if not NAMESPACE_PATTERN.fullmatch(value):
            raise ValueError(
                "must be 1-100 letters, digits or . _ : @ / -"
                + decomposed_note(value, NAMESPACE_PATTERN)
            )
        return value

    @field_validator("zone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        """An IANA zone or a fixed offset (what reminders and periods read it as)."""
        from recalld._time import parse_zone
        from recalld.errors import ValidationError

        if value is not None:
            try:
                parse_zone(value)
            except ValidationError as error:
                raise ValueError(error.message) from None
        return value

    @field_validator("reminder_default_time")
    @classmethod
    def _reminder_time(cls, value: str) -> str:
        """``HH:MM`` on a 24-hour clock."""
        from recalld._time import parse_clock_time
        from recalld.errors import ValidationError

        try:
            parse_clock_time(value, "reminder_default_time")
        except ValidationError:
            raise ValueError("expected HH:MM on a 24-hour clock") from None
        return value

    @field_validator("embedder_dimension")
    @classmethod
    def _hashing_dimension(cls, value: int | None, info: ValidationInfo) -> int | None:
        """The hashing embedder's buckets: at least 8 (fewer failed every command that
        made the embedder with a ValueError traceback)."""
        if value is not None and value < 8 and info.data.get("embedder") == "hashing":
            raise ValueError("must be at least 8 for the hashing embedder (its buckets)")
        return value

    @field_validator("postgres_pool_max")
    @classmethod
    def _pool_bounds(cls, value: int, info: ValidationInfo) -> int:
        """A maximum below the minimum is refused: the pool would keep the minimum open
        anyway and grow past what the maximum promised."""
        minimum = info.data.get("postgres_pool_min")
        if minimum is not None and value < minimum:
            raise ValueError(
                f"is below RECALLD_POSTGRES_POOL_MIN ({minimum}): the pool keeps that many"
                " connections open, so the maximum must be at least the minimum"
            )
        return value

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, value: list[str]) -> list[str]:
        """Origins as browsers send them: no trailing slash (``http://app.example/`` is
        ``http://app.example``), so CORS and the loopback trust compare them alike."""
        return [origin.strip().rstrip("/") for origin in value]

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """The fields as pydantic shows them, ``db`` without its password: a settings
        object printed, logged or shown in a traceback's locals told the PostgreSQL
        password (``embedder_api_key`` is a ``SecretStr``, shown as ``**********``)."""
        for name, value in super().__repr_args__():
            yield name, redact_url(value) if name == "db" and is_postgres_url(value) else value

    @property
    def uses_postgres(self) -> bool:
        """Whether ``db`` names a PostgreSQL database."""
        return is_postgres_url(self.db)


# Read by `make install` (scripts/install.sh), not by a running recalld.
INSTALL_VARIABLES = frozenset({"RECALLD_HOME", "RECALLD_BIN_DIR", "RECALLD_EXTRAS"})


def spelled_variables(
    environ: Mapping[str, str] | None = None, *, given: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """Each setting read from ``environ`` (``os.environ`` by default) with the name it is
    spelled by there (``{"db": "recalld_db"}``): the settings read their variables
    whatever the case. A :class:`ValidationError` naming both when one setting is set by
    two spellings to different values (``RECALLD_DB`` and ``recalld_db``); the settings
    in ``given`` (passed in, not read) are not looked at."""
    from recalld.errors import ValidationError

    environment = os.environ if environ is None else environ
    fields = {f"RECALLD_{name.upper()}": name for name in Settings.model_fields}
    spelled: dict[str, str] = {}
    for name in sorted(environment):
        field = fields.get(name.upper())
        if field is None or field in (given or {}):
            continue
        other = spelled.setdefault(field, name)
        if other != name and environment[other] != environment[name]:
            raise ValidationError(
                f"{other} and {name}",
                "are both set, to different values, and name one setting whatever"
                " their case: unset one",
            )
    return spelled


def refuse_unknown_settings(
    given: Mapping[str, Any], settings_cls: type[BaseSettings] | None = None
) -> None:
    """A :class:`ValidationError` naming the first of ``given`` that is no setting (of
    ``settings_cls``, :class:`Settings` by default: a subclass's own fields are settings
    too), with the closest one: ``Settings(embeder="none")`` otherwise built the default
    settings without a word (an unknown variable is only warned of: the environment holds
    other programs' names too, but a name passed in code was meant for recalld)."""
    from recalld.errors import ValidationError

    fields = (settings_cls or Settings).model_fields
    for name in sorted(given):
        if name in fields:
            continue
        close = difflib.get_close_matches(str(name), sorted(fields), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ValidationError(str(name), f"is not a setting (see recalld.Settings){hint}")


# The lines unknown_variables(once=True) already gave in this process.
_reported: set[str] = set()


def unknown_variables(environ: Mapping[str, str] | None = None, *, once: bool = False) -> list[str]:
    """One line for each ``RECALLD_*`` variable in ``environ`` (``os.environ`` by default)
    that no setting reads, naming the closest one: a typo (``RECALLD_NAMESPCE``) would
    otherwise leave the default in force without a word. The names are compared as the
    settings read them, whatever their case. ``once``: only lines not given before in
    this process (a program opening memories again and again is told once)."""
    known = {f"RECALLD_{name.upper()}" for name in Settings.model_fields} | INSTALL_VARIABLES
    lines = []
    for name in sorted(os.environ if environ is None else environ):
        upper = name.upper()
        if not upper.startswith("RECALLD_") or upper in known:
            continue
        # By what follows the prefix, which every name shares.
        suffixes = sorted(known_name.removeprefix("RECALLD_") for known_name in known)
        close = difflib.get_close_matches(upper.removeprefix("RECALLD_"), suffixes, n=1)
        hint = f" (did you mean RECALLD_{close[0]}?)" if close else ""
        lines.append(f"{name} is not a recalld setting and is ignored{hint}")
    if once:
        lines = [line for line in lines if line not in _reported]
        _reported.update(lines)
    return lines
