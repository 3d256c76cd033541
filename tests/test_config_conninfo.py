"""A libpq ``key=value`` connection string given as the database is refused, without
repeating it (adversarial pass b64).

``RECALLD_DB='host=db port=5432 user=app password=… dbname=recalld'`` (the form psql and
psycopg take) was read as a file name: recalld created a new SQLite database of that name
in the working directory, printed it (the password with it) as "created a new database
at …", and kept every memory there instead of in PostgreSQL."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from recalld._location import is_conninfo
from recalld.adapters._cli_support import load_settings
from recalld.adapters.cli import cli
from recalld.errors import ValidationError

SECRET = "s3cret-Pa55"
CONNINFO = f"host=127.0.0.1 port=5432 user=recalld password={SECRET} dbname=recalld"


def test_a_connection_string_in_recalld_db_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECALLD_DB", CONNINFO)
    with pytest.raises(ValidationError) as caught:
        load_settings({}, {})
    assert caught.value.field == "RECALLD_DB"
    assert "postgresql://" in caught.value.message
    assert SECRET not in str(caught.value)


def test_a_connection_string_given_to_the_cli_creates_no_file_and_shows_no_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RECALLD_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(cli, ["--db", CONNINFO, "stats"])
    assert result.exit_code != 0
    said = f"{result.output}{result.exception}"
    assert "--db: is a key=value connection string" in said, said
    assert SECRET not in said
    assert os.listdir(tmp_path) in ([], ["home"]), os.listdir(tmp_path)


@pytest.mark.parametrize(
    "path", ["recalld.db", "data/run=1.db", "/srv/user=bob/recalld.db", "hosts.db"]
)
def test_a_file_name_with_an_equals_sign_is_still_a_file(path: str) -> None:
    assert not is_conninfo(path)


@pytest.mark.parametrize("value", [CONNINFO, "dbname = recalld", "  service=prod", "HOST=db"])
def test_what_is_a_connection_string(value: str) -> None:
    assert is_conninfo(value)


@pytest.mark.parametrize("option", ["--to", "--from"])
def test_a_connection_string_given_to_migrate_copies_nothing_and_shows_no_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    # `recalld migrate --to 'host=… password=…'` copied every memory into a new SQLite
    # file named after the string and printed "copied … into host=… password=…"
    # (review of pass b64).
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RECALLD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RECALLD_EMBEDDER", "none")
    runner = CliRunner()
    assert runner.invoke(cli, ["--db", "source.db", "remember", "a memory"]).exit_code == 0
    before = sorted(os.listdir(tmp_path))
    other = ["--to", "target.db"] if option == "--from" else []
    result = runner.invoke(cli, ["--db", "source.db", "migrate", option, CONNINFO, *other])
    assert result.exit_code != 0
    said = f"{result.output}{result.exception}"
    assert f"{option.removeprefix('--')}: is a key=value connection string" in said, said
    assert SECRET not in said
    assert sorted(os.listdir(tmp_path)) == before


def test_a_file_named_like_a_connection_string_is_opened_through_its_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A SQLite file literally named `user=me.db` was refused with no way named to open
    # it; `./user=me.db` is a path and opens it (adversarial pass d65).
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RECALLD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RECALLD_EMBEDDER", "none")
    runner = CliRunner()
    refused = runner.invoke(cli, ["--db", "user=me.db", "remember", "a memory"])
    assert refused.exit_code != 0
    said = f"{refused.output}{refused.exception}"
    assert "./user=me.db" in said, said
    assert not (tmp_path / "user=me.db").exists()
    written = runner.invoke(cli, ["--db", "./user=me.db", "remember", "a memory"])
    assert written.exit_code == 0, written.output
    assert (tmp_path / "user=me.db").is_file()
