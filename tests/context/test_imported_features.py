"""Image features that arrive by import are checked as features: a NaN or a bin beyond 1
is refused naming the field, and a row stored before the check cannot hide its memory
(adversarial pass f60: one NaN bin made every recall with an image cue score the memory
0, dropping it even on a perfect text match, and answer its image channel as null)."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from recalld.context.signals import HEADER_BYTES, HISTOGRAM_BINS
from recalld.service import MemoryService
from tests.media import picture

IMAGE = base64.b64encode(picture(1)).decode()


def _with_histogram(features: bytes, bins: np.ndarray) -> bytes:
    return features[:8] + bins.astype(np.float32).tobytes() + features[HEADER_BYTES:]


def _stored_image(service: MemoryService) -> tuple[int, bytes, dict[str, object]]:
    memory = service.recollections.remember("the blue door of the bakery", image=IMAGE)
    [line] = [json.loads(line) for line in service.export() if '"recalld.senses"' in line]
    features = service.store.context.signals([memory.seq])[memory.seq]["image"]
    return memory.seq, features, line


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "holds a value that is not a finite number"),
        (float("inf"), "holds a value that is not a finite number"),
        (1e30, "colour histogram bins must be between 0 and 1"),
        (-0.5, "colour histogram bins must be between 0 and 1"),
    ],
)
def test_import_refuses_image_features_that_are_no_features(
    service: MemoryService, value: float, message: str
) -> None:
    seq, features, line = _stored_image(service)
    bins = np.zeros(HISTOGRAM_BINS)
    bins[3] = value
    poisoned = _with_histogram(features, bins)
    line["signals"] = {"image": base64.b64encode(poisoned).decode()}

    report = service.import_lines([json.dumps(line)])

    assert [error.error for error in report.errors] == [f"signals.image: {message}"]
    assert service.store.context.signals([seq])[seq]["image"] == features


def test_a_stored_nan_bin_does_not_hide_the_memory(service: MemoryService) -> None:
    seq, features, _ = _stored_image(service)
    bins = np.full(HISTOGRAM_BINS, np.nan)
    with service.store.transaction() as tx:  # as an import before the check stored it
        tx.save_signals(seq, {"image": _with_histogram(features, bins)}, {})
    recollections = service.recollections

    hits = recollections.recall(recollections.cue(text="the blue door of the bakery", image=IMAGE))

    assert [hit.memory.seq for hit in hits] == [seq]
    assert hits[0].channels["text"] == 1.0
    assert hits[0].channels["image"] == 0.75  # the same hash; no colour to compare
    assert hits[0].score > 0.75
