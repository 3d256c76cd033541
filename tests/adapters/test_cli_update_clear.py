"""``recalld update --clear FIELD`` removes a title, tags, an expiry …, as the native MCP
tool's ``clear`` and REST's null do (the CLI had no way but forget and remember again);
``--meta`` given twice merges, and a key given twice is refused naming it (the last
object, or the last value in one object, was kept without a word) (adversarial pass e63)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from recalld.adapters.cli import cli


def _run(db: Path, *arguments: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *arguments], catch_exceptions=False)


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _remembered(db: Path) -> str:
    receipt = _json(
        _run(
            db,
            *("remember", "the spare key is under the mat", "--title", "key"),
            *("--tag", "home", "--tag", "keys", "--ttl", "3600", "--category", "fact"),
            *("--meta", '{"room": "hall"}', "--json"),
        )
    )
    return str(receipt["id"])


def test_update_clear_removes_title_tags_and_expiry_and_keeps_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    memory_id = _remembered(db)
    updated = _json(
        _run(
            db,
            *("update", memory_id, "--clear", "title", "--clear", "tags"),
            *("--clear", "ttl_seconds", "--json"),
        )
    )
    assert (updated["title"], updated["tags"], updated["expires_at"]) == (None, [], None)
    assert (updated["category"], updated["meta"]) == ("fact", {"room": "hall"})
    stored = _json(_run(db, "get", memory_id, "--json"))
    assert (stored["title"], stored["tags"], stored["expires_at"]) == (None, [], None)


@pytest.mark.parametrize(
    ("given", "field"),
    [
        (["--tag", "garage"], "tags"),
        (["--ttl", "60"], "ttl_seconds"),
        (["--title", "spare"], "title"),
        # Review of pass e63: the option typed, not --salience.
        (["--importance", "3"], "salience"),
    ],
)
def test_update_a_field_given_and_cleared_is_refused_and_changes_nothing(
    tmp_path: Path, given: list[str], field: str
) -> None:
    db = tmp_path / "cli.db"
    memory_id = _remembered(db)
    before = _json(_run(db, "get", memory_id, "--json"))
    refused = _run(db, "update", memory_id, *given, "--clear", field)
    assert refused.exit_code == 2
    assert "--clear" in refused.stderr
    assert given[0] in refused.stderr
    assert _json(_run(db, "get", memory_id, "--json")) == before


def test_meta_given_twice_merges(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    receipt = _json(
        _run(db, "remember", "x", "--meta", '{"a": 1}', "--meta", '{"b": {"c": 2}}', "--json")
    )
    assert _json(_run(db, "get", receipt["id"], "--json"))["meta"] == {"a": 1, "b": {"c": 2}}
    updated = _json(
        _run(db, "update", receipt["id"], "--meta", '{"d": 3}', "--meta", '{"e": 4}', "--json")
    )
    assert updated["meta"] == {"d": 3, "e": 4}


@pytest.mark.parametrize(
    "metas",
    [
        ['{"key": 1}', '{"key": 2}'],
        ['{"key": 1, "key": 2}'],
        ['{"outer": {"key": 1, "key": 2}}'],
    ],
)
def test_meta_key_given_twice_is_refused_naming_it(tmp_path: Path, metas: list[str]) -> None:
    db = tmp_path / "cli.db"
    options = [part for meta in metas for part in ("--meta", meta)]
    refused = _run(db, "remember", "x", *options)
    assert refused.exit_code == 2
    assert "Invalid value for --meta: key 'key' is given twice" in refused.stderr
    assert _json(_run(db, "stats", "--json"))["count"] == 0


def test_meta_as_key_equals_value_says_to_give_json(tmp_path: Path) -> None:
    refused = _run(tmp_path / "cli.db", "remember", "x", "--meta", "key=1")
    assert refused.exit_code == 2
    assert """give a JSON object, such as '{"key": 1}'""" in refused.stderr
