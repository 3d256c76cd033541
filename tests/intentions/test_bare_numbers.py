"""A reminder's time given as a number alone is refused (review of pass e62): dateparser
read "99" as 2099, "1234567890" as a Unix time in 2009 and "9" as September, and the
reminder was stored for then. Digits running on past a date are no ISO 8601 either:
Python read "1" * 200 as 1111-11-11T11:11:11.111111 and "20991231" + "1" * 10 as a
reminder for 2099 (adversarial pass e63)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from recalld.errors import ValidationError
from recalld.intentions.timing import PhraseParser, parse_clock_time
from recalld.service import MemoryService

NUMBERS = [
    "1234567890",
    "99",
    "9",
    "0900",
    "1 2",
    "-1",
    "+5",
    "\u0663",
    "1" * 200,
    "20991231" + "1" * 10,
]


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("field", ["at", "until", "expires"])
def test_remind_a_number_alone_as_a_time_is_refused_and_stores_nothing(
    memory: MemoryService, number: str, field: str
) -> None:
    arguments = {"at": "tomorrow at 9"} if field != "at" else {}
    with pytest.raises(ValidationError) as caught:
        memory.remind("do the thing", **arguments, **{field: number})
    assert caught.value.field == field
    assert "a number alone" in str(caught.value)
    assert memory.intentions(state="all") == []


def test_numbers_inside_phrases_and_iso_forms_are_still_read() -> None:
    parser = PhraseParser(parse_clock_time("09:00", "default"))
    now = datetime(2026, 10, 22, 6, 0, tzinfo=UTC)
    assert parser.resolve("at", "tomorrow at 9", UTC, now).hour == 9
    assert parser.resolve("at", "in 5 minutes", UTC, now).minute == 5
    assert parser.resolve("at", "20261204", UTC, now).isoformat() == "2026-12-04T09:00:00+00:00"
    assert parser.resolve("at", "2026-12-04", UTC, now).day == 4
    assert parser.resolve("at", "Dec 4 2026 18:00", UTC, now).hour == 18


@pytest.mark.parametrize("text", ["20991231" + "1" * 6 + "Z", "2099-12-31" + "1" * 7])
def test_remind_digits_run_on_from_a_date_are_refused(memory: MemoryService, text: str) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.remind("do the thing", at=text)
    assert caught.value.field == "at"
    assert memory.intentions(state="all") == []


@pytest.mark.parametrize(
    "text",
    [
        "1" * 200,
        "20991231" + "1" * 6 + "Z",
        "2026-12-04" + "1" * 7,
        "2026W495" + "1" * 4,  # review of pass e63: week 49's Monday at 11:11
    ],
)
def test_a_memory_time_of_digits_run_on_from_a_date_is_refused(
    memory: MemoryService, text: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.remember("the boiler was serviced", at=text)
    assert caught.value.field == "at"
    assert memory.list_memories().memories == []
    kept = memory.get(memory.remember("the boiler was serviced", at="20261204").id)
    assert kept.at is not None
    assert kept.at.isoformat() == "2026-12-04T00:00:00+00:00"
    week = memory.get(memory.remember("the boiler was checked", at="2026W495T0900Z").id)
    assert week.at is not None
    assert week.at.isoformat() == "2026-12-04T09:00:00+00:00"
