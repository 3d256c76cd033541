"""Involuntary recall, told as stories: context comes back, once, when it recurs."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pygeohash
import pytest
from PIL import Image

from recalld.config import Settings
from recalld.context.signals import ImageFeatures
from recalld.errors import ValidationError
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.image_plugin import create
from tests.media import melody, picture

CAFE = {"lat": 48.86420, "lon": 2.34750}  # a café in Paris
NEXT_DOOR = {"lat": 48.86425, "lon": 2.34760}  # ~10 m away
ACROSS_TOWN = {"lat": 48.83500, "lon": 2.38500}  # ~4.3 km away
PARK = {"geohash": "u09tunqu9"}


@pytest.fixture
def clock() -> FakeClock:
    # Thursday 5 November 2026, 07:05 UTC = 08:05 in Paris (+01:00).
    return FakeClock(datetime(2026, 11, 5, 7, 5, tzinfo=UTC))


@pytest.fixture
def memory(db_path: Path, clock: FakeClock) -> Iterator[MemoryService]:
    with MemoryService.open(Settings(db=db_path, synchronous="NORMAL"), clock=clock) as service:
        yield service


def _cafe_memory(memory: MemoryService) -> int:
    stored = memory.recollections.remember(
        "Croissant with Léa at the corner café; she told me about her move to Lyon",
        place=CAFE,
        at="2026-11-04T08:10:00+01:00",  # a Wednesday morning
        tags=["lea", "cafe"],
        salience=0.8,
    )
    return stored.seq


def test_story_cafe_memory_fires_at_the_same_cafe_next_weekday_morning(
    memory: MemoryService,
) -> None:
    seq = _cafe_memory(memory)
    fired = memory.recollections.sense(
        memory.recollections.cue(place=NEXT_DOOR, at="2026-11-05T08:05:00+01:00")
    )
    assert [recollection.memory.seq for recollection in fired] == [seq]
    recollection = fired[0]
    assert recollection.channels["place"] == 1.0
    assert recollection.channels["time"] > 0.95
    assert 0 < recollection.score <= 1
    assert "Léa" in recollection.prompt_line
    queued = memory.recollections.pending(drain=False)
    assert [item.memory.seq for item in queued] == [seq]


def test_story_not_at_night_on_a_sunday_across_town(memory: MemoryService) -> None:
    _cafe_memory(memory)
    cue = memory.recollections.cue(place=ACROSS_TOWN, at="2026-11-08T20:00:00+01:00")
    assert memory.recollections.sense(cue) == []
    assert memory.recollections.pending(drain=False) == []


def test_story_habituation_then_fires_again_after_the_window(
    memory: MemoryService, clock: FakeClock
) -> None:
    seq = _cafe_memory(memory)
    cue = memory.recollections.cue(place=CAFE, at="2026-11-05T08:05:00+01:00")
    assert [r.memory.seq for r in memory.recollections.sense(cue)] == [seq]
    clock.advance(10 * 60)
    again = memory.recollections.cue(place=CAFE, at="2026-11-05T08:15:00+01:00")
    assert memory.recollections.sense(again) == []
    assert len(memory.recollections.pending(drain=False)) == 1
    clock.advance(24 * 3600)  # Friday morning, long after the 3-hour window
    friday = memory.recollections.cue(place=CAFE, at="2026-11-06T08:05:00+01:00")
    assert [r.memory.seq for r in memory.recollections.sense(friday)] == [seq]
    assert len(memory.recollections.pending(drain=False)) == 2


def test_sense_leaves_the_caller_s_cue_without_a_time(
    memory: MemoryService, clock: FakeClock
) -> None:
    # A sensor loop builds its cue once: each sense compares the time it runs at, and the
    # cue keeps no time it was not given (a recall with it compares the place only).
    morning = _cafe_memory(memory)
    evening = memory.recollections.remember(
        "Dinner with Léa at the corner café", place=CAFE, at="2026-11-04T20:10:00+01:00"
    ).seq
    cue = memory.recollections.cue(place=CAFE)
    assert [r.memory.seq for r in memory.recollections.sense(cue)] == [morning]
    assert cue.at is None
    assert set(memory.recollections.recall(cue)[0].channels) == {"place"}
    clock.advance(12 * 3600)  # 20:05 in Paris, long after habituation
    assert [r.memory.seq for r in memory.recollections.sense(cue)] == [evening]


def test_story_a_song_brings_back_what_happened_while_it_played(
    memory: MemoryService, tmp_path: Path
) -> None:
    song = tmp_path / "first-dance.wav"
    song.write_bytes(melody(7))
    stored = memory.recollections.remember(
        "Our first dance at the wedding in Porto", audio=str(song), at="2019-06-15T22:30:00+01:00"
    )
    memory.recollections.remember(
        "Another tune at a party", audio=base64.b64encode(melody(8)).decode()
    )
    heard = base64.b64encode(melody(7, noise=0.05)).decode()
    fired = memory.recollections.sense(
        memory.recollections.cue(audio=heard, place=ACROSS_TOWN, at="2026-11-05T13:00:00+01:00")
    )
    assert [r.memory.seq for r in fired] == [stored.seq]
    assert fired[0].channels["audio"] > 0.9


def test_story_a_heart_racing_moment_contributes_its_channel(memory: MemoryService) -> None:
    stored = memory.recollections.remember(
        "Nearly hit by a cyclist at the park gate",
        place=PARK,
        at="2026-11-02T17:30:00+01:00",
        biometrics={"heart_rate": 135, "skin_conductance": 12.0},
        salience=0.9,
    )
    spike = memory.recollections.cue(
        place=PARK,
        biometrics={"heart_rate": 131, "skin_conductance": 11.4},
        at="2026-11-05T12:00:00+01:00",
    )
    hits = memory.recollections.recall(spike)
    assert hits[0].memory.seq == stored.seq
    assert hits[0].channels["biometric"] > 0.9
    calm = memory.recollections.cue(
        place=PARK, biometrics={"heart_rate": 62, "skin_conductance": 2.0}
    )
    assert memory.recollections.recall(calm)[0].channels["biometric"] < 0.05
    fired = memory.recollections.sense(spike)
    assert [r.memory.seq for r in fired] == [stored.seq]
    assert fired[0].channels["biometric"] > 0.9


def test_story_a_photo_of_the_same_view(memory: MemoryService) -> None:
    stored = memory.recollections.remember(
        "The view from the lighthouse", image=base64.b64encode(picture(3)).decode()
    )
    memory.recollections.remember("A different view", image=base64.b64encode(picture(4)).decode())
    hits = memory.recollections.recall(
        memory.recollections.cue(image=base64.b64encode(picture(3, brighten=25)).decode())
    )
    assert hits[0].memory.seq == stored.seq
    assert hits[0].channels["image"] > 0.8
    assert hits[1].channels["image"] < 0.4


def test_recall_compares_only_given_cues_and_changes_nothing(memory: MemoryService) -> None:
    seq = _cafe_memory(memory)
    memory.recollections.remember("Kyoto temple at dawn", tags=["kyoto", "travel"])
    by_text = memory.recollections.recall(memory.recollections.cue(text="what about Kyoto?"))
    assert by_text[0].memory.content == "Kyoto temple at dawn"
    assert set(by_text[0].channels) == {"text"}
    by_place = memory.recollections.recall(memory.recollections.cue(place=CAFE), k=1)
    assert [hit.memory.seq for hit in by_place] == [seq]
    assert set(by_place[0].channels) == {"place"}
    assert by_place[0].backends == ["context"]
    assert memory.store.context.counts("default") == (0, 0)
    assert memory.get(seq=seq).access_count == 0


def test_pending_drain_peek_and_oldest_first(memory: MemoryService, clock: FakeClock) -> None:
    first = _cafe_memory(memory)
    second = memory.recollections.remember("Léa's farewell dinner", tags=["lea"]).seq
    memory.recollections.sense(memory.recollections.cue(place=CAFE, at="2026-11-05T08:05:00+01:00"))
    clock.advance(60)
    memory.recollections.sense(memory.recollections.cue(text="Léa's farewell dinner"))
    peeked = memory.recollections.pending(drain=False)
    assert [item.memory.seq for item in peeked] == [first, second]
    assert [item.memory.seq for item in memory.recollections.pending(drain=False)] == [
        first,
        second,
    ]
    assert [item.memory.seq for item in memory.recollections.pending(limit=1)] == [first]
    assert [item.memory.seq for item in memory.recollections.pending()] == [second]
    assert memory.recollections.pending() == []


def _queue(memory: MemoryService, round_number: int, count: int) -> list[int]:
    """Store and fire ``count`` memories, so ``count`` recollections wait in the queue."""
    texts = [
        f"round {round_number} song {index} chorus lyric{round_number}x{index}"
        for index in range(count)
    ]
    seqs = [memory.recollections.remember(text).seq for text in texts]
    for text in texts:
        memory.recollections.sense(memory.recollections.cue(text=text))
    assert len(memory.recollections.pending(drain=False, limit=1000)) == count
    return seqs


def _drain(consumer: MemoryService, barrier: threading.Barrier, taken: list[int]) -> None:
    barrier.wait(timeout=30)
    while items := consumer.recollections.pending(limit=2):
        taken.extend(item.memory.seq for item in items)


def test_pending_drain_is_exactly_once_with_consumers_racing(
    memory: MemoryService, db_path: Path
) -> None:
    """Three consumers, each with its own connections, start together behind a barrier and
    drain the same queue; over many rounds no item is delivered twice or lost."""
    consumers = [
        MemoryService.open(Settings(db=db_path, embedder="none", busy_timeout_ms=20))
        for _ in range(3)
    ]
    try:
        for round_number in range(8):
            seqs = _queue(memory, round_number, 24)
            barrier = threading.Barrier(len(consumers))
            taken: list[list[int]] = [[] for _ in consumers]
            threads = [
                threading.Thread(target=_drain, args=(consumer, barrier, part))
                for consumer, part in zip(consumers, taken, strict=True)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
            delivered = [seq for part in taken for seq in part]
            assert sorted(delivered) == sorted(seqs), f"round {round_number}"
            assert memory.recollections.pending() == []
    finally:
        for consumer in consumers:
            consumer.close()


CONSUMER = """
import json, sys
from recalld.config import Settings
from recalld.service import MemoryService
taken = []
with MemoryService.open(Settings(db=sys.argv[1], embedder="none", busy_timeout_ms=20)) as service:
    print("ready", flush=True)
    sys.stdin.readline()  # the barrier: start when the test says go
    while True:
        items = service.recollections.pending(limit=2)
        if not items:
            break
        taken.extend(item.memory.seq for item in items)
