"""The firing rule as the README states it: two strong channels fire only with one that
says what or where (text, place, image or audio); tags, time and biometric readings only
support one (adversarial pass f60: the README said "at least one is not time")."""

from __future__ import annotations

from recalld.service import MemoryService

GYM = {"lat": 48.8500, "lon": 2.3000}
AT = "2026-11-04T18:30:00+01:00"


def _workout(service: MemoryService) -> int:
    return service.recollections.remember(
        "Sprint intervals; the knee hurt on the last one",
        place=GYM,
        at=AT,
        tags=["gym"],
        biometrics={"heart_rate": 165.0},
    ).seq


def test_tags_time_and_biometrics_together_never_fire(service: MemoryService) -> None:
    seq = _workout(service)
    recollections = service.recollections
    cue = recollections.cue(tags=["gym"], at=AT, biometrics={"heart_rate": 165.0})

    # Every channel it gives matches fully: the score is high, yet nothing says what or where.
    [hit] = recollections.recall(cue)
    assert hit.memory.seq == seq
    assert hit.channels == {"tags": 1.0, "time": 1.0, "biometric": 1.0}
    assert hit.score >= service.settings.fire_score
    assert recollections.sense(cue) == []
    assert recollections.pending(drain=False) == []


def test_a_place_with_biometrics_fires(service: MemoryService) -> None:
    seq = _workout(service)
    recollections = service.recollections
    cue = recollections.cue(
        place=GYM, at="2026-11-05T18:35:00+01:00", biometrics={"heart_rate": 160.0}
    )

    assert [item.memory.seq for item in recollections.sense(cue)] == [seq]
