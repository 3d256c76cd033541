"""A tiny image model for the plug-in test: mean colour per quadrant (deterministic).

Used as ``RECALLD_IMAGE_ENCODER=tests.image_plugin:create``; it stands in for a
user-supplied model (e.g. a CLIP export) without any weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class QuadrantColours:
    """Embeds an image as the mean RGB of each quadrant (12 numbers)."""

    def __call__(self, image: Any) -> np.ndarray:
        pixels = np.asarray(image.resize((2, 2)), dtype=np.float32).ravel()
        return pixels + 1.0


def create() -> QuadrantColours:
    """The factory named in the setting."""
    return QuadrantColours()