print(json.dumps(taken))
"""


@pytest.mark.slow
def test_pending_drain_is_exactly_once_across_processes(
    memory: MemoryService, db_path: Path
) -> None:
    for round_number in range(2):
        seqs = _queue(memory, round_number, 40)
        consumers = [
            subprocess.Popen(
                [sys.executable, "-c", CONSUMER, str(db_path)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        for consumer in consumers:
            assert consumer.stdout is not None
            assert consumer.stdout.readline().strip() == "ready"
        for consumer in consumers:
            assert consumer.stdin is not None
            consumer.stdin.write("go\n")
            consumer.stdin.flush()
        outputs = [consumer.communicate(timeout=120)[0] for consumer in consumers]
        taken = [seq for output in outputs for seq in json.loads(output)]
        assert sorted(taken) == sorted(seqs)
        assert memory.recollections.pending() == []


def test_forget_removes_features_triggers_and_queued_recollections(
    memory: MemoryService,
) -> None:
    stored = memory.recollections.remember(
        "Song at the café",
        place=CAFE,
        at="2026-11-04T08:10:00+01:00",
        audio=base64.b64encode(melody(9)).decode(),
    )
    memory.recollections.sense(memory.recollections.cue(place=CAFE, at="2026-11-05T08:05:00+01:00"))
    assert memory.store.context.counts("default") == (1, 1)
    assert memory.store.context.signals([stored.seq])
    assert memory.forget(stored.id).deleted is True
    assert memory.store.context.counts("default") == (0, 0)
    assert memory.store.context.signals([stored.seq]) == {}
    assert memory.recollections.pending() == []


def test_raw_media_bytes_never_reach_the_database(memory: MemoryService, db_path: Path) -> None:
    audio, image = melody(11), picture(12, size=256)
    memory.recollections.remember(
        "media",
        audio=base64.b64encode(audio).decode(),
        image=base64.b64encode(image).decode(),
    )
    memory.store.compact_after_forget()
    stored = b"".join(
        Path(f"{db_path}{suffix}").read_bytes()
        for suffix in ("", "-wal")
        if Path(f"{db_path}{suffix}").exists()
    )
    for raw in (audio, image):
        digest = hashlib.sha256(raw).digest()
        assert digest not in stored
        assert digest.hex().encode() not in stored
        middle = len(raw) // 2
        assert raw[middle : middle + 64] not in stored
        assert base64.b64encode(raw)[1000:1064] not in stored


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "cue"),
        ({"place": {"lat": 91, "lon": 0}}, "place.lat"),
        ({"place": {"geohash": "u09!"}}, "place.geohash"),
        ({"place": {"lat": 48.0}}, "place.lon"),
        ({"at": "teatime"}, "at"),
        ({"image": "not base64 and not a file"}, "image"),
        ({"audio": base64.b64encode(b"not audio").decode()}, "audio"),
        ({"biometrics": {"heart_rate": "fast"}}, "biometrics"),
        ({"biometrics": {" heart_rate ": 72.0}}, "biometrics"),
        ({"biometrics": {"heart\u200brate": 72.0}}, "biometrics"),
        ({"biometrics": {"heart\nrate": 72.0}}, "biometrics"),
    ],
)
def test_bad_cues_name_the_field(
    memory: MemoryService, arguments: dict[str, object], field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        memory.recollections.sense(memory.recollections.cue(**arguments))  # type: ignore[arg-type]
    assert caught.value.field == field
    assert memory.store.context.counts("default") == (0, 0)
    # Stored with an experience, the same reading is refused and nothing is written.
    if "biometrics" in arguments and field == "biometrics":
        with pytest.raises(ValidationError) as refused:
            memory.recollections.remember("a run", biometrics=arguments["biometrics"])  # type: ignore[arg-type]
        assert refused.value.field == "biometrics"
        assert memory.stats().count == 0


@pytest.mark.parametrize("drain", ["false", "no", 1, 0, None])
def test_pending_refuses_a_drain_that_is_no_boolean_and_takes_nothing(
    memory: MemoryService, drain: object
) -> None:
    # "false" or "no" (read from a config file, a form) drained the queue it meant to peek.
    seq = _cafe_memory(memory)
    memory.recollections.sense(memory.recollections.cue(place=CAFE, at="2026-11-05T08:05:00+01:00"))
    with pytest.raises(ValidationError) as caught:
        memory.recollections.pending(drain=drain)  # type: ignore[arg-type]
    assert caught.value.field == "drain"
    assert [item.memory.seq for item in memory.recollections.pending(drain=False)] == [seq]


@pytest.mark.model
def test_text_channel_finds_a_paraphrase_with_the_real_model(
    db_path: Path, clock: FakeClock
) -> None:
    settings = Settings(db=db_path, synchronous="NORMAL", embedder="minilm")
    with MemoryService.open(settings, clock=clock) as memory:
        stored = memory.recollections.remember("The kettle in the office kitchen is broken")
        memory.recollections.remember("Quarterly taxes are due in April")
        memory.new_worker().run_until_idle()
        cue = memory.recollections.cue(text="the water boiler at work stopped working")
        hits = memory.recollections.recall(cue)
        assert hits[0].memory.seq == stored.seq
        # No word in common: the channel's value can only come from the embeddings.
        assert hits[0].channels["text"] > 0.3
        assert all(hit.channels["text"] < hits[0].channels["text"] for hit in hits[1:])


def test_image_model_plug_in_adds_its_embedding(db_path: Path, clock: FakeClock) -> None:
    settings = Settings(db=db_path, synchronous="NORMAL", image_encoder="tests.image_plugin:create")
    with MemoryService.open(settings, clock=clock) as memory:
        stored = memory.recollections.remember(
            "the red door", image=base64.b64encode(picture(21)).decode()
        )
        features = memory.store.context.signals([stored.seq])[stored.seq]["image"]
        # What is kept is the model's (unit-length) embedding of the picture, not the picture.
        with Image.open(io.BytesIO(picture(21))) as opened:
            expected = np.asarray(create()(opened.convert("RGB")), dtype=np.float64)
        kept = np.asarray(ImageFeatures.from_bytes(features).embedding)
        assert kept == pytest.approx(expected / np.linalg.norm(expected), abs=1e-6)
        assert picture(21) not in features
        # Brightening changes the pHash little and the quadrant colours less: the model's
        # cosine dominates the channel.
        hits = memory.recollections.recall(
            memory.recollections.cue(image=base64.b64encode(picture(21, brighten=40)).decode())
        )
        assert hits[0].memory.seq == stored.seq
        assert hits[0].channels["image"] > 0.95
    with (
        pytest.raises(ValidationError) as caught,
        MemoryService.open(
            Settings(db=db_path, image_encoder="tests.nowhere:create"), clock=clock
        ) as broken,
    ):
        broken.recollections.cue(image=base64.b64encode(picture(1)).decode())
    assert caught.value.field == "image_encoder"


def test_a_memory_placed_by_a_coarse_geohash_is_found_by_coordinates_inside_it(
    memory: MemoryService, tmp_path: Path
) -> None:
    # "u09tv" is a ~5 km cell of Paris; a cue given as coordinates (a 10-character geohash)
    # inside it must reach the memory, though no finer prefix of the search starts its geohash.
    coarse = memory.recollections.remember("Walked along the Seine", place={"geohash": "u09tv"})
    centre = coarse.place
    assert centre is not None
    assert centre.geohash == "u09tv"
    cue = memory.recollections.cue(place={"lat": centre.lat, "lon": centre.lon})
    found = memory.recollections.recall(cue)
    assert [hit.memory.id for hit in found] == [coarse.id]
    assert found[0].channels["place"] == 1.0
    # An export names the place by both its centre and its geohash: import keeps the cell.
    with MemoryService.open(Settings(db=tmp_path / "copy.db", embedder="none")) as copy:
        assert copy.import_lines(list(memory.export())).errors == []
        restored = copy.get(coarse.id).place
        assert restored is not None
        assert restored.geohash == "u09tv"


@pytest.mark.parametrize("lat", [45.0, 69.65, 82.5, 85.0, -89.0])
def test_a_place_east_or_west_is_as_near_at_every_latitude(
    memory: MemoryService, lat: float
) -> None:
    # The cells searched narrow east-west towards the poles: at 82.5 N a memory 500 m
    # east was never a candidate (Longyearbyen, Tromso, a polar station).
    metres_per_degree = 6_371_008.8 * math.pi / 180
    shift = 500 / (metres_per_degree * math.cos(math.radians(lat)))
    east = memory.recollections.remember("the hut east", place={"lat": lat, "lon": 15 + shift})
    west = memory.recollections.remember("the hut west", place={"lat": lat, "lon": 15 - shift})
    found = memory.recollections.recall(memory.recollections.cue(place={"lat": lat, "lon": 15.0}))
    assert {hit.memory.id for hit in found} == {east.id, west.id}
    # 500 m, less the 50 m that count as the same place: exp(-(0.45)^2) = 0.82.
    assert all(hit.channels["place"] == pytest.approx(0.816, abs=0.01) for hit in found)


def test_places_a_few_metres_apart_across_a_pole_are_near(memory: MemoryService) -> None:
    station = memory.recollections.remember("the flag", place={"lat": 89.9999, "lon": 0.0})
    cue = memory.recollections.cue(place={"lat": 89.9999, "lon": 180.0})  # 22 m away
    found = memory.recollections.recall(cue)
    assert [(hit.memory.id, hit.channels["place"]) for hit in found] == [(station.id, 1.0)]


def test_a_coarse_geohash_is_its_whole_cell(memory: MemoryService) -> None:
    # "u09tv" (~5 x 5 km of Paris) stands for somewhere in that cell: a place inside it is
    # at distance 0 (it was scored from the cell's centre and dropped 2.4 km away), and a
    # place outside is as far as the cell's nearest edge.
    cell = pygeohash.decode_exactly("u09tv")
    south, west = cell.latitude - cell.latitude_error, cell.longitude - cell.longitude_error
    coarse = memory.recollections.remember("walked along the Seine", place={"geohash": "u09tv"})
    inside = {"lat": south + 0.002, "lon": west + 0.002}  # a corner, ~3 km from the centre
    found = memory.recollections.recall(memory.recollections.cue(place=inside))
    assert [(hit.memory.id, hit.channels["place"]) for hit in found] == [(coarse.id, 1.0)]
    outside = {"lat": south - 0.0045, "lon": west + 0.01}  # ~500 m south of the cell
    found = memory.recollections.recall(memory.recollections.cue(place=outside))
    assert [hit.memory.id for hit in found] == [coarse.id]
    assert found[0].channels["place"] == pytest.approx(0.816, abs=0.01)
    # A coarse cue is its cell too: it holds a memory placed anywhere inside it.
    point = memory.recollections.remember("bought bread", place=inside)
    by_cell = memory.recollections.recall(memory.recollections.cue(place={"geohash": "u09tv"}))
    assert {(hit.memory.id, hit.channels["place"]) for hit in by_cell} == {
        (coarse.id, 1.0),
        (point.id, 1.0),
    }


def test_memories_placed_by_a_cell_do_not_crowd_out_one_at_the_spot(
    memory: MemoryService,
) -> None:
    # 60 memories "somewhere in u09tv" tie with the bench at place 1.0: the candidates
    # kept the first 50 rows read (the cells'), and the bench was never a candidate.
    for index in range(60):
        memory.recollections.remember(f"somewhere in Paris {index}", place={"geohash": "u09tv"})
    bench = memory.recollections.remember(
        "the bench by the river", place={"lat": 48.86, "lon": 2.34}
    )
    found = memory.recollections.recall(
        memory.recollections.cue(place={"lat": 48.86, "lon": 2.34}), k=60
    )
    assert bench.id in [hit.memory.id for hit in found]


def test_a_place_search_reaches_as_far_in_every_direction(memory: MemoryService) -> None:
    # The cells scanned reach further on some sides than on others: memories 1.5 km away
    # came back from 9 of 12 bearings. Within the reach (1.2 km) all of them, beyond none.
    metres_per_degree = 6_371_008.8 * math.pi / 180
    centre = (48.8566, 2.3522)
    rings: dict[float, set[str]] = {}
    for metres in (1_000.0, 1_500.0):
        for step in range(12):
            bearing = 2 * math.pi * step / 12
            north = metres * math.cos(bearing) / metres_per_degree
            east = (
                metres * math.sin(bearing) / (metres_per_degree * math.cos(math.radians(48.8566)))
            )
            stored = memory.recollections.remember(
                f"{metres:.0f} m, bearing {step}",
                place={"lat": centre[0] + north, "lon": centre[1] + east},
            )
            rings.setdefault(metres, set()).add(stored.id)
    cue = memory.recollections.cue(place={"lat": centre[0], "lon": centre[1]})
    found = {hit.memory.id for hit in memory.recollections.recall(cue, k=30)}
    assert found == rings[1_000.0]


def _between_ranking_and_firing(
    memory: MemoryService, monkeypatch: pytest.MonkeyPatch, write: Callable[[], object]
) -> None:
    """Run ``write`` (another caller's forget or update) after a sense has ranked its
    candidates and before it fires them: the window two concurrent callers can hit."""
    fire = memory.store.context.fire

    def write_then_fire(*arguments: Any, **options: Any) -> Any:
        write()
        return fire(*arguments, **options)

    monkeypatch.setattr(memory.store.context, "fire", write_then_fire)


def test_sense_fires_nothing_of_a_memory_forgotten_after_it_was_ranked(
    memory: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    seq = _cafe_memory(memory)
    gone = memory.get(seq=seq).id
    other = memory.recollections.remember(
        "Breakfast on the terrace next door", place=NEXT_DOOR, at="2026-11-04T08:20:00+01:00"
    ).seq
    _between_ranking_and_firing(memory, monkeypatch, lambda: memory.forget(gone))
    cue = memory.recollections.cue(place=CAFE, at="2026-11-05T08:05:00+01:00")
    fired = memory.recollections.sense(cue)
    # The other memory still fires; the forgotten one neither fails the sense nor is queued.
    assert [recollection.memory.seq for recollection in fired] == [other]
    assert [item.memory.seq for item in memory.recollections.pending()] == [other]
    assert memory.store.context.counts("default") == (1, 0)


def test_sense_queues_a_memory_edited_after_it_was_ranked_as_it_reads_now(
    memory: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    seq = _cafe_memory(memory)
    memory_id = memory.get(seq=seq).id
    _between_ranking_and_firing(
        memory, monkeypatch, lambda: memory.update(memory_id, content="Croissant at the café")
    )
    cue = memory.recollections.cue(place=CAFE, at="2026-11-05T08:05:00+01:00")
    fired = memory.recollections.sense(cue)
    assert [recollection.memory.seq for recollection in fired] == [seq]
    # Neither the answer nor the queue's copy keeps the text the edit replaced.
    assert "Lyon" not in fired[0].prompt_line
    assert fired[0].memory.content == "Croissant at the café"
    queued = memory.recollections.pending()
    assert [item.prompt_line for item in queued] == [fired[0].prompt_line]
    assert "Croissant at the café" in queued[0].prompt_line
