"""An export's ``recalld.senses`` lines read back: an experience's derived features and
biometric readings (:mod:`recalld.transfer` writes and imports them)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from recalld import _validate as check
from recalld.errors import ValidationError
from recalld.model import ImportReport
from recalld.store.base import Store

__all__ = ["MAX_SIGNAL_BYTES", "checked_senses", "import_senses"]

# A sense's derived features are small (an image's: ~2 KiB; a song's fingerprint: ~10 KiB).
MAX_SIGNAL_BYTES = 1024 * 1024


def checked_senses(
    signals: Mapping[str, Any], readings: Mapping[str, Any]
) -> tuple[dict[str, bytes], dict[str, float]]:
    """``signals`` (channel → serialised features) and biometric ``readings`` as an import
    checks them, for :meth:`MemoryService.put`; raises ValidationError naming the field.

    What ``put`` stored unchecked (16 arbitrary bytes as an image's features) an export
    wrote and its import refused ("16 bytes are not image features"): the export did not
    import whole."""
    from recalld.context.signals import check_biometrics, checked_features

    features: dict[str, bytes] = {}
    for channel, data in signals.items():
        if channel not in ("image", "audio"):
            raise ValidationError("signals", f"a channel is image or audio, not {channel!r}")
        if not isinstance(data, bytes) or len(data) > MAX_SIGNAL_BYTES:
            raise ValidationError(
                f"signals.{channel}", f"must be bytes, at most {MAX_SIGNAL_BYTES} of them"
            )
        features[channel] = checked_features(channel, data, f"signals.{channel}")
    return features, check_biometrics(dict(readings))


def import_senses(store: Store, namespace: str, value: Any, report: ImportReport) -> None:
    """Store the senses of a ``recalld.senses`` line (``value``) for its memory in
    ``namespace``; raises ValidationError naming the field that is wrong."""
    from recalld.context.signals import check_biometrics, checked_features

    memory_id = check.memory_id(value.get("id"))
    signals = value.get("signals", {})
    readings = value.get("biometrics", {})
    if not isinstance(signals, dict) or not isinstance(readings, dict):
        raise ValidationError("signals", "signals and biometrics must be JSON objects")
    features: dict[str, bytes] = {}
    for channel, text in signals.items():
        if channel not in ("image", "audio"):
            raise ValidationError("signals", f"a channel is image or audio, not {channel!r}")
        if not isinstance(text, str) or len(text) > MAX_SIGNAL_BYTES * 4 // 3 + 4:
            raise ValidationError(
                f"signals.{channel}", f"must be base64 of at most {MAX_SIGNAL_BYTES} bytes"
            )
        try:
            data = base64.b64decode(text, validate=True)
        except binascii.Error:
            raise ValidationError(f"signals.{channel}", "is not valid base64") from None
        features[channel] = checked_features(channel, data, f"signals.{channel}")
    # Names an older version kept with spaces at their ends (" heart_rate ") come back
    # trimmed, as names are checked now, so the line is not refused for them.
    trimmed = {
        name.strip() if isinstance(name, str) else name: value for name, value in readings.items()
    }
    if len(trimmed) < len(readings):
        raise ValidationError("biometrics", "two readings have the same name once trimmed")
    checked = check_biometrics(trimmed)
    with store.transaction() as tx:
        memory = tx.find(namespace, id=memory_id)
        if memory is None:
            raise ValidationError("id", f"no memory {memory_id!r} in {namespace!r}")
        context = store.context
        before = (
            context.signals([memory.seq]).get(memory.seq, {}),
            context.biometrics([memory.seq]).get(memory.seq, {}),
        )
        if before == (features, checked):
            report.count("unchanged", "senses")
            return
        tx.save_signals(memory.seq, features, checked)
    report.count("updated" if any(before) else "created", "senses")
