"""A PostgreSQL URL that does not parse is refused without its password: psycopg's error
quotes the part it choked on, which may be the password itself (no server needed)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from recalld.errors import ValidationError
from recalld.store.postgres_connection import parse_url

MALFORMED = [
    "postgresql://bob:s3cret pw@db.example/memory",  # a space, unencoded
    "postgresql://bob:s3cret%zz@db.example/memory",  # a bad percent escape
    "postgresql://bob@db.example/memory?password=s3cret pw",  # in the query
    "postgres://bob:s3cret%20and pw@db.example/memory",  # encoded and not
]


@pytest.mark.parametrize("url", MALFORMED)
def test_a_malformed_url_is_refused_without_its_password(url: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_url(url)
    assert caught.value.field == "db"
    assert "s3cret" not in str(caught.value)
    assert "***" in str(caught.value)


def _stats(url: str) -> subprocess.CompletedProcess[str]:
    """``recalld stats`` run with ``RECALLD_DB=url``."""
    return subprocess.run(
        [sys.executable, "-m", "recalld", "stats"],
        env={**os.environ, "RECALLD_DB": url},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_cli_refuses_it_in_one_line_without_the_password() -> None:
    result = _stats(MALFORMED[0])
    assert result.returncode == 1
    assert "not a valid PostgreSQL URL" in result.stderr
    assert "s3cret" not in result.stderr + result.stdout


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://bob:s3c/ret@db.example/memory",  # "/" ends urlsplit's authority
        "postgresql://bob:s3c?ret@db.example/memory",  # "?" too (libpq connects with it)
        "postgresql://bob:s3c#ret@db.example/memory",  # and "#"
        "postgresql://bob:s3c@ret@db.example/memory",  # "@": libpq's host is "ret@db..."
    ],
)
def test_a_password_with_an_unencoded_delimiter_is_never_shown(url: str) -> None:
    from recalld._location import redact_url

    shown = redact_url(url)
    assert "s3c" not in shown
    assert "ret" not in shown
    assert shown.startswith("postgresql://bob:***@")


def test_the_part_of_a_password_libpq_takes_for_the_host_is_not_shown() -> None:
    from recalld.store.postgres_connection import _scrub

    # libpq reads "bob:s3c@ret@db.example" as password "s3c" at host "ret@db.example".
    url = "postgresql://bob:s3c@ret@db.example/memory"
    said = _scrub('failed to resolve host "ret@db.example": Name or service not known', url)
    assert said == 'failed to resolve host "***db.example": Name or service not known'


def test_a_database_name_with_an_at_sign_is_still_shown() -> None:
    from recalld._location import redact_url

    assert redact_url("postgresql://bob:pw@db.example/my@db") == (
        "postgresql://bob:***@db.example/my@db"
    )


def test_the_cli_never_shows_a_password_holding_a_slash() -> None:
    # libpq reads "bob:s3c" as host and port: refused at once, no network needed.
    result = _stats("postgresql://bob:s3c/ret@127.0.0.1:1/memory")
    assert result.returncode == 1
    assert "postgresql://bob:***@127.0.0.1:1/memory" in result.stderr
    assert "s3c" not in result.stderr + result.stdout
