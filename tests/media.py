"""Synthetic media for the context tests: melodies as WAV, patterned images as PNG."""

from __future__ import annotations

import io

import numpy as np
import soundfile
from PIL import Image

RATE = 11_025


def melody(seed: int, seconds: int = 12, noise: float = 0.0) -> bytes:
    """A WAV file of a random tune (same seed, same tune), optionally with white noise."""
    generator = np.random.default_rng(seed)
    notes = generator.choice([220, 247, 262, 294, 330, 349, 392, 440, 494, 523], size=seconds * 4)
    beat = np.arange(int(RATE * 0.25)) / RATE
    envelope = np.minimum(1, 10 * beat) * np.exp(-3 * beat)
    signal = np.concatenate(
        [
            envelope
            * (
                np.sin(2 * np.pi * f * beat)
                + 0.5 * np.sin(4 * np.pi * f * beat)
                + 0.25 * np.sin(6 * np.pi * f * beat)
            )
            for f in notes
        ]
    )
    if noise:
        signal = signal + noise * np.random.default_rng(seed + 1000).standard_normal(len(signal))
    signal = signal / np.max(np.abs(signal))
    buffer = io.BytesIO()
    soundfile.write(buffer, (signal * 30_000).astype(np.int16), RATE, format="WAV")
    return buffer.getvalue()


def picture(seed: int, brighten: int = 0, size: int = 128) -> bytes:
    """A PNG of random coloured blocks (same seed, same picture), optionally brightened."""
    generator = np.random.default_rng(seed)
    blocks = generator.integers(0, 200, size=(8, 8, 3), dtype=np.uint16)
    pixels = np.kron(blocks, np.ones((size // 8, size // 8, 1), dtype=np.uint16)) + brighten
    image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
