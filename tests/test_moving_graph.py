"""``recalld migrate`` run again removes the graph entities and relations the source
deleted since (SQLite → SQLite, and SQLite → PostgreSQL with ``--postgres``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.moving_support import copy_between, moving_settings, target_database


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    return target_database(request, tmp_path)


def _graph(db: Path | str, clock: FakeClock) -> tuple[list[str], list[str]]:
    with MemoryService.open(moving_settings(db), clock=clock) as memory:
        graph = memory.knowledge.read_graph()
        return (
            sorted(entity.name for entity in graph.entities if entity.entity_type == "person"),
            sorted(f"{r.source} {r.relation_type} {r.target}" for r in graph.relations),
        )


def test_migrate_again_removes_the_entities_and_relations_deleted_in_the_source(
    tmp_path: Path, target: Path | str, clock: FakeClock
) -> None:
    source = tmp_path / "source.db"
    people = [{"name": name, "entityType": "person"} for name in ("Bob", "Alice", "Carol")]
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.knowledge.create_entities(people)
        memory.knowledge.create_relations(
            [
                {"from": "Bob", "to": "Alice", "relationType": "knows"},
                {"from": "Bob", "to": "Carol", "relationType": "knows"},
            ]
        )
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        # The target's own: no copy wrote it, so none removes it.
        memory.knowledge.create_entities([{"name": "Dora", "entityType": "person"}])
    assert copy_between(source, target, clock=clock).complete
    assert _graph(target, clock) == (
        ["Alice", "Bob", "Carol", "Dora"],
        ["Bob knows Alice", "Bob knows Carol"],
    )
    clock.advance(5)
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.knowledge.delete_entities(["Alice"])
        memory.knowledge.delete_relations([{"from": "Bob", "to": "Carol", "relationType": "knows"}])
    report = copy_between(source, target, clock=clock)
    assert report.complete, report
    assert _graph(target, clock) == (["Bob", "Carol", "Dora"], [])
    assert report.removed["graph_entities"] == 1
    assert report.removed["graph_relations"] == 1
    assert report.scrub == "done"
    # A run again finds nothing more to remove.
    assert copy_between(source, target, clock=clock).removed["graph_entities"] == 0


def test_migrate_says_which_graph_rows_it_removed(tmp_path: Path, clock: FakeClock) -> None:
    # The text report names what the run deleted from the target, as it names the
    # memories it removed (--json has them under "removed").
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    people = [{"name": name, "entityType": "person"} for name in ("Bob", "Alice", "Carol")]
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.knowledge.create_entities(people)
        memory.knowledge.create_relations([{"from": "Bob", "to": "Carol", "relationType": "knows"}])
    assert copy_between(source, target, clock=clock).complete
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.knowledge.delete_entities(["Alice"])
        memory.knowledge.delete_relations([{"from": "Bob", "to": "Carol", "relationType": "knows"}])
    result = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert result.exit_code == 0, result.output
    assert (
        "removed 1 graph entity (with its relations) and 1 graph relation the source deleted"
        in " ".join(result.output.split())  # as wrapped to the console's width
    )


def test_migrate_copies_the_tombstones_of_deleted_entities(
    tmp_path: Path, target: Path | str, clock: FakeClock
) -> None:
    # An entity the knowledge tools deleted stays deleted in the copy (adversarial pass
    # e65): without its tombstone, the target's first rebuild extracted it again.
    source = tmp_path / "tombstones.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.remember("Anna went to Oslo.")
        memory.new_worker().run_until_idle()
        memory.knowledge.delete_entities(["Anna"])
    assert copy_between(source, target, clock=clock).complete
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        memory.graph.rebuild()
        memory.new_worker().run_until_idle()
        names = {entity.name for entity in memory.graph.entities().entities}
    assert "Oslo" in names
    assert "Anna" not in names


def test_migrate_renumbers_a_tombstone_to_the_targets_memories(
    tmp_path: Path, target: Path | str, clock: FakeClock
) -> None:
    # Review of pass e65: the tombstone's last memory before the deletion was copied as
    # the source's seq, not the target's: into a target whose numbers run ahead (it held
    # memories already) the copied memory was past it, and Anna came back at the first
    # rebuild; one whose numbers lag (the source forgot many) buried Anna in a memory
    # written after the deletion, which names her anew.
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        for number in range(3):
            memory.remember(f"a note of the target {number}")
    source = tmp_path / "renumbered.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.remember("Anna went to Oslo.")
        memory.remember("Bruno went to Rome.")
        memory.new_worker().run_until_idle()
        memory.knowledge.delete_entities(["Anna", "Bruno"])
        memory.remember("Bruno came back from Rome.")
        for number in range(6):
            memory.forget(memory.remember(f"a note forgotten {number}").id)
        memory.remember("Anna came back from Oslo.")
        memory.new_worker().run_until_idle()
    assert copy_between(source, target, clock=clock).complete
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        memory.graph.rebuild()
        memory.new_worker().run_until_idle()
        mentions = {
            name: [mention.prompt_line for mention in memory.graph.entity(name).mentions]
            for name in ("Anna", "Bruno")
        }
    # Each is named by the memory written after its deletion only.
    assert [line.endswith("came back from Oslo.") for line in mentions["Anna"]] == [True]
    assert [line.endswith("came back from Rome.") for line in mentions["Bruno"]] == [True]
