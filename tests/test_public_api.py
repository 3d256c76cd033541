"""The public surface is pinned: changing it is a deliberate act."""

from __future__ import annotations

from pathlib import Path

import pytest

import recalld


def test_public_api_all_is_pinned() -> None:
    assert sorted(recalld.__all__) == [
        "ConflictError",
        "DiskFullError",
        "EmbeddingError",
        "Explanation",
        "Filters",
        "Hit",
        "ImportReport",
        "Intention",
        "Memory",
        "MemoryService",
        "NotFoundError",
        "Page",
        "Place",
        "PreconditionFailedError",
        "RecalldError",
        "Receipt",
        "Settings",
        "Stats",
        "StorageError",
        "ValidationError",
        "__version__",
        "open",
    ]
    for name in recalld.__all__:
        assert hasattr(recalld, name), name


def test_public_api_errors_share_one_root() -> None:
    for error in (
        recalld.ValidationError,
        recalld.NotFoundError,
        recalld.ConflictError,
        recalld.PreconditionFailedError,
        recalld.StorageError,
        recalld.DiskFullError,
        recalld.EmbeddingError,
    ):
        assert issubclass(error, recalld.RecalldError)
    # A stale edit is a conflict: who catches ConflictError catches it too.
    assert issubclass(recalld.PreconditionFailedError, recalld.ConflictError)


def test_every_error_class_is_listed_in_recalld_errors() -> None:
    # Review of pass a64: DatabaseLockedError (a64), as each error class a caller may catch.
    import inspect

    from recalld import errors

    defined = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value)
        and issubclass(value, errors.RecalldError)
        and value.__module__ == errors.__name__
    }
    assert "DatabaseLockedError" in defined
    assert defined - {"RecalldError"} <= set(errors.__all__)
    assert issubclass(errors.DatabaseLockedError, errors.StorageError)


def test_public_api_open_round_trip(tmp_path: Path) -> None:
    with recalld.open(tmp_path / "m.db", namespace="agent") as memory:
        receipt = memory.remember("the staging DB is in Melbourne")
        assert receipt.namespace == "agent"
        assert memory.get(receipt.id).content == "the staging DB is in Melbourne"


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"embeder": "none"}, "embeder"),  # a typo is refused, not ignored
        ({"embedder": "nope"}, "embedder"),
        ({"min_score": 5}, "min_score"),
    ],
)
def test_public_api_open_names_a_bad_setting(
    tmp_path: Path, settings: dict[str, object], field: str
) -> None:
    with pytest.raises(recalld.ValidationError) as raised:
        recalld.open(tmp_path / "m.db", **settings)
    assert raised.value.field == field
    assert not (tmp_path / "m.db").exists()
