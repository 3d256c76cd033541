"""Settings refuse combinations that cannot both hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from recalld import MemoryService
from recalld.adapters._cli_support import load_settings
from recalld.config import (
    MAX_COUNT,
    MAX_DURATION_SECONDS,
    MAX_EMBEDDER_DIMENSION,
    MAX_EMBEDDER_THREADS,
    MAX_POOL_CONNECTIONS,
    MAX_TIMEOUT_MS,
    Settings,
)
from recalld.errors import ValidationError


def test_config_pool_maximum_below_minimum_is_one_line_naming_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECALLD_POSTGRES_POOL_MIN", "5")
    monkeypatch.setenv("RECALLD_POSTGRES_POOL_MAX", "2")
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == "RECALLD_POSTGRES_POOL_MAX"
    assert caught.value.message.startswith("is below RECALLD_POSTGRES_POOL_MIN (5)")
    assert caught.value.message.endswith("(got '2')")
    assert "\n" not in str(caught.value)


def test_config_pool_bounds_may_meet() -> None:
    assert Settings(postgres_pool_min=3, postgres_pool_max=3).postgres_pool_max == 3
    assert Settings(postgres_pool_min=0, postgres_pool_max=1).postgres_pool_max == 1
    with pytest.raises(ValidationError, match="postgres_pool_max"):
        Settings(postgres_pool_min=5, postgres_pool_max=2)


@pytest.mark.parametrize(
    "variable",
    [
        "RECALLD_HABITUATION_SECONDS",
        "RECALLD_INTENTION_WINDOW_MINUTES",
        "RECALLD_INTENTION_READING_GAP_SECONDS",
        "RECALLD_INTENTION_MIN_RECURRENCE_SECONDS",
        # An infinite scrub wait made every forget fail after it deleted (OverflowError),
        # an infinite lease every job claim; the others are waits and timeouts alike.
        "RECALLD_SCRUB_WAIT_SECONDS",
        "RECALLD_WORKER_LEASE_SECONDS",
        "RECALLD_LOCK_RETRY_SECONDS",
        "RECALLD_POSTGRES_CONNECT_TIMEOUT_SECONDS",
        "RECALLD_PURGE_INTERVAL_SECONDS",
        "RECALLD_SCRUB_POLL_SECONDS",
        "RECALLD_INTENTION_MIN_INTERVAL_SECONDS",
        "RECALLD_SCHEDULER_POLL_SECONDS",
        "RECALLD_EMBEDDER_TIMEOUT_SECONDS",
        "RECALLD_WORKER_RETRY_SECONDS",
        "RECALLD_WORKER_RETRY_MAX_SECONDS",
        "RECALLD_WORKER_POLL_SECONDS",
    ],
)
@pytest.mark.parametrize("value", ["1e12", "inf"])
def test_config_durations_past_the_calendar_are_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    # Accepted, each made every sense (or every reminder) fail with an OverflowError: a
    # date that far from now is past the calendar's end ("never again" is its limit).
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == variable
    assert "less than or equal to" in caught.value.message


def test_config_durations_at_their_limit_still_compute_a_date() -> None:
    settings = Settings(
        habituation_seconds=MAX_DURATION_SECONDS,
        intention_reading_gap_seconds=MAX_DURATION_SECONDS,
        intention_min_recurrence_seconds=MAX_DURATION_SECONDS,
        intention_window_minutes=MAX_DURATION_SECONDS / 60,
    )
    now = datetime(2026, 11, 5, tzinfo=UTC)
    assert now - timedelta(seconds=settings.habituation_seconds) < now
    assert now + timedelta(minutes=settings.intention_window_minutes) > now


def test_config_busy_timeout_past_sqlites_int_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Accepted, it made every open fail: SQLite's busy timeout is a 32-bit int.
    monkeypatch.setenv("RECALLD_BUSY_TIMEOUT_MS", str(MAX_TIMEOUT_MS + 1))
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == "RECALLD_BUSY_TIMEOUT_MS"
    assert "less than or equal to" in caught.value.message


def test_config_waits_and_leases_at_their_limit_still_work(db_path: Path) -> None:
    # At their limits a job's lease is still a date and the busy timeout and a forget's
    # scrub wait still timeouts: the memory is embedded and forgotten, its scrub done.
    settings = Settings(
        db=db_path,
        synchronous="NORMAL",
        embedder="hashing",
        graph_extractor="none",
        busy_timeout_ms=MAX_TIMEOUT_MS,
        worker_lease_seconds=MAX_DURATION_SECONDS,
        scrub_wait_seconds=MAX_TIMEOUT_MS // 1000,
    )
    with MemoryService.open(settings) as service:
        receipt = service.remember("the spare key is under the blue pot")
        assert service.new_worker().run_until_idle().processed == 1
        assert service.forget(receipt.id).scrub == "done"
        assert service.search("spare key", min_score=0) == []


# Every integer setting that had no upper bound: past SQLite's 64-bit integers each made
# the recall, listing, worker batch or graph page that binds it fail with an OverflowError
# traceback (RECALLD_RECALL_CATCH_UP=1e20-as-digits broke every recall).
COUNT_VARIABLES = [
    "RECALLD_RESERVE_BYTES",
    "RECALLD_MAX_CONTENT_BYTES",
    "RECALLD_MAX_TAGS",
    "RECALLD_MAX_TAG_CHARS",
    "RECALLD_MAX_META_BYTES",
    "RECALLD_MAX_LIMIT",
    "RECALLD_MAX_QUERY_TERMS",
    "RECALLD_CORE_USER_CHARS",
    "RECALLD_CORE_MEMORY_CHARS",
    "RECALLD_MAX_BODY_BYTES",
    "RECALLD_MAX_IMPORT_BYTES",
    "RECALLD_WORKER_BATCH_SIZE",
    "RECALLD_RECALL_CATCH_UP",
    "RECALLD_WORKER_MAX_ATTEMPTS",
    "RECALLD_VECTOR_ANN_THRESHOLD",
    "RECALLD_GRAPH_BATCH_SIZE",
    "RECALLD_GRAPH_SEED_LIMIT",
    "RECALLD_GRAPH_FANOUT",
    "RECALLD_GRAPH_PAGE_SIZE",
]


@pytest.mark.parametrize("variable", COUNT_VARIABLES)
def test_config_counts_past_their_limit_are_refused_naming_the_variable_and_limit(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, str(2**64))
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == variable
    assert f"less than or equal to {MAX_COUNT}" in caught.value.message


def test_config_counts_at_their_limit_still_work(db_path: Path) -> None:
    # At MAX_COUNT every count still binds: a write, its embedding, a recall that catches
    # up first, a page and the graph's listing all answer (limit + 1 still fits).
    counts: dict[str, Any] = {
        variable.removeprefix("RECALLD_").lower(): MAX_COUNT for variable in COUNT_VARIABLES
    }
    counts.pop("reserve_bytes")  # a file of that size beside the database
    settings = Settings(
        db=db_path,
        synchronous="NORMAL",
        embedder="hashing",
        graph_extractor="rules",
        graph_recall=True,
        **counts,
    )
    with MemoryService.open(settings) as service:
        receipt = service.remember("Alice keeps the spare key under the blue pot")
        hits = service.recall("spare key", min_score=0, limit=MAX_COUNT)
        assert [hit.memory.id for hit in hits] == [receipt.id]
        assert [memory.id for memory in service.list_memories(limit=MAX_COUNT).memories] == [
            receipt.id
        ]
        assert service.new_worker().run_until_idle().failed_attempts == 0
        assert service.knowledge.read_graph().entities != []
        assert service.graph.entities().entities != []


@pytest.mark.parametrize(
    ("variable", "limit"),
    [
        ("RECALLD_EMBEDDER_THREADS", MAX_EMBEDDER_THREADS),
        ("RECALLD_EMBEDDER_DIMENSION", MAX_EMBEDDER_DIMENSION),
        ("RECALLD_POSTGRES_POOL_MIN", MAX_POOL_CONNECTIONS),
        ("RECALLD_POSTGRES_POOL_MAX", MAX_POOL_CONNECTIONS),
    ],
)
def test_config_sizes_past_their_own_limit_are_refused_at_startup(
    monkeypatch: pytest.MonkeyPatch, variable: str, limit: int
) -> None:
    # Accepted up to 2147483647 before: 100,000 onnxruntime threads hung the first recall
    # for minutes, a hashing vector of that length made every write allocate 8 GB, and a
    # pool kept at more connections than PostgreSQL allows retried its connects for ever.
    monkeypatch.setenv("RECALLD_POSTGRES_POOL_MAX", str(MAX_POOL_CONNECTIONS))
    monkeypatch.setenv(variable, str(limit + 1))
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == variable
    assert f"less than or equal to {limit}" in caught.value.message
    monkeypatch.setenv(variable, str(limit))
    assert load_settings({}, {}).model_dump()[variable.removeprefix("RECALLD_").lower()] == limit


def test_config_a_hashing_dimension_under_8_is_refused_at_startup_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Accepted before, then every command failed with a ValueError traceback from the
    # embedder; another embedder takes any positive dimension.
    monkeypatch.setenv("RECALLD_EMBEDDER", "hashing")
    monkeypatch.setenv("RECALLD_EMBEDDER_DIMENSION", "7")
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == "RECALLD_EMBEDDER_DIMENSION"
    assert "at least 8 for the hashing embedder" in caught.value.message
    monkeypatch.setenv("RECALLD_EMBEDDER_DIMENSION", "8")
    assert load_settings({}, {}).embedder_dimension == 8
    monkeypatch.setenv("RECALLD_EMBEDDER", "http")
    monkeypatch.setenv("RECALLD_EMBEDDER_DIMENSION", "7")
    assert load_settings({}, {}).embedder_dimension == 7


def test_config_embedder_dimension_at_its_limit_still_works(db_path: Path) -> None:
    settings = Settings(
        db=db_path,
        synchronous="NORMAL",
        embedder="hashing",
        embedder_dimension=MAX_EMBEDDER_DIMENSION,
        graph_extractor="rules",
    )
    with MemoryService.open(settings) as service:
        receipt = service.remember("Alice keeps the spare key under the blue pot")
        assert service.new_worker().run_until_idle().failed_attempts == 0
        hits = service.recall("spare key", mode="vector", min_score=0)
        assert [hit.memory.id for hit in hits] == [receipt.id]


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("RECALLD_NAMESPACE", "a b", "must be 1-100 letters, digits"),
        ("RECALLD_NAMESPACE", "", "must be 1-100 letters, digits"),
        ("RECALLD_ZONE", "Mars/Olympus", "unknown time zone 'Mars/Olympus'"),
        ("RECALLD_ZONE", "+25:00", "out of range (under 24 hours)"),
        ("RECALLD_REMINDER_DEFAULT_TIME", "25:99", "expected HH:MM"),
        # An offset would be ignored (the time is read on the reminder's clock), and the
        # ISO forms fromisoformat takes are no HH:MM either.
        ("RECALLD_REMINDER_DEFAULT_TIME", "09:00+02:00", "expected HH:MM"),
        ("RECALLD_REMINDER_DEFAULT_TIME", "T09:00", "expected HH:MM"),
        ("RECALLD_REMINDER_DEFAULT_TIME", "09:00:30.5", "expected HH:MM"),
    ],
)
def test_config_text_settings_that_do_not_parse_are_refused_at_startup_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, says: str
) -> None:
    # Accepted, each was refused only where it was first used: `recalld stats` answered,
    # a server started and then refused every request (the namespace named only as
    # "namespace", not as the variable to fix).
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == variable
    assert says in caught.value.message


def test_config_text_settings_that_parse_are_kept_as_given() -> None:
    settings = Settings(namespace="münchen", zone="+05:30", reminder_default_time="07:30")
    assert (settings.namespace, settings.zone, settings.reminder_default_time) == (
        "münchen",
        "+05:30",
        "07:30",
    )
    assert Settings(zone="Europe/Paris").zone == "Europe/Paris"


def test_config_database_path_that_is_not_utf8_is_refused_naming_the_option(
    tmp_path: Path,
) -> None:
    # A Latin-1 name in a UTF-8 shell arrives as a surrogate escape: SQLite takes UTF-8
    # names only, and every command failed with a UnicodeEncodeError traceback.
    path = str(tmp_path) + "/caf\udce9.db"
    with pytest.raises(ValidationError) as caught:
        load_settings({"db": path}, {"db": "--db"})
    assert caught.value.field == "--db"
    assert "0xe9" in caught.value.message
    assert not any(tmp_path.iterdir())
    # A PostgreSQL URL too: psycopg raised UnicodeEncodeError from its parser (review 56b).
    with pytest.raises(ValidationError) as caught:
        load_settings({"db": "postgresql://u:p\udce9@127.0.0.1:1/db"}, {"db": "--db"})
    assert (caught.value.field, "0xe9" in caught.value.message) == ("--db", True)


@pytest.mark.parametrize("variable", ["RECALLD_PLACE_NEAR_M", "RECALLD_PLACE_SCALE_M"])
def test_config_infinite_place_distances_are_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    # Accepted, inf made every place the same place (every distance equally near).
    monkeypatch.setenv(variable, "inf")
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == variable
    assert "finite number" in caught.value.message


def test_config_a_mistyped_variable_is_warned_about_naming_the_closest_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from recalld.adapters.cli import cli

    monkeypatch.setenv("RECALLD_NAMESPCE", "work")
    monkeypatch.setenv("RECALLD_HOME", str(tmp_path))  # make install's, not a mistake
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "typo.db"), "stats", "--json"])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: RECALLD_NAMESPCE is not a recalld setting and is ignored"
        " (did you mean RECALLD_NAMESPACE?)"
    ]


def test_config_every_setting_and_install_variable_is_known() -> None:
    from recalld.config import unknown_variables

    known = {f"RECALLD_{name.upper()}": "1" for name in Settings.model_fields}
    known |= {"RECALLD_HOME": "x", "RECALLD_BIN_DIR": "x", "RECALLD_EXTRAS": "x"}
    assert unknown_variables(known) == []
    assert unknown_variables({"recalld_fts": "false", "RECALLD_NOPE": "1"}) == [
        "RECALLD_NOPE is not a recalld setting and is ignored"
    ]


@pytest.mark.parametrize(
    "variable",
    [
        "RECALLD_CACHE_DIR",
        "RECALLD_EMBEDDER_MODEL_PATH",
        "RECALLD_EMBEDDER_TOKENIZER_PATH",
        "RECALLD_EMBEDDER_URL",
        "RECALLD_EMBEDDER_MODEL",
        "RECALLD_IMAGE_ENCODER",
        "RECALLD_HOST",
    ],
)
@pytest.mark.parametrize("value", ["", "  "])
def test_config_an_empty_value_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    # Empty was not "unset": RECALLD_CACHE_DIR= was ".", the 58 MB derived model written
    # wherever recalld ran; RECALLD_EMBEDDER_URL= failed the first write with a traceback.
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == variable
    assert "is empty" in caught.value.message


def test_config_an_empty_embedder_key_still_means_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALLD_EMBEDDER_API_KEY", "")
    assert load_settings({}, {}).embedder_api_key is not None  # as before: sent as no key


@pytest.mark.parametrize("url", ["localhost:8080/v1", "ftp://embed.example/v1"])
def test_config_an_embedder_url_that_is_not_http_is_refused_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("RECALLD_EMBEDDER_URL", url.replace("//", "//bob:s3cret@"))
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == "RECALLD_EMBEDDER_URL"
    assert "http:// or https://" in caught.value.message
    assert "s3cret" not in str(caught.value)


def test_config_printed_settings_never_show_the_postgres_password(tmp_path: Path) -> None:
    url = "postgresql://recalld:pw5ecret@db.example/memory?sslpassword=k3y"
    settings = Settings(db=url, embedder_api_key=SecretStr("sk-s3cret"))
    for shown in (repr(settings), str(settings)):
        assert "pw5ecret" not in shown
        assert "k3y" not in shown
        assert "sk-s3cret" not in shown
        assert "postgresql://recalld:***@db.example/memory" in shown
    assert settings.db == url  # only what is shown is masked
    assert f"db={tmp_path / 'a.db'!r}" in repr(Settings(db=tmp_path / "a.db"))


def test_config_a_huge_refused_value_is_not_repeated_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECALLD_MIN_SCORE", "9" * 100_000)
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == "RECALLD_MIN_SCORE"
    assert "(100000 characters)" in caught.value.message
    assert len(str(caught.value)) < 300


def test_config_the_library_names_a_mistyped_variable_once_a_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import recalld

    # A name no other test sets: the warning is given once in the whole process.
    monkeypatch.setenv("RECALLD_NAMESPCE_ONCE", "work")
    with caplog.at_level("WARNING", logger="recalld"):
        for _ in range(3):  # a program opening its memories for every request
            with recalld.open(tmp_path / "lib.db", embedder="none"):
                pass
    assert [
        record.getMessage()
        for record in caplog.records
        if "RECALLD_NAMESPCE_ONCE" in record.getMessage()
    ] == [
        "RECALLD_NAMESPCE_ONCE is not a recalld setting and is ignored"
        " (did you mean RECALLD_NAMESPACE?)"
    ]
