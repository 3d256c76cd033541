"""Prospective memory told as stories: each reminder comes once, when its situation does."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from recalld.errors import NotFoundError, ValidationError
from recalld.recollection import Recollection
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.intentions.conftest import AT_THE_DOOR, DOWN_THE_STREET, PHARMACY


def _reminders(items: list[Recollection]) -> list[str]:
    return [item.memory.content for item in items if item.kind == "reminder"]


def _sense(memory: MemoryService, **cue: object) -> list[Recollection]:
    return memory.recollections.sense(memory.recollections.cue(**cue))  # type: ignore[arg-type]


def test_story_pharmacy_fires_on_arrival_within_the_radius_once(memory: MemoryService) -> None:
    intention = memory.remind("pick up the prescription", place=PHARMACY, radius_m=100)
    assert intention.state == "active"
    assert _reminders(_sense(memory, place=DOWN_THE_STREET)) == []
    assert memory.recollections.pending(drain=False) == []

    arrived = _sense(memory, place=AT_THE_DOOR)
    assert _reminders(arrived) == ["pick up the prescription"]
    reminder = arrived[0]
    assert reminder.memory.id == intention.id
    assert reminder.memory.kind == "intention"
    assert reminder.channels == {"place": 1.0}
    assert reminder.reminder is not None
    assert reminder.reminder.matched[0].trigger == "place"
    assert "within 100 m" in reminder.reminder.why
    assert reminder.prompt_line.startswith("[reminder] pick up the prescription")

    assert _reminders(_sense(memory, place=AT_THE_DOOR)) == []  # once
    assert memory.intentions.get(intention.id).state == "done"
    delivered = memory.recollections.pending()
    assert [(item.kind, item.memory.id) for item in delivered] == [("reminder", intention.id)]
    assert delivered[0].reminder == reminder.reminder
    assert memory.recollections.pending() == []


def test_story_pharmacy_default_radius_is_150_m(memory: MemoryService) -> None:
    intention = memory.remind("pick up the prescription", place=PHARMACY)
    assert intention.triggers[0].type == "place"
    assert intention.triggers[0].radius_m == 150
    assert _reminders(_sense(memory, place={"lat": 48.85420, "lon": 2.34900})) == [
        "pick up the prescription"
    ]


def test_story_friday_nine_fires_from_the_scheduler_at_local_time_after_dst(
    memory: MemoryService, clock: FakeClock
) -> None:
    # Created on summer time (+02:00); Friday 30 October is on winter time (+01:00).
    intention = memory.remind("send the report", at="2026-10-30T09:00", zone="Europe/Paris")
    assert intention.next_due is not None
    assert intention.next_due.isoformat() == "2026-10-30T09:00:00+01:00"
    assert memory.intentions.run_due(datetime(2026, 10, 30, 7, 0, tzinfo=UTC)) == []  # 08:00 local
    assert memory.intentions.run_due(datetime(2026, 10, 30, 7, 59, 59, tzinfo=UTC)) == []
    clock.now = datetime(2026, 10, 30, 8, 0, tzinfo=UTC)
    fired = memory.intentions.run_due()
    assert _reminders(fired) == ["send the report"]
    assert fired[0].reminder is not None
    assert fired[0].reminder.due_at is not None
    assert fired[0].reminder.due_at.isoformat() == "2026-10-30T09:00:00+01:00"
    assert fired[0].channels == {"time": 1.0}
    clock.advance(60)
    assert memory.intentions.run_due() == []  # exactly once
    assert memory.intentions.get(intention.id).state == "done"
    assert _reminders(memory.recollections.pending()) == ["send the report"]


def test_story_weekly_friday_follows_the_wall_clock_with_a_zone_name_not_with_an_offset(
    memory: MemoryService, clock: FakeClock
) -> None:
    named = memory.remind("weekly report", at="Friday 9:00", every="weekly", zone="Europe/Paris")
    memory.remind("weekly report (fixed offset)", at="Friday 9:00", every="weekly", zone="+02:00")
    assert named.resolved[0].instant.isoformat() == "2026-10-23T09:00:00+02:00"
    clock.now = datetime(2026, 10, 23, 7, 0, tzinfo=UTC)
    assert sorted(_reminders(memory.intentions.run_due())) == [
        "weekly report",
        "weekly report (fixed offset)",
    ]
    assert memory.intentions.get(named.id).next_due.isoformat() == "2026-10-30T09:00:00+01:00"  # type: ignore[union-attr]
    # A bare offset stays +02:00 after the change: 09:00+02:00 is 08:00 on Paris clocks.
    clock.now = datetime(2026, 10, 30, 7, 0, tzinfo=UTC)
    assert _reminders(memory.intentions.run_due()) == ["weekly report (fixed offset)"]
    clock.now = datetime(2026, 10, 30, 8, 0, tzinfo=UTC)
    assert _reminders(memory.intentions.run_due()) == ["weekly report"]


def test_story_weekly_recurrence_fires_each_week_not_twice_in_one(
    memory: MemoryService, clock: FakeClock
) -> None:
    intention = memory.remind("water the plants", at="2026-10-23T18:00", every="weekly")
    due = datetime(2026, 10, 23, 16, 0, tzinfo=UTC)  # 18:00 in Paris, summer time
    assert memory.intentions.run_due(due - timedelta(seconds=1)) == []
    assert _reminders(memory.intentions.run_due(due)) == ["water the plants"]
    assert memory.intentions.run_due(due + timedelta(hours=1)) == []
    assert memory.intentions.run_due(due + timedelta(days=6)) == []
    next_week = datetime(2026, 10, 30, 17, 0, tzinfo=UTC)  # 18:00 in Paris, winter time
    assert _reminders(memory.intentions.run_due(next_week)) == ["water the plants"]
    assert memory.intentions.run_due(next_week + timedelta(minutes=5)) == []
    # Three weeks with no process running: one late reminder, then back on schedule.
    late = datetime(2026, 11, 20, 20, 0, tzinfo=UTC)
    caught_up = memory.intentions.run_due(late)
    assert _reminders(caught_up) == ["water the plants"]
    assert caught_up[0].reminder is not None
    assert caught_up[0].reminder.due_at is not None
    assert caught_up[0].reminder.due_at.isoformat() == "2026-11-06T18:00:00+01:00"
    stored = memory.intentions.get(intention.id)
    assert stored.next_due is not None
    assert stored.next_due.isoformat() == "2026-11-27T18:00:00+01:00"
    assert (stored.state, stored.fire_count) == ("active", 3)
    assert len(memory.recollections.pending(limit=10)) == 3


def test_story_mention_fires_on_anna_not_on_annapolis(memory: MemoryService) -> None:
    intention = memory.remind("ask about the move", mention=["Anna"])
    assert _reminders(_sense(memory, text="We sailed to Annapolis last summer")) == []
    assert _reminders(_sense(memory, text="annalise and joanna said hello")) == []
    fired = _sense(memory, text="I had lunch with ANNA's brother")
    assert _reminders(fired) == ["ask about the move"]
    assert fired[0].channels == {"mention": 1.0}
    assert fired[0].reminder is not None
    assert fired[0].reminder.why == "'Anna' was mentioned"
    assert memory.intentions.get(intention.id).state == "done"


def test_story_mention_of_a_name_with_accents_and_several_words(memory: MemoryService) -> None:
    memory.remind("return the book", mention=["Léa Martin"])
    assert _reminders(_sense(memory, text="Léa said Martin was late")) == []
    assert _reminders(_sense(memory, text="met lea martin at the station")) == ["return the book"]


def test_story_mention_fires_when_a_memory_about_anna_surfaces(memory: MemoryService) -> None:
    memory.recollections.remember(
        "Coffee with Anna at the corner café", place=PHARMACY, at="2026-10-21T08:00:00+02:00"
    )
    memory.remind("ask about the move", mention=["Anna"])
    fired = _sense(memory, place=AT_THE_DOOR, at="2026-10-22T08:00:00+02:00")
    assert [item.kind for item in fired] == ["recollection", "reminder"]
    assert fired[1].reminder is not None
    assert fired[1].reminder.why == "'Anna' came up in a recollection"


def test_story_mention_by_entity_through_the_hook(memory: MemoryService) -> None:
    seen: list[tuple[str, str]] = []

    def entities(text: str, namespace: str) -> list[str]:
        seen.append((text, namespace))
        return ["Anna Lima"] if "my sister" in text else []

    memory.intentions.match_entities = entities
    memory.remind("ask about the move", mention=["Anna Lima"])
    assert _reminders(_sense(memory, text="dinner at the station")) == []
    fired = _sense(memory, text="my sister called")
    assert _reminders(fired) == ["ask about the move"]
    assert fired[0].reminder is not None
    assert "entity" in fired[0].reminder.why
    assert seen[-1] == ("my sister called", "default")


def test_story_sustained_heart_rate_fires_after_n_readings_not_on_one(
    memory: MemoryService, clock: FakeClock
) -> None:
    memory.remind(
        "slow down",
        signals=[{"signal": "heart_rate", "above": 150, "readings": 3}],
        repeat="every_time",
    )

    def reading(value: float) -> list[str]:
        clock.advance(20)
        return _reminders(_sense(memory, biometrics={"heart_rate": value}))

    assert reading(165) == []
    assert reading(158) == []
    assert reading(140) == []  # the streak breaks
    assert reading(160) == []
    assert reading(161) == []
    assert reading(162) == ["slow down"]
    assert reading(163) == []  # a firing consumes the streak (and the interval holds)


def test_story_sustained_readings_far_apart_do_not_count_as_consecutive(
    memory: MemoryService, clock: FakeClock
) -> None:
    memory.remind("slow down", signals=[{"signal": "heart_rate", "above": 150, "readings": 2}])
    assert _reminders(_sense(memory, biometrics={"heart_rate": 170})) == []
    clock.advance(3600)  # more than intention_reading_gap_seconds later
    assert _reminders(_sense(memory, biometrics={"heart_rate": 170})) == []
    clock.advance(30)
    assert _reminders(_sense(memory, biometrics={"heart_rate": 171})) == ["slow down"]


def test_story_one_reading_is_enough_when_asked_and_below_works(memory: MemoryService) -> None:
    memory.remind("put on a jacket", signals=["temperature<35.5"])
    assert _reminders(_sense(memory, biometrics={"temperature": 36.6})) == []
    assert _reminders(_sense(memory, biometrics={"temperature": 35.1})) == ["put on a jacket"]


def test_story_every_time_waits_the_minimum_interval(
    memory: MemoryService, clock: FakeClock
) -> None:
    memory.remind("stretch", tags=["desk"], repeat="every_time", min_interval_seconds=600)
    assert _reminders(_sense(memory, tags=["desk"])) == ["stretch"]
    clock.advance(300)
    assert _reminders(_sense(memory, tags=["desk"])) == []
    clock.advance(300)
    assert _reminders(_sense(memory, tags=["desk"])) == ["stretch"]
    assert _reminders(_sense(memory, tags=["kitchen"])) == []


def test_story_all_triggers_must_hold(memory: MemoryService, clock: FakeClock) -> None:
    memory.remind(
        "buy bread on the way home",
        place=PHARMACY,
        at="2026-10-22T17:00",
        until="2026-10-22T20:00",
        mention=["bread"],
    )
    assert _reminders(_sense(memory, place=AT_THE_DOOR, text="fresh bread")) == []  # too early
    clock.now = datetime(2026, 10, 22, 16, 0, tzinfo=UTC)  # 18:00 in Paris
    assert _reminders(_sense(memory, place=DOWN_THE_STREET, text="fresh bread")) == []
    assert _reminders(_sense(memory, place=AT_THE_DOOR, text="a pharmacy")) == []
    assert _reminders(_sense(memory, place=AT_THE_DOOR, text="fresh bread")) == [
        "buy bread on the way home"
    ]


def test_story_a_recurrence_beside_a_place_opens_a_window_each_occurrence(
    memory: MemoryService, clock: FakeClock
) -> None:
    memory.remind(
        "take the vitamins",
        place=PHARMACY,
        at="2026-10-23T08:00",
        every="daily",
        window_minutes=120,
    )
    clock.now = datetime(2026, 10, 23, 5, 30, tzinfo=UTC)  # 07:30 local: before the window
    assert _reminders(_sense(memory, place=AT_THE_DOOR)) == []
    clock.now = datetime(2026, 10, 23, 6, 30, tzinfo=UTC)  # 08:30 local
    assert _reminders(_sense(memory, place=AT_THE_DOOR)) == ["take the vitamins"]
    clock.advance(600)
    assert _reminders(_sense(memory, place=AT_THE_DOOR)) == []  # once per occurrence
    clock.now = datetime(2026, 10, 24, 6, 10, tzinfo=UTC)
    assert _reminders(_sense(memory, place=AT_THE_DOOR)) == ["take the vitamins"]


def test_story_cancel_never_fires_after_and_drops_the_queued_reminder(
    memory: MemoryService, clock: FakeClock
) -> None:
    kept = memory.remind("stretch", tags=["desk"], repeat="every_time", min_interval_seconds=0)
    assert _reminders(_sense(memory, tags=["desk"])) == ["stretch"]
    assert len(memory.recollections.pending(drain=False)) == 1
    cancelled = memory.cancel(kept.id)
    assert cancelled.state == "cancelled"
    assert memory.recollections.pending(drain=False) == []
    clock.advance(60)
    assert _reminders(_sense(memory, tags=["desk"])) == []

    scheduled = memory.remind("send the report", at="2026-10-30T09:00")
    memory.cancel(scheduled.id)
    assert memory.intentions.run_due(datetime(2026, 10, 30, 9, 0, tzinfo=UTC)) == []
    assert memory.recollections.pending() == []
    assert [item.state for item in memory.intentions(state="all")] == ["cancelled", "cancelled"]
    assert memory.intentions() == []
    with pytest.raises(NotFoundError):
        memory.cancel("01NOTANINTENTION")


def test_story_forget_an_intention_removes_it_and_its_queued_reminder(
    memory: MemoryService,
) -> None:
    intention = memory.remind("ask about the move", mention=["Anna"], signals=["heart_rate>100"])
    _sense(memory, text="Anna", biometrics={"heart_rate": 120})
    assert len(memory.recollections.pending(drain=False)) == 1
    assert memory.forget(intention.id).deleted is True
    assert memory.recollections.pending() == []
    assert memory.intentions(state="all") == []
    assert memory.intentions.counts() == {}
    with pytest.raises(NotFoundError):
        memory.intentions.get(intention.id)


def test_story_expired_intention_never_fires(memory: MemoryService, clock: FakeClock) -> None:
    intention = memory.remind("pick up the parcel", place=PHARMACY, expires="2026-10-22T12:00")
    clock.now = datetime(2026, 10, 22, 10, 0, tzinfo=UTC)  # 12:00 in Paris
    assert _reminders(_sense(memory, place=AT_THE_DOOR)) == []
    assert memory.intentions.get(intention.id).state == "expired"


def test_namespaces_are_walls_for_intentions(memory: MemoryService) -> None:
    memory.remind("pick up the prescription", place=PHARMACY, namespace="alice")
    assert _reminders(memory.recollections.sense(memory.recollections.cue(place=AT_THE_DOOR))) == []
    assert memory.intentions() == []
    fired = memory.recollections.sense(
        memory.recollections.cue(place=AT_THE_DOOR), namespace="alice"
    )
    assert _reminders(fired) == ["pick up the prescription"]
    assert memory.recollections.pending() == []
    assert len(memory.recollections.pending(namespace="alice")) == 1


def test_an_intention_is_a_memory_but_never_an_involuntary_recollection(
    memory: MemoryService,
) -> None:
    intention = memory.remind("pick up the prescription", place=PHARMACY)
    listed = memory.list_memories().memories
    assert [(item.id, item.kind) for item in listed] == [(intention.id, "intention")]
    assert memory.search("prescription")[0].memory.id == intention.id
    assert _sense(memory, text="pick up the prescription") == []
    exported = list(memory.export())
    assert '"kind":"intention"' in exported[0].replace(" ", "")


def test_kind_intention_is_only_a_reminder_s_and_stays_it(memory: MemoryService) -> None:
    # Edited to a note, a reminder stayed active and also fired as a recollection (one
    # sense delivered it twice); a note made an intention had no trigger and never came back.
    intention = memory.remind("call the pharmacy about the prescription", place=PHARMACY)
    note = memory.remember("the pharmacy closes at seven")
    for memory_id, kind in ((intention.id, "note"), (note.id, "intention")):
        with pytest.raises(ValidationError) as refused:
            memory.update(memory_id, kind=kind)
        assert refused.value.field == "kind"
    with pytest.raises(ValidationError) as refused:
        memory.remember("buy stamps", kind="intention")
    assert refused.value.field == "kind"
    with pytest.raises(ValidationError) as refused:
        memory.remember_many([{"content": "a"}, {"content": "b", "kind": "intention"}])
    assert refused.value.field == "[1].kind"
    assert memory.get(intention.id).kind == "intention"
    assert memory.get(note.id).kind == "note"
    assert memory.stats().count == 2
    # Other edits of a reminder's memory are still allowed.
    assert memory.update(intention.id, tags=["errand"]).kind == "intention"
    # An import line cannot do it either: each such line is refused, naming the kind.
    lines = [
        json.dumps({"id": intention.id, "content": "call the pharmacy", "kind": "note"}),
        json.dumps({"id": note.id, "content": "the pharmacy closes at seven", "kind": "intention"}),
        json.dumps({"content": "buy stamps", "kind": "intention"}),
    ]
    report = memory.import_lines(lines)
    assert [error.line for error in report.errors] == [1, 2, 3]
    assert all(error.error.startswith("kind:") for error in report.errors), report.errors
    assert (memory.get(intention.id).kind, memory.get(note.id).kind) == ("intention", "note")
    assert memory.stats().count == 2
    # A new id of that kind comes with its recalld.intention line (an export's pair), or
    # nothing is written; the reminder's own lines import again as they are.
    orphan = json.dumps({"id": "orphan", "content": "buy stamps", "kind": "intention"})
    report = memory.import_lines([orphan])
    assert [error.line for error in report.errors] == [1]
    assert report.errors[0].error.startswith("kind:")
    assert memory.stats().count == 2
    again = memory.import_lines(list(memory.export()))
    assert again.errors == []
    assert [item.id for item in memory.intentions()] == [intention.id]
    # A pair whose recalld.intention line is malformed writes neither line: no
    # trigger-less reminder memory is left behind.
    pair = [line for line in map(json.loads, memory.export()) if line["id"] == intention.id]
    renamed = [{**line, "id": "copy"} for line in pair]
    intention_line = next(line for line in renamed if line.get("type") == "recalld.intention")
    intention_line["triggers"] = [{"type": "teleport"}]
    report = memory.import_lines([json.dumps(line) for line in renamed])
    errors = {error.line: error.error for error in report.errors}
    assert set(errors) == {1, 2}, report.errors
    assert errors[2 if renamed[1] is intention_line else 1].startswith("triggers")
    assert "was refused" in errors[1 if renamed[1] is intention_line else 2]
    assert memory.stats().count == 2
    assert [item.id for item in memory.intentions()] == [intention.id]
    # Triggers go to a reminder's memory only: given a note's id, the line is refused
    # (the note fired as a reminder while it stayed a note).
    exported = next(line for line in pair if line.get("type") == "recalld.intention")
    on_note = {**exported, "id": note.id}
    report = memory.import_lines([json.dumps(on_note)])
    assert [(error.line, error.error.split(":")[0]) for error in report.errors] == [(1, "id")]
    assert [item.id for item in memory.intentions()] == [intention.id]
    assert _reminders(_sense(memory, text="the pharmacy closes at seven")) == []


def test_story_mention_by_a_graph_entity_named_in_what_is_heard(memory: MemoryService) -> None:
    memory.remember("Kate: we drove to Porto with Anna Lima in May")
    memory.new_worker().run_until_idle()  # builds the graph: "Anna Lima" is an entity
    assert memory.intentions.match_entities is not None
    assert "Anna Lima" in memory.intentions.match_entities("Anna_Lima phoned", "default")
    memory.remind("ask about the move", mention=["Anna Lima"])
    # The words alone do not hold ("anna_lima" is one token); the graph entity does.
    fired = _sense(memory, text="Anna_Lima phoned this morning")
    assert _reminders(fired) == ["ask about the move"]
    assert fired[0].reminder is not None
    assert "entity" in fired[0].reminder.why
