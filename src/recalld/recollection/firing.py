"""When a matching memory fires as an involuntary recollection.

A memory fires when one of ``text``, ``image`` or ``audio`` alone reaches
``fire_strong`` (0.9), or when its score is at least ``fire_score`` (0.55)
and two or more channels reach ``fire_channel`` (0.6), at least one of them
an anchor (place, text, image or audio). Time, place, tags or a biometric
reading alone never fires, nor do time and biometrics together. Habituation
(a fired memory stays quiet for ``habituation_seconds``) is enforced by the
store in the same transaction that queues the recollection.
"""

from __future__ import annotations

from recalld.config import Settings

__all__ = ["ANCHORS", "STRONG_ALONE", "fires"]

STRONG_ALONE = ("text", "image", "audio")
# Channels that say *what* or *where*; time, tags and biometrics only support them.
ANCHORS = ("place", "text", "image", "audio")


def fires(channels: dict[str, float], score: float, settings: Settings) -> bool:
    """Whether a memory with these channel similarities and score fires (module docstring)."""
    if any(channels.get(name, 0.0) >= settings.fire_strong for name in STRONG_ALONE):
        return True
    strong = [name for name, value in channels.items() if value >= settings.fire_channel]
    anchored = any(name in ANCHORS for name in strong)
    return score >= settings.fire_score and len(strong) >= 2 and anchored
