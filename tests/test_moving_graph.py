"""``recalld migrate`` run again brings the target's knowledge graph up to date: an entity
declared, renamed or retyped in the source since, and a relation declared there since, are
so in the target (the newer side wins, as for memories). Into each store."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock

BAKERY = "Bartholomew Quagmire's bakery is in Ouagadougou."


def _settings(db: Path | str) -> Settings:
    return Settings(
        db=db, synchronous="NORMAL", embedder="none", graph_extractor="rules", recall_catch_up=0
    )


def _migrate(source: Path, target: Path | str) -> None:
    result = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert result.exit_code == 0, result.output


def test_migrate_again_carries_an_entity_and_a_relation_declared_in_the_source(
    tmp_path: Path, any_database: Path | str, clock: FakeClock
) -> None:
    source = tmp_path / "source.db"
    with MemoryService.open(_settings(source), clock=clock) as memory:
        said = memory.remember(BAKERY).id
        memory.new_worker().run_until_idle()
    _migrate(source, any_database)
    clock.advance(60)
    with MemoryService.open(_settings(source), clock=clock) as memory:
        memory.knowledge.create_entities(
            [{"name": "bartholomew quagmire", "entityType": "baker", "observations": []}]
        )
        memory.knowledge.create_relations(
            [{"from": "Bartholomew Quagmire", "to": "bakery", "relationType": "has"}]
        )
    _migrate(source, any_database)
    with MemoryService.open(_settings(any_database), clock=clock) as memory:
        detail = memory.graph.entity("bartholomew quagmire").entity
        assert (detail.name, detail.type, detail.declared) == (
            "bartholomew quagmire",
            "baker",
            True,
        )
        [relation] = memory.graph.relations(entity="bartholomew quagmire").relations
        assert relation.declared
        # Declared, they outlive the memory that named them (as in the source).
        assert memory.forget(said).deleted
        assert memory.graph.entity("bakery").entity.declared
        assert [(r.subject, r.predicate, r.object) for r in memory.graph.relations().relations] == [
            ("bartholomew quagmire", "has", "bakery")
        ]


def test_migrate_again_keeps_what_the_target_declared_since(
    tmp_path: Path, any_database: Path | str, clock: FakeClock
) -> None:
    source = tmp_path / "source.db"
    with MemoryService.open(_settings(source), clock=clock) as memory:
        memory.remember(BAKERY)
        memory.new_worker().run_until_idle()
    _migrate(source, any_database)
    clock.advance(60)
    with MemoryService.open(_settings(source), clock=clock) as memory:
        memory.knowledge.create_entities([{"name": "BAKERY", "entityType": "shop"}])
    clock.advance(60)
    with MemoryService.open(_settings(any_database), clock=clock) as memory:
        memory.knowledge.create_entities([{"name": "Bakery", "entityType": "business"}])
    _migrate(source, any_database)
    with MemoryService.open(_settings(any_database), clock=clock) as memory:
        detail = memory.graph.entity("bakery").entity
        assert (detail.name, detail.type) == ("Bakery", "business")
