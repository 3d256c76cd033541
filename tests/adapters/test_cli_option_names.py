"""A value the CLI refuses is named by the option the user typed, not the library field."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.errors import ValidationError

ENVIRONMENT = {"RECALLD_EMBEDDER": "none", "RECALLD_GRAPH_EXTRACTOR": "none"}


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        # Each was named by a field no option of the command is called.
        (("remember", "x", "--ttl", "-5"), "--ttl"),
        (("remember", "x", "--tag", ""), "--tag"),
        (("remember", "x", "--place", "1,1", "--place-name", "n" * 300), "--place-name"),
        (("remember", "x", "--place", "91,0"), "--place"),
        (("list", "--created-since", "bad"), "--created-since"),
        (("recent", "--created-until", "bad"), "--created-until"),
        (("search", "x", "--min-score", "2"), "--min-score"),
        (("recall", "x", "--tag", ""), "--tag"),
        (("remind", "x", "--place", "1,1", "--radius", "-4"), "--radius"),
        (
            ("remind", "x", "--mention", "B", "--every-time", "--min-interval", "inf"),
            "--min-interval",
        ),
        (("update", "nothing", "--ttl", "-1"), "--ttl"),
        (("experience", "e", "--biometric", "hr=nan"), "--biometric"),
        (("sense", "--biometric", "hr=inf"), "--biometric"),
        # A field spelled as its option keeps its name.
        (("remember", "x", "--id", "bad id"), "id"),
        (("list", "--speaker", "a\x1b"), "speaker"),
        (("recent", "--limit", "0"), "limit"),
        (("remind", "x", "--at", "someday maybe"), "at"),
    ],
)
def test_cli_refused_value_is_named_by_its_option(
    tmp_path: Path, arguments: tuple[str, ...], named: str
) -> None:
    assert _refused(tmp_path, *arguments).field == named


def _refused(tmp_path: Path, *arguments: str, **environment: str) -> ValidationError:
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "o.db"), *arguments], env={**ENVIRONMENT, **environment}
    )
    assert isinstance(result.exception, ValidationError), result.output
    return result.exception


def test_cli_refused_value_of_an_option_spelled_as_its_field_keeps_its_name(tmp_path: Path) -> None:
    # As `list --kind` keeps "kind" (the tag filters were renamed before this pass).
    refused = _refused(tmp_path, "search", "x", "--limit", "0")
    assert str(refused) == "limit: must be between 1 and 1000, got 0"
    # `get` without ID, --key or --seq is a usage error naming them, before the database
    # is opened (adversarial pass a65: test_cli_exit_codes.py).


def test_cli_meta_with_a_number_past_a_double_says_so(tmp_path: Path) -> None:
    # It said "meta: must be a JSON object: Out of range float values are not JSON
    # compliant" of a JSON object.
    refused = _refused(tmp_path, "remember", "x", "--meta", '{"reading": 1e999}')
    assert refused.field == "meta"
    assert "not finite" in refused.message
    assert "must be a JSON object" not in refused.message
