"""The CLI's prospective memory: remind (every trigger option), intentions, cancel, and
reminders delivered by sense and pending."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from recalld.adapters.cli import cli


@pytest.fixture
def run(tmp_path: Path) -> Any:
    runner = CliRunner()
    db = str(tmp_path / "cli.db")

    def invoke(*arguments: str) -> Result:
        return runner.invoke(cli, ["--db", db, *arguments], catch_exceptions=False)

    return invoke


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_cli_remind_at_a_place_fires_on_sense_and_is_delivered_once(run: Any) -> None:
    intention = _json(
        run(
            "remind",
            "pick up the prescription",
            "--place",
            "48.853,2.349",
            "--radius",
            "100",
            "--json",
        )
    )
    assert intention["triggers"][0] == {
        "type": "place",
        "lat": 48.853,
        "lon": 2.349,
        "geohash": intention["triggers"][0]["geohash"],
        "radius_m": 100.0,
        "name": None,
    }
    assert _json(run("sense", "--place", "48.8557,2.349", "--json")) == []  # ~300 m away
    fired = _json(run("sense", "--place", "48.8533,2.3491", "--json"))
    assert [(item["kind"], item["memory"]["id"]) for item in fired] == [
        ("reminder", intention["id"])
    ]
    delivered = _json(run("pending", "--json"))
    assert [item["reminder"]["action"] for item in delivered] == ["pick up the prescription"]
    assert _json(run("pending", "--json")) == []
    assert _json(run("intentions", "--json")) == {"intentions": []}
    done = _json(run("intentions", "--state", "done", "--json"))["intentions"]
    assert [item["id"] for item in done] == [intention["id"]]


def test_cli_remind_echoes_the_resolved_time(run: Any) -> None:
    shown = run("remind", "send the report", "--at", "tomorrow at 9", "--zone", "Europe/Paris")
    assert shown.exit_code == 0, shown.output
    assert '(from "tomorrow at 9")' in shown.output
    stored = _json(run("intentions", "--json"))["intentions"][0]
    due = datetime.fromisoformat(stored["next_due"])
    assert (due.hour, due.minute) == (9, 0)
    assert stored["zone"] == "Europe/Paris"


def test_cli_remind_every_trigger_option_and_cancel(run: Any) -> None:
    intention = _json(
        run(
            "remind",
            "slow down",
            "--when-signal",
            "heart_rate>150",
            "--for",
            "3",
            "--tag",
            "running",
            "--mention",
            "pace",
            "--every-time",
            "--min-interval",
            "60",
            "--expires",
            "in 3 days",
            "--json",
        )
    )
    types = [trigger["type"] for trigger in intention["triggers"]]
    assert types == ["mention", "tag", "signal"]
    assert intention["triggers"][2]["readings"] == 3
    assert (intention["repeat"], intention["min_interval_seconds"]) == ("every_time", 60.0)
    assert [item["field"] for item in intention["resolved"]] == ["expires"]
    weekly = _json(
        run("remind", "water the plants", "--at", "18:00", "--every", "weekly", "--json")
    )
    assert weekly["triggers"][0]["rrule"] == "FREQ=WEEKLY"
    cancelled = _json(run("cancel", intention["id"], "--json"))
    assert cancelled["state"] == "cancelled"
    listed = _json(run("intentions", "--state", "all", "--json"))["intentions"]
    assert [(item["action"], item["state"]) for item in listed] == [
        ("water the plants", "active"),
        ("slow down", "cancelled"),
    ]


def test_cli_remind_bad_input_is_one_line_naming_the_field(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "recalld", "--db", str(tmp_path / "e.db")]
    for arguments, fragment in (
        (["remind", "nothing to trigger it"], "triggers:"),
        (["remind", "x", "--place", "48.85,2.35", "--radius", "60000"], "--radius:"),
        (["remind", "x", "--at", "2020-01-01T09:00Z"], "at:"),
        (["remind", "x", "--at", "whenever you like"], "at:"),
        (["remind", "x", "--at", "9:00", "--every", "sometimes"], "every:"),
        (["remind", "x", "--when-signal", "heart_rate=150"], "--when-signal:"),
        (["cancel", "01NOSUCHINTENTION"], "no intention"),
    ):
        completed = subprocess.run(
            [*command, *arguments],
            capture_output=True,
            text=True,
            timeout=60,
            env={"RECALLD_EMBEDDER": "none", "PATH": ""},
        )
        assert completed.returncode == 1, (arguments, completed.stderr)
        assert fragment in completed.stderr, (arguments, completed.stderr)
        assert "Traceback" not in completed.stderr
    listed = subprocess.run(
        [*command, "intentions", "--state", "all", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"RECALLD_EMBEDDER": "none", "PATH": ""},
        check=True,
    )
    assert json.loads(listed.stdout) == {"intentions": []}


def test_cli_worker_until_idle_fires_what_is_due_in_another_process(
    tmp_path: Path, clock: Any
) -> None:
    from recalld.config import Settings
    from recalld.service import MemoryService

    db = tmp_path / "due.db"
    # Written on a clock set in 2026-10 for that evening: long due by the real clock now.
    with MemoryService.open(Settings(db=db, embedder="none"), clock=clock) as service:
        service.remind("water the plants", at="2026-10-25T18:00Z")
        service.remind("later", at="2999-01-01T09:00Z")
    command = [sys.executable, "-m", "recalld", "--db", str(db)]
    environment = {"RECALLD_EMBEDDER": "none", "PATH": ""}
    worked = subprocess.run(
        [*command, "worker", "--until-idle", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
        check=True,
    )
    assert json.loads(worked.stdout)["reminders"] == 1
    delivered = subprocess.run(
        [*command, "pending", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
        check=True,
    )
    items = json.loads(delivered.stdout)
    assert [(item["kind"], item["reminder"]["action"]) for item in items] == [
        ("reminder", "water the plants")
    ]
    assert items[0]["reminder"]["due_at"] == "2026-10-25T18:00:00Z"


def test_cli_reminder_text_is_shown_as_written_never_as_markup(run: Any) -> None:
    created = run("remind", "buy [/x] milk", "--at", "tomorrow 9am")
    assert created.exit_code == 0
    assert "[active] buy [/x] milk — at " in created.stdout
    assert '(from "tomorrow 9am")' in created.stdout  # not a Python repr
    assert "[active] buy [/x] milk — at " in run("intentions").stdout
    run("remind", "greet [bold]Ana[/bold]", "--place", "48.853,2.349", "--radius", "100")
    fired = run("sense", "--place", "48.8533,2.3491")
    assert fired.exit_code == 0
    assert "greet [bold]Ana[/bold]" in fired.stdout
