"""What names a memory that expired between export and import is skipped with it, not
refused (adversarial pass d69): its memory line was skipped as expired, then its
`recalld.senses` line, and the whole `recalld.entity` line observing it, were errors
("no memory ..."): the entity was lost and the import of a whole, untouched export
reported a failure (the CLI exited 1)."""

from __future__ import annotations

import json
from pathlib import Path

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock


def test_import_skips_the_senses_of_an_experience_expired_since_the_export(
    service: MemoryService, clock: FakeClock, tmp_path: Path
) -> None:
    service.put(
        {"content": "a short-lived experience", "ttl_seconds": 60},
        biometrics={"heart_rate": 90.0},
    )
    service.remember("a lasting note")
    lines = list(service.export())
    assert any(json.loads(line).get("type") == "recalld.senses" for line in lines)
    clock.advance(120)  # the experience expires before the export is imported
    fresh = Settings(db=tmp_path / "fresh.db", embedder="none")
    with MemoryService.open(fresh, clock=clock) as copy:
        report = copy.import_lines(lines)
        assert report.errors == []
        assert (report.created, report.skipped) == (1, 2)  # the note; the memory, its senses
        assert [memory.content for memory in copy.list_memories().memories] == ["a lasting note"]


def test_import_still_refuses_senses_naming_no_memory_of_the_file(
    service: MemoryService, clock: FakeClock
) -> None:
    line = {
        "type": "recalld.senses",
        "namespace": "default",
        "id": "01M99K12CZB23KNCVHR4SZ5N3M",
        "signals": {},
        "biometrics": {"heart_rate": 90.0},
    }
    report = service.import_lines([json.dumps(line)])
    assert [error.line for error in report.errors] == [1]
    assert "no memory" in report.errors[0].error


def test_import_keeps_an_entity_whose_observed_memory_expired_since_the_export(
    settings: Settings, clock: FakeClock, tmp_path: Path
) -> None:
    with MemoryService.open(settings, clock=clock) as service:
        _receipt, brief = service.put({"content": "Ada visited", "ttl_seconds": 60})
        lasting = service.remember("Ada lives in London")
        entity = {
            "type": "recalld.entity",
            "name": "Ada",
            "entity_type": "person",
            "observations": [brief.id, lasting.id],
        }
        assert service.import_lines([json.dumps(entity)]).errors == []
        lines = list(service.export())
    clock.advance(120)
    fresh = Settings(db=tmp_path / "fresh.db", embedder="none")
    with MemoryService.open(fresh, clock=clock) as copy:
        report = copy.import_lines(lines)
        assert report.errors == []  # the whole entity line was refused
        exported = [json.loads(line) for line in copy.export()]
    entities = [line for line in exported if line.get("type") == "recalld.entity"]
    assert [(line["name"], line["observations"]) for line in entities] == [("Ada", [lasting.id])]
