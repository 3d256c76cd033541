"""Latency of involuntary recall: ``sense`` and context ``recall`` at N context memories.

Synthetic memories spread over a city (~20 km across), at random local times
over a year, with tags; a share carry biometric readings, image features or an
audio fingerprint (mixed channels, like a phone's life log). Then timed cues:
place + time (the common case), text, biometrics + place, image, audio.
Latencies are end to end through the public API (cue parsing included).

Each sense cue is timed twice: with no intention stored, then with
``--intentions`` (1,000) intentions stored (issue 17: places with radii of
50-300 m, mentions of names, sustained heart-rate thresholds, tags, and
time-only recurrences that sense never evaluates), plus a text cue that
mentions one of the names. Reminders that fire are queued like recollections.

Prints progress on stderr and one JSON object as the last line of stdout.

    python bench/sense_bench.py --n 10000,100000 --intentions 1000
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.media import melody, picture

from recalld.config import Settings
from recalld.service import MemoryService

CENTRE = (48.8566, 2.3522)
NAMES = (
    "anna bruno chloe david emma felix grace hugo ines jules karim lena marco nadia oscar "
    "paula quentin rosa samir tessa ugo vera william xenia yusuf zoe"
).split()
WORDS = (
    "coffee train rain market river bridge song dinner friend museum park bike dog "
    "garden bakery concert beach storm library school office kitchen"
).split()


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 3),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 3),
    }


def _place(generator: random.Random) -> dict[str, float]:
    return {
        "lat": CENTRE[0] + generator.uniform(-0.09, 0.09),
        "lon": CENTRE[1] + generator.uniform(-0.13, 0.13),
    }


def _at(generator: random.Random) -> str:
    moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=generator.randrange(525_600))
    return moment.astimezone().isoformat()


def load(
    service: MemoryService, count: int, generator: random.Random, media: dict[str, str]
) -> None:
    """Store ``count`` context memories with mixed channels."""
    recollections = service.recollections
    for index in range(count):
        words = " ".join(generator.choice(WORDS) for _ in range(8))
        roll = generator.random()
        extra: dict[str, Any] = {}
        if roll < 0.2:
            extra["biometrics"] = {
                "heart_rate": generator.uniform(55, 150),
                "skin_conductance": generator.uniform(1, 15),
            }
        elif roll < 0.23:
            extra["image"] = media[f"image{index % 8}"]
        elif roll < 0.235:
            extra["audio"] = media[f"audio{index % 4}"]
        recollections.remember(
            f"memory {index}: {words}",
            place=_place(generator),
            at=_at(generator),
            tags=[generator.choice(WORDS)],
            salience=generator.random(),
            **extra,
        )
        if (index + 1) % 5000 == 0:
            _log(f"  stored {index + 1}/{count}")


def store_intentions(
    service: MemoryService, count: int, generator: random.Random
) -> dict[str, int]:
    """Store ``count`` intentions with mixed triggers; returns how many of each kind."""
    kinds: dict[str, int] = {}
    for index in range(count):
        roll = generator.random()
        repeat = "every_time" if generator.random() < 0.2 else "once"
        options: dict[str, Any] = {"repeat": repeat}
        if repeat == "every_time":
            options["min_interval_seconds"] = 0
        if roll < 0.4:
            kind = "place"
            options.update(place=_place(generator), radius_m=generator.uniform(50, 300))
        elif roll < 0.6:
            kind = "mention"
            options["mention"] = [generator.choice(NAMES).title()]
        elif roll < 0.75:
            kind = "signal"
            threshold = generator.uniform(120, 180)
            options["signals"] = [{"signal": "heart_rate", "above": threshold, "readings": 3}]
        elif roll < 0.85:
            kind = "tag"
            options["tags"] = [generator.choice(WORDS)]
        else:
            kind = "time"
            options = {"at": f"{generator.randrange(24):02d}:00", "every": "daily", "zone": "UTC"}
        service.remind(f"intention {index}: {kind}", **options)
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def timed(action: Callable[[], Any], repeats: int) -> list[float]:
    """Wall-clock seconds of each of ``repeats`` calls."""
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return samples


def run(count: int, repeats: int, directory: Path, seed: int, intentions: int) -> dict[str, Any]:
    """Load ``count`` memories into a fresh database and time every cue kind, then
    store ``intentions`` intentions and time every sense cue again."""
    generator = random.Random(seed)
    media = {f"image{index}": base64.b64encode(picture(index)).decode() for index in range(8)}
    media.update({f"audio{index}": base64.b64encode(melody(index)).decode() for index in range(4)})
    # The context channels do not use text embeddings; loading is not what is measured.
    settings = Settings(db=directory / f"sense-{count}.db", synchronous="NORMAL", embedder="none")
    results: dict[str, Any] = {
        "n": count,
        "load_average_at_start": [round(value, 2) for value in os.getloadavg()],
    }
    with MemoryService.open(settings) as service:
        started = time.perf_counter()
        load(service, count, generator, media)
        results["load_seconds"] = round(time.perf_counter() - started, 2)
        recollections = service.recollections
        heard = base64.b64encode(melody(1, noise=0.05)).decode()
        seen = base64.b64encode(picture(2, brighten=20)).decode()
        cues: dict[str, Callable[[], Any]] = {
            "place_time": lambda: recollections.cue(place=_place(generator), at=_at(generator)),
            "text": lambda: recollections.cue(text="coffee at the bakery by the river"),
            "biometric_place": lambda: recollections.cue(
                place=_place(generator),
                biometrics={"heart_rate": generator.uniform(55, 150), "skin_conductance": 8.0},
            ),
            "image": lambda: recollections.cue(image=seen),
            "audio": lambda: recollections.cue(audio=heard),
            "text_mention": lambda: recollections.cue(
                text=f"dinner with {generator.choice(NAMES).title()} by the river"
            ),
        }
        for name, make in cues.items():

            def recall_once(make: Callable[[], Any] = make) -> None:
                recollections.recall(make(), k=5)

            def sense_once(make: Callable[[], Any] = make) -> None:
                recollections.sense(make())

            results[f"recall_{name}"] = _percentiles(timed(recall_once, repeats))
            # Each sense fires what matches; draining after the run keeps the queue small.
            results[f"sense_{name}"] = _percentiles(timed(sense_once, repeats))
            recollections.pending(limit=1000)
            _log(f"  n={count} {name}: {results[f'sense_{name}']}")
        if intentions:
            started = time.perf_counter()
            results["intentions"] = store_intentions(service, intentions, generator)
            results["intentions_load_seconds"] = round(time.perf_counter() - started, 2)
            reminders = 0
            for name, make in cues.items():

                def sense_with(make: Callable[[], Any] = make) -> None:
                    recollections.sense(make())

                results[f"sense_{name}_with_intentions"] = _percentiles(timed(sense_with, repeats))
                reminders += sum(
                    item.kind == "reminder" for item in recollections.pending(limit=1000)
                )
                _log(
                    f"  n={count} {name} with {intentions} intentions:"
                    f" {results[f'sense_{name}_with_intentions']}"
                )
            results["reminders_fired"] = reminders
    results["load_average_at_end"] = [round(value, 2) for value in os.getloadavg()]
    return results


def main() -> None:
    """Parse arguments, run each size, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", default="10000,100000", help="comma-separated sizes")
    parser.add_argument("--repeats", type=int, default=100, help="timed calls per cue kind")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--intentions", type=int, default=1000, help="intentions stored")
    arguments = parser.parse_args()
    sizes = [int(value) for value in arguments.n.split(",")]
    with tempfile.TemporaryDirectory() as directory:
        runs = [
            run(size, arguments.repeats, Path(directory), arguments.seed, arguments.intentions)
            for size in sizes
        ]
    print(
        json.dumps(
            {
                "benchmark": "sense_bench",
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
                "python": platform.python_version(),
                "mix": {"biometric": 0.2, "image": 0.03, "audio": 0.005, "place_time_tags": 1.0},
                "repeats": arguments.repeats,
                "intentions": arguments.intentions,
                "results": runs,
            }
        )
    )


if __name__ == "__main__":
    main()
