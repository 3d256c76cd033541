"""Media that decode to far more than they weigh: refused or read in part, never whole.

A few hundred kilobytes of compressed silence can stand for hours of samples, and a
20 KB PNG for 169 million pixels; a cue or an experience must not make the process
hold gigabytes for them (adversarial pass f60).
"""

from __future__ import annotations

import base64
import io
import struct
import zlib

import numpy as np
import pytest
import soundfile

from recalld.context import signals
from recalld.context.signals import AUDIO_MAX_RATE, AUDIO_MAX_SECONDS, audio_features
from recalld.errors import ValidationError
from recalld.service import MemoryService
from tests.media import RATE, melody, picture


def _wav(samples: np.ndarray, rate: int) -> bytes:
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format="WAV")
    return buffer.getvalue()


def _encoded(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_audio_features_fingerprint_only_the_first_120_seconds() -> None:
    long = melody(3, seconds=AUDIO_MAX_SECONDS + 10)
    samples, rate = soundfile.read(io.BytesIO(long), dtype="int16")
    assert rate == RATE
    start = _wav(samples[: AUDIO_MAX_SECONDS * RATE], RATE)

    whole = audio_features(long).fingerprint
    first = audio_features(start).fingerprint

    assert np.array_equal(whole, first)


def test_audio_features_read_a_short_recording_whole() -> None:
    clip = melody(4, seconds=12)
    samples, _ = soundfile.read(io.BytesIO(clip), dtype="int16")
    stereo = _wav(np.stack([samples, samples], axis=1), RATE)

    # Downmixed block by block, the same as the mono recording read at once.
    assert np.array_equal(audio_features(stereo).fingerprint, audio_features(clip).fingerprint)


def test_audio_over_the_sample_rate_limit_is_refused_and_stores_nothing(
    service: MemoryService,
) -> None:
    rate = AUDIO_MAX_RATE + 8_000
    tone = (np.sin(np.arange(rate * 3) * 0.05) * 20_000).astype(np.int16)
    fast = _encoded(_wav(tone, rate))

    with pytest.raises(ValidationError) as refused:
        service.recollections.remember("a song at the café", audio=fast)
    assert refused.value.field == "audio"
    assert f"{rate} Hz" in refused.value.message
    assert f"{AUDIO_MAX_RATE} Hz" in refused.value.message
    with pytest.raises(ValidationError) as cued:
        service.recollections.cue(audio=fast)
    assert cued.value.field == "audio"
    assert service.stats().count == 0


def test_image_over_the_pixel_limit_is_refused_before_decoding(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real limit (Pillow's bomb threshold, ~89 megapixels) takes a 600 MB decode to
    # reach from below; a lower one shows the same refusal on a 128 x 128 picture.
    monkeypatch.setattr(signals, "IMAGE_MAX_PIXELS", 100 * 100, raising=False)
    image = _encoded(picture(5))

    with pytest.raises(ValidationError) as refused:
        service.recollections.remember("the blue door", image=image)
    assert refused.value.field == "image"
    assert "128 x 128 pixels" in refused.value.message
    assert "10,000 pixels" in refused.value.message
    with pytest.raises(ValidationError) as cued:
        service.recollections.cue(text="the blue door", image=image)
    assert cued.value.field == "image"
    assert service.stats().count == 0
    assert service.recollections.pending(drain=False) == []


def _png_header(width: int, height: int) -> bytes:
    """A PNG that claims ``width`` x ``height`` pixels and holds none (Pillow reads the
    size from its header alone)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")


def test_image_over_twice_the_limit_names_the_same_limit(service: MemoryService) -> None:
    # Pillow itself refuses twice its threshold (178,956,970 pixels), before the size can
    # be read: the refusal still names recalld's limit, not Pillow's (review f60).
    image = _encoded(_png_header(14_000, 14_000))

    with pytest.raises(ValidationError) as refused:
        service.recollections.cue(text="the blue door", image=image)
    assert refused.value.field == "image"
    assert refused.value.message == "is 196,000,000 pixels; the limit is 89,478,485 pixels"
    with pytest.raises(ValidationError):
        service.recollections.remember("the blue door", image=image)
    assert service.stats().count == 0


def test_audio_read_block_by_block_gives_the_fingerprint_of_the_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clip = melody(6, seconds=10)
    samples, _ = soundfile.read(io.BytesIO(clip), dtype="int16")
    stereo = _wav(np.stack([samples, samples // 2], axis=1), RATE)
    whole = audio_features(stereo).fingerprint

    # Blocks far smaller than the recording (and not a whole number of its frames).
    monkeypatch.setattr(signals, "AUDIO_BLOCK_SAMPLES", 999)

    assert np.array_equal(audio_features(stereo).fingerprint, whole)


def test_bytes_in_no_image_format_are_refused_saying_so(service: MemoryService) -> None:
    # Adversarial pass a65: the refusal read "is not an image Pillow can read: cannot
    # identify image file the data" (Pillow's message, its stream's repr taken out).
    text = base64.b64encode(b"root:x:0:0:root:/root:/bin/bash\n" * 4).decode("ascii")
    with pytest.raises(ValidationError) as refused:
        service.recollections.remember("the blue door", image=text)
    assert refused.value.field == "image"
    assert refused.value.message == (
        "is not an image Pillow can read: its bytes are in no image format it knows"
        " (PNG, JPEG, GIF, BMP, TIFF, WebP ...)"
    )
    assert service.stats().count == 0
