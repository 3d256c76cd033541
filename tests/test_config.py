"""Settings refuse combinations that cannot both hold."""

from __future__ import annotations

import pydantic
import pytest

from recalld.adapters._cli_support import load_settings
from recalld.config import Settings
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
    with pytest.raises(pydantic.ValidationError, match="postgres_pool_max"):
        Settings(postgres_pool_min=5, postgres_pool_max=2)
