"""`recalld X --help` says what the command does: the keys its --json prints, the defaults
its options take (adversarial pass a65)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from click.testing import CliRunner

from recalld.adapters.cli import cli

ENVIRONMENT = {"RECALLD_EMBEDDER": "none", "RECALLD_GRAPH_EXTRACTOR": "none"}


def test_forget_help_names_every_key_its_json_prints(tmp_path: Path) -> None:
    # It said `{"deleted": true|false}`; the document has "scrubbed" and "scrub" too.
    runner = CliRunner(env=ENVIRONMENT)
    database = ["--db", str(tmp_path / "h.db")]
    written = runner.invoke(cli, [*database, "remember", "a note to forget", "--json"])
    memory_id = json.loads(written.stdout)["id"]
    forgotten = runner.invoke(cli, [*database, "forget", memory_id, "--json"])
    assert forgotten.exit_code == 0
    help_text = " ".join(runner.invoke(cli, ["forget", "--help"]).output.split())
    for key in json.loads(forgotten.stdout):
        assert f'"{key}"' in help_text


def test_option_help_names_the_setting_an_omitted_option_takes() -> None:
    # Each said nothing of its default, which a setting decides.
    expected = {
        ("remind", "--window"): "RECALLD_INTENTION_WINDOW_MINUTES, 60",
        ("remind", "--min-interval"): "RECALLD_INTENTION_MIN_INTERVAL_SECONDS, 3600",
        ("worker", "--batch-size"): "RECALLD_WORKER_BATCH_SIZE, 64",
    }
    for (command, option), default in expected.items():
        (described,) = [
            parameter
            for parameter in cli.commands[command].params
            if isinstance(parameter, click.Option) and option in parameter.opts
        ]
        assert f"[default: {default}]" in (described.help or "")
