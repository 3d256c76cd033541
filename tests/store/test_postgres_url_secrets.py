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


def test_the_cli_refuses_it_in_one_line_without_the_password() -> None:
    environment = {**os.environ, "RECALLD_DB": MALFORMED[0]}
    result = subprocess.run(
        [sys.executable, "-m", "recalld", "stats"],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "not a valid PostgreSQL URL" in result.stderr
    assert "s3cret" not in result.stderr + result.stdout
