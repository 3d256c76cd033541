"""``Settings`` built and changed in code is checked as the environment is: an assignment
after construction, a value that does not fit, one setting named twice (adversarial pass
a67, stop 66's leftovers)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from recalld import RecalldError, Settings, ValidationError
from recalld.config import InvalidSettingsError


def test_an_assignment_that_does_not_fit_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    settings = Settings(db=tmp_path / "m.db")
    with pytest.raises(ValidationError) as wrong_type:
        settings.db = 5  # type: ignore[assignment]
    assert wrong_type.value.field == "db"
    with pytest.raises(ValidationError, match="less than or equal to 1") as too_high:
        settings.min_score = 7
    assert too_high.value.field == "min_score"
    assert (settings.db, settings.min_score) == (tmp_path / "m.db", 0.02)
    settings.min_score = 0.5
    assert settings.min_score == 0.5


def test_an_assignment_to_a_name_that_is_no_setting_names_the_closest() -> None:
    settings = Settings()
    with pytest.raises(ValidationError, match="did you mean min_score") as refused:
        settings.min_scor = 0.5  # type: ignore[attr-defined]
    assert refused.value.field == "min_scor"


def test_a_value_given_to_the_constructor_that_does_not_fit_is_recallds_error() -> None:
    # It was pydantic's ValidationError, under no RecalldError.
    with pytest.raises(RecalldError) as refused:
        Settings(busy_timeout_ms="x")  # type: ignore[arg-type]
    assert isinstance(refused.value, ValidationError)
    # Still a ValueError, as pydantic's was: code that caught that keeps catching it.
    assert isinstance(refused.value, ValueError)
    assert refused.value.field == "busy_timeout_ms"
    assert "valid integer" in refused.value.message
    copied = pickle.loads(pickle.dumps(refused.value))
    assert (copied.field, str(copied)) == ("busy_timeout_ms", str(refused.value))


def test_one_setting_given_twice_in_two_spellings_is_refused_naming_both(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="name one setting") as refused:
        Settings(db=tmp_path / "a.db", DB=tmp_path / "b.db")  # type: ignore[call-arg]
    assert refused.value.field == "db and DB"
    assert Settings(DB=tmp_path / "b.db").db == tmp_path / "b.db"  # type: ignore[call-arg]


def test_an_assignment_is_compared_with_the_settings_it_must_agree_with() -> None:
    settings = Settings(postgres_pool_min=1, postgres_pool_max=2)
    with pytest.raises(ValidationError, match="at least the minimum") as refused:
        settings.postgres_pool_min = 5
    assert refused.value.field == "postgres_pool_min"
    assert (settings.postgres_pool_min, settings.postgres_pool_max) == (1, 2)
    settings.postgres_pool_max = 10
    settings.postgres_pool_min = 5
    assert (settings.postgres_pool_min, settings.postgres_pool_max) == (5, 10)


def test_a_variable_the_settings_cannot_read_is_recallds_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # pydantic-settings' SettingsError (a bare ValueError) escaped Settings() and open().
    monkeypatch.setenv("RECALLD_CORS_ORIGINS", "not json")
    with pytest.raises(ValidationError, match="is not valid JSON") as refused:
        Settings()
    assert refused.value.field == "cors_origins"


# Each rule that compares two settings (the validators reading info.data), assigned from
# either side: (settings built, the setting assigned, its value, what the refusal says).
COMPARED = [
    ({"postgres_pool_min": 3, "postgres_pool_max": 5}, "postgres_pool_max", 2, "minimum"),
    ({"postgres_pool_min": 3, "postgres_pool_max": 5}, "postgres_pool_min", 6, "minimum"),
    ({"embedder": "hashing", "embedder_dimension": 16}, "embedder_dimension", 4, "at least 8"),
    ({"embedder": "none", "embedder_dimension": 4}, "embedder", "hashing", "below 8"),
    ({"embedder_url": "http://u:p@h/"}, "embedder_api_key", "sk-secret", "one of them"),
    ({"embedder_api_key": "sk-secret"}, "embedder_url", "http://u:pw@h/", "one of them"),
]


@pytest.mark.parametrize(("built", "name", "value", "says"), COMPARED)
def test_every_rule_comparing_two_settings_holds_on_assignment(
    built: dict[str, object], name: str, value: object, says: str
) -> None:
    # Review of pass a67: each rule, from either side, refused naming the setting
    # assigned, which keeps its value and is not counted as given.
    settings = Settings(**built)  # type: ignore[arg-type]
    before = getattr(settings, name)
    with pytest.raises(ValidationError, match=says) as refused:
        setattr(settings, name, value)
    assert refused.value.field == name
    assert getattr(settings, name) == before
    assert settings.model_fields_set == set(built)


def test_a_refused_secret_setting_is_not_kept_in_the_error() -> None:
    # Review of pass a67: the error's problems held the key and the URL's password given,
    # and pickled them.
    with pytest.raises(ValidationError) as built:
        Settings(embedder_url="http://u:pw@h/", embedder_api_key="sk-secret")  # type: ignore[arg-type]
    settings = Settings(embedder_api_key="sk-secret")  # type: ignore[arg-type]
    with pytest.raises(ValidationError) as assigned:
        settings.embedder_url = "http://u:hunter2@h/"
    with pytest.raises(ValidationError) as located:
        Settings(db="postgresql://u:hunter2@h/db\x00")
    for refused in (built, assigned, located):
        kept = pickle.dumps(refused.value)
        assert b"sk-secret" not in kept
        assert b"hunter2" not in kept
        assert [given for *_, given in refused.value.problems] == ["**********"]  # type: ignore[attr-defined]


def test_a_copy_with_a_setting_that_does_not_fit_is_refused_and_changes_nothing(
    tmp_path: Path,
) -> None:
    # Stop 67's leftover (adversarial pass c68): pydantic's model_copy(update=...) took
    # any value and any name as given, past the checks an assignment gets.
    settings = Settings(db=tmp_path / "m.db")
    with pytest.raises(ValidationError, match="less than or equal to 1") as too_high:
        settings.model_copy(update={"min_score": 7})
    assert too_high.value.field == "min_score"
    with pytest.raises(ValidationError, match="did you mean min_score") as unknown:
        settings.model_copy(update={"min_scor": 0.5})
    assert unknown.value.field == "min_scor"
    with pytest.raises(ValidationError) as wrong_type:
        settings.model_copy(update={"db": 5})
    assert wrong_type.value.field == "db"
    with pytest.raises(ValidationError, match="the maximum must be at least the minimum"):
        settings.model_copy(update={"postgres_pool_min": 50})
    assert (settings.min_score, settings.postgres_pool_min) == (0.02, 1)


def test_a_copy_changing_two_settings_that_agree_together_is_taken(tmp_path: Path) -> None:
    # Compared once every change is in: a pool raised from 1-10 to 20-30 passes through
    # no state with the minimum above the maximum.
    settings = Settings(db=tmp_path / "m.db")
    copied = settings.model_copy(update={"postgres_pool_min": 20, "postgres_pool_max": 30})
    assert (copied.postgres_pool_min, copied.postgres_pool_max) == (20, 30)
    assert {"postgres_pool_min", "postgres_pool_max"} <= copied.model_fields_set
    assert copied.model_copy(update={"db": str(tmp_path / "n.db")}).db == tmp_path / "n.db"
    assert (settings.postgres_pool_min, settings.postgres_pool_max) == (1, 10)


def test_a_copy_refused_for_two_settings_keeps_a_key_out_of_the_error(tmp_path: Path) -> None:
    settings = Settings(db=tmp_path / "m.db", embedder_url="https://user:pw@example.com/v1")
    with pytest.raises(InvalidSettingsError, match="one of them") as refused:
        settings.model_copy(update={"embedder_api_key": "sk-secret"})
    assert refused.value.field == "embedder_api_key"
    assert "sk-secret" not in repr(refused.value.problems)
