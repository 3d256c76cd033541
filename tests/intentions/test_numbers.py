"""An intention's numbers are numbers: no ``true`` for 1, no text, nothing infinite, within
the bounds the published schemas state; refused naming the field, on every surface."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from recalld.adapters.cli import cli
from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.service import MemoryService
from tests.adapters.mcp_support import call, in_process, text
from tests.intentions.conftest import PHARMACY

INFINITY = float("inf")
EVERY_DAY = {"mention": ["Bob"], "at": "2026-10-23T09:00", "every": "daily"}
EVERY_TIME = {"place": PHARMACY, "repeat": "every_time"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"place": PHARMACY, "radius_m": True}, "radius_m"),
        ({"place": PHARMACY, "radius_m": "100"}, "radius_m"),
        ({**EVERY_DAY, "window_minutes": True}, "window_minutes"),
        ({**EVERY_DAY, "window_minutes": INFINITY}, "window_minutes"),
        # A year and a day: added to an occurrence it would leave the calendar at 1e10.
        ({**EVERY_DAY, "window_minutes": 366 * 24 * 60 + 1}, "window_minutes"),
        ({**EVERY_TIME, "min_interval_seconds": True}, "min_interval_seconds"),
        ({**EVERY_TIME, "min_interval_seconds": INFINITY}, "min_interval_seconds"),
        ({**EVERY_TIME, "min_interval_seconds": "60"}, "min_interval_seconds"),
        (
            {"signals": [{"signal": "heart_rate", "above": True}]},
            "signals[0].SignalCondition.above",
        ),
        (
            {"signals": [{"signal": "heart_rate", "below": INFINITY}]},
            "signals[0].SignalCondition.below",
        ),
        (
            {"signals": [{"signal": "heart_rate", "above": 1e7}]},
            "signals[0].SignalCondition.above",
        ),
        (
            {"signals": [{"signal": "heart_rate", "above": 150, "readings": True}]},
            "signals[0].SignalCondition.readings",
        ),
        ({"signals": ["heart_rate>10000000"]}, "signals.above"),
    ],
)
def test_remind_numbers_are_strict_and_finite(
    memory: MemoryService, arguments: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.remind("do the thing", **arguments)
    assert caught.value.field == field
    assert memory.intentions(state="all") == []
    assert memory.list_memories().memories == []


def test_remind_numbers_at_the_bounds_are_kept_and_past_them_refused(
    memory: MemoryService,
) -> None:
    place = memory.remind("pick up the prescription", place=PHARMACY, radius_m=50_000)
    assert place.triggers[0].radius_m == 50_000  # type: ignore[union-attr]
    daily = memory.remind("water the plants", **EVERY_DAY, window_minutes=366 * 24 * 60)
    assert daily.triggers[0].window_minutes == 366 * 24 * 60  # type: ignore[union-attr]
    signal = memory.remind("slow down", signals=[{"signal": "heart_rate", "above": 1e6}])
    assert signal.triggers[0].above == 1e6  # type: ignore[union-attr]
    rarely = memory.remind("stretch", **EVERY_TIME, min_interval_seconds=1e12)
    assert rarely.min_interval_seconds == 1e12
    # A threshold past what a reading may be is the signal's fault, not the readings'.
    with pytest.raises(ValidationError) as caught:
        memory.remind("slow down", signals=[{"signal": "heart_rate", "below": -1e6 - 1}])
    assert caught.value.field == "signals[0].SignalCondition.below"
    with pytest.raises(ValidationError) as caught:
        memory.remind("water the plants", **EVERY_DAY, window_minutes=1e10)
    assert caught.value.field == "window_minutes"
    assert memory.intentions.counts() == {"active": 4}


@pytest.fixture
def client(memory: MemoryService, tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(db=tmp_path / "unused.db", embedder="none", graph_extractor="rules")
    with TestClient(
        create_app(memory, settings), client=("127.0.0.1", 40000), base_url="http://127.0.0.1"
    ) as opened:
        yield opened


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"action": "x", "place": {"lat": 48.853, "lon": 2.349}, "radius_m": true}', "radius_m"),
        ('{"action": "x", "mention": ["Bob"], "at": "2026-10-23T09:00", "every": "daily",'
         ' "window_minutes": true}', "window_minutes"),
        ('{"action": "x", "mention": ["Bob"], "repeat": "every_time",'
         ' "min_interval_seconds": true}', "min_interval_seconds"),
        ('{"action": "x", "mention": ["Bob"], "repeat": "every_time",'
         ' "min_interval_seconds": 1e999}', "min_interval_seconds"),
        ('{"action": "x", "signals": [{"signal": "heart_rate", "above": true}]}',
         "signals[0].SignalCondition.above"),
    ],
)  # fmt: skip
def test_rest_intention_numbers_are_strict_and_finite(
    client: TestClient, memory: MemoryService, body: str, field: str
) -> None:
    response = client.post(
        "/v1/intentions", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field
    assert memory.intentions(state="all") == []


def test_openapi_states_the_bounds_the_server_enforces(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    request = schemas["IntentionRequest"]["properties"]
    (radius, _) = request["radius_m"]["anyOf"]
    assert (radius["type"], radius["exclusiveMinimum"], radius["maximum"]) == ("number", 0, 50_000)
    (window, _) = request["window_minutes"]["anyOf"]
    assert (window["exclusiveMinimum"], window["maximum"]) == (0, 366 * 24 * 60)
    (above, _) = schemas["SignalCondition"]["properties"]["above"]["anyOf"]
    assert (above["minimum"], above["maximum"]) == (-1e6, 1e6)


@pytest.mark.anyio
async def test_mcp_intention_numbers_are_strict_and_finite(tmp_path: Path) -> None:
    async with in_process(tmp_path / "mcp.db", "native")() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        radius = tools["remind"].input_schema["properties"]["radius_m"]
        assert (radius["exclusiveMinimum"], radius["maximum"]) == (0, 50_000)
        for field, arguments in (
            ("radius_m", {"place": PHARMACY, "radius_m": True}),
            ("window_minutes", {**EVERY_DAY, "window_minutes": True}),
            ("min_interval_seconds", {**EVERY_TIME, "min_interval_seconds": True}),
            ("readings", {"signals": ["heart_rate>150"], "readings": True}),
        ):
            refused = await call(client, "remind", {"action": "x", **arguments})
            assert refused.is_error, arguments
            assert json.loads(text(refused))["error"]["field"] == field
        listed = await call(client, "intentions", {"state": "all"})
        assert '"intentions":[]' in text(listed)


def test_cli_intention_numbers_are_finite(tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "cli.db")
    options = ["--mention", "Bob", "--every-time", "--min-interval", "inf"]
    refused = runner.invoke(cli, ["--db", db, "remind", "stretch", *options])
    assert isinstance(refused.exception, ValidationError)  # main() prints it, exits 1
    assert refused.exception.field == "--min-interval"  # the option typed
    listed = runner.invoke(cli, ["--db", db, "intentions", "--state", "all", "--json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout) == {"intentions": []}


HUGE = int("9" * 4000)  # no float holds it; JSON reads it as an integer
PAST_A_FLOAT: list[tuple[str, dict[str, Any], str]] = [
    ("radius_m", {"place": PHARMACY}, "above 0 and at most 50000"),
    ("window_minutes", EVERY_DAY, "above 0 and at most 527040"),
    ("min_interval_seconds", EVERY_TIME, "of at least 0"),
]


@pytest.mark.parametrize(("field", "arguments", "rule"), PAST_A_FLOAT)
@pytest.mark.parametrize("value", ["1e400", "-1e400", str(HUGE)])
def test_rest_numbers_no_float_holds_name_the_field_and_range(
    client: TestClient,
    memory: MemoryService,
    field: str,
    arguments: dict[str, Any],
    rule: str,
    value: str,
) -> None:
    # pydantic said only "Input should be a finite number" (or "a valid number").
    body = json.dumps({"action": "x", **arguments})[:-1] + f', "{field}": {value}}}'
    response = client.post(
        "/v1/intentions", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["field"] == field
    assert rule in error["message"]
    assert memory.intentions(state="all") == []


@pytest.mark.anyio
async def test_mcp_numbers_no_float_holds_name_the_field_and_range(tmp_path: Path) -> None:
    async with in_process(tmp_path / "mcp.db", "native")() as client:
        for field, arguments, rule in PAST_A_FLOAT:
            # (Not infinity: the in-process client's JSON writes it as null.)
            for value in (HUGE, -HUGE):
                refused = await call(client, "remind", {"action": "x", **arguments, field: value})
                assert refused.is_error, (field, value)
                error = json.loads(text(refused))["error"]
                assert (error["field"], rule in error["message"]) == (field, True), error
        listed = await call(client, "intentions", {"state": "all"})
        assert '"intentions":[]' in text(listed)


@pytest.mark.parametrize(
    ("option", "arguments", "rule"),
    [
        ("--radius", ["--place", "48.853,2.349"], "above 0 and at most 50000"),
        ("--window", ["--at", "2027-10-23T09:00", "--every", "daily"], "at most 527040"),
        ("--min-interval", ["--mention", "Bob", "--every-time"], "of at least 0"),
    ],
)
@pytest.mark.parametrize("value", ["1e400", "9" * 4000])
def test_cli_numbers_no_float_holds_name_the_option_and_range(
    tmp_path: Path, option: str, arguments: list[str], rule: str, value: str
) -> None:
    db = str(tmp_path / "cli.db")
    refused = CliRunner().invoke(cli, ["--db", db, "remind", "x", *arguments, option, value])
    assert isinstance(refused.exception, ValidationError)
    assert refused.exception.field == option
    assert rule in str(refused.exception)
