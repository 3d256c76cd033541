"""``MemoryService.put(signals=..., biometrics=...)`` checks the senses as an import does:
what it stored unchecked (16 arbitrary bytes as an image's features) an export wrote and
its import refused, so the export did not import whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.context.signals import HISTOGRAM_BINS, ImageFeatures
from recalld.errors import ValidationError
from recalld.service import MemoryService


def _service(path: Path) -> MemoryService:
    return MemoryService.open(Settings(db=path, embedder="none"))


@pytest.mark.parametrize(
    ("signals", "field"),
    [
        ({"image": b"\x00" * 16}, "signals.image"),
        ({"audio": b"\x00" * 6}, "signals.audio"),
        ({"smell": b"\x00" * 8}, "signals"),
        ({"image": "not bytes"}, "signals.image"),
    ],
)
def test_put_refuses_signals_an_import_would_refuse_and_stores_nothing(
    tmp_path: Path, signals: dict[str, bytes], field: str
) -> None:
    with _service(tmp_path / "m.db") as service:
        with pytest.raises(ValidationError) as refused:
            service.put({"content": "the beach at dusk"}, signals=signals)
        assert refused.value.field == field
        assert service.stats().count == 0


def test_put_refuses_a_reading_that_is_not_a_finite_number(tmp_path: Path) -> None:
    with _service(tmp_path / "m.db") as service:
        with pytest.raises(ValidationError) as refused:
            service.put({"content": "a run"}, biometrics={"heart_rate": float("nan")})
        assert refused.value.field == "biometrics"
        assert service.stats().count == 0


def test_put_with_checked_senses_exports_and_imports_whole(tmp_path: Path) -> None:
    features = ImageFeatures(phash=7, histogram=(1 / HISTOGRAM_BINS,) * HISTOGRAM_BINS)
    with _service(tmp_path / "a.db") as source:
        source.put(
            {"content": "the beach at dusk"},
            signals={"image": features.to_bytes()},
            biometrics={"heart_rate": 61.0},
        )
        lines = list(source.export())
    with _service(tmp_path / "b.db") as target:
        report = target.import_lines(lines)
        assert report.errors == []
        assert target.stats().count == 1
