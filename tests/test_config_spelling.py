"""The settings read their variables whatever the case (``recalld_db`` is ``RECALLD_DB``):
two spellings set to different values are refused naming both (one was used, which
depended on the environment's order), and an error names the variable as it is spelled
(adversarial pass e63)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import recalld
from recalld.adapters.cli import cli
from recalld.config import Settings, spelled_variables
from recalld.errors import ValidationError


def test_a_lower_case_variable_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("recalld_namespace", "lower")
    assert Settings(db=tmp_path / "x.db").namespace == "lower"
    assert spelled_variables() == {"namespace": "recalld_namespace"}


@pytest.mark.parametrize("other", ["recalld_db", "Recalld_Db"])
def test_two_spellings_of_one_setting_with_different_values_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, other: str
) -> None:
    monkeypatch.setenv("RECALLD_DB", str(tmp_path / "upper.db"))
    monkeypatch.setenv(other, str(tmp_path / "lower.db"))
    with pytest.raises(ValidationError) as caught:
        Settings()
    assert caught.value.field == f"RECALLD_DB and {other}"
    assert "different values" in caught.value.message
    with pytest.raises(ValidationError):
        recalld.open()
    refused = CliRunner().invoke(cli, ["remember", "x"])
    assert isinstance(refused.exception, ValidationError)
    assert refused.exception.field == f"RECALLD_DB and {other}"
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # no database made


def test_two_spellings_given_in_full_or_with_the_same_value_are_fine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RECALLD_DB", str(tmp_path / "same.db"))
    monkeypatch.setenv("recalld_db", str(tmp_path / "same.db"))
    assert Settings().db == tmp_path / "same.db"
    monkeypatch.setenv("recalld_db", str(tmp_path / "other.db"))
    assert Settings(db=tmp_path / "given.db").db == tmp_path / "given.db"  # not read


def test_cli_names_a_lower_case_variable_as_spelled(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("recalld_db", " ")
    refused = CliRunner().invoke(cli, ["remember", "x"])
    assert isinstance(refused.exception, ValidationError)
    assert (refused.exception.field, refused.exception.message) == (
        "recalld_db",
        "is empty; give a database file or a postgresql:// URL",
    )
    monkeypatch.setenv("recalld_db", str(tmp_path / "x.db"))
    monkeypatch.setenv("recalld_max_limit", "lots")
    refused = CliRunner().invoke(cli, ["list"])
    assert isinstance(refused.exception, ValidationError)
    assert refused.exception.field == "recalld_max_limit"


def test_a_setting_built_in_code_with_an_unknown_name_is_refused(tmp_path: Path) -> None:
    # Settings(embeder="none") built the default settings without a word (extra="ignore"),
    # so the default embedder (the model) was used; recalld.open refused it, Settings did
    # not (adversarial pass a66).
    with pytest.raises(ValidationError, match=r"did you mean embedder\?") as refused:
        Settings(db=tmp_path / "x.db", embeder="none")  # type: ignore[call-arg]
    assert refused.value.field == "embeder"
    assert Settings(db=tmp_path / "x.db", embedder="none").embedder == "none"


@pytest.mark.parametrize("database", ["memories\x00.db", "postgresql://host/db\x00name"])
def test_a_database_location_holding_nul_is_refused_naming_db(database: str) -> None:
    # recalld.open("memories\x00.db") failed with a bare "ValueError: embedded null byte"
    # from the file check, naming no field (adversarial pass a66).
    with pytest.raises(ValidationError, match="NUL") as refused:
        recalld.open(database)
    assert refused.value.field == "db"


def test_a_subclass_of_settings_takes_its_own_fields(tmp_path: Path) -> None:
    # The refusal of unknown names looked at Settings' fields only: a subclass adding its
    # own (an application's settings beside recalld's) had them refused (review of pass
    # a66).
    class Extended(Settings):
        label: str = "default"

    assert Extended(db=tmp_path / "x.db", label="mine").label == "mine"
    with pytest.raises(ValidationError, match=r"did you mean label\?"):
        Extended(db=tmp_path / "x.db", labl="mine")  # type: ignore[call-arg]


def test_recalld_open_names_the_closest_setting_as_settings_does(tmp_path: Path) -> None:
    # recalld.open kept its own check of unknown names, older than Settings', which named
    # no closest setting: the README says both name it (integration read, stop 66).
    with pytest.raises(ValidationError, match=r"did you mean embedder\?") as refused:
        recalld.open(tmp_path / "x.db", embeder="none")
    assert refused.value.field == "embeder"
    assert not (tmp_path / "x.db").exists()
