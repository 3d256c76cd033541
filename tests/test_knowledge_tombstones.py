"""An entity the knowledge tools deleted stays deleted (adversarial pass e65): ``graph
rebuild`` (or any re-extraction of a memory written before the deletion) brought an
extracted entity back, mentions and relations with it. A memory written after the deletion
names it anew; declaring it again lifts the tombstone. The tombstone keeps only a hash of
the key."""

from __future__ import annotations

from pathlib import Path

import apsw

from recalld.config import Settings
from recalld.service import MemoryService


def _settings(database: Path | str) -> Settings:
    return Settings(db=database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def _names(service: MemoryService, namespace: str | None = None) -> set[str]:
    return {entity.name for entity in service.graph.entities(namespace=namespace).entities}


def _rebuild(service: MemoryService, namespace: str | None = None) -> None:
    service.graph.rebuild([namespace] if namespace else None)
    service.new_worker().run_until_idle()


def test_deleted_extracted_entity_stays_deleted_after_a_rebuild(
    any_database: Path | str,
) -> None:
    with MemoryService.open(_settings(any_database)) as service:
        service.remember("Kate: my sister Anna moved to Porto.")
        service.new_worker().run_until_idle()
        assert {"Anna", "Porto"} <= _names(service)
        report = service.knowledge.delete_entities(["Anna"])
        assert report.deleted == ["Anna"]
        _rebuild(service)
        names = _names(service)
        # Before: Anna was extracted again from the same memory, as if never deleted.
        assert "Anna" not in names
        assert "Porto" in names
        relations = service.graph.relations().relations
        assert all("Anna" not in (relation.subject, relation.object) for relation in relations)
        # An edit of that memory re-extracts it: still gone.
        memory = service.list_memories(limit=1).memories[0]
        service.update(memory.id, content="Kate: my sister Anna moved to Porto, then Lisbon.")
        service.new_worker().run_until_idle()
        assert "Anna" not in _names(service)
        assert "Lisbon" in _names(service)


def test_a_memory_written_after_the_deletion_names_the_entity_again(
    any_database: Path | str,
) -> None:
    with MemoryService.open(_settings(any_database)) as service:
        service.remember("Anna went to Oslo.")
        service.new_worker().run_until_idle()
        service.knowledge.delete_entities(["Anna"])
        service.remember("Anna came back from Oslo.")
        service.new_worker().run_until_idle()
        assert "Anna" in _names(service)
        detail = service.graph.entity("Anna")
        # Named by the new memory only: the old one stays out of it.
        assert [
            mention.prompt_line.endswith("came back from Oslo.") for mention in detail.mentions
        ] == [True]


def test_declaring_a_deleted_entity_again_lifts_its_tombstone(any_database: Path | str) -> None:
    with MemoryService.open(_settings(any_database)) as service:
        service.remember("Anna went to Oslo.")
        service.new_worker().run_until_idle()
        service.knowledge.delete_entities(["Anna"])
        created = service.knowledge.create_entities([{"name": "Anna", "entityType": "person"}])
        assert [entity.name for entity in created] == ["Anna"]
        _rebuild(service)
        assert service.graph.entity("Anna").entity.mentions == 1


def test_tombstones_stay_in_their_namespace(any_database: Path | str) -> None:
    with MemoryService.open(_settings(any_database)) as service:
        for namespace in ("alpha", "beta"):
            service.remember("Anna went to Oslo.", namespace=namespace)
        service.new_worker().run_until_idle()
        service.knowledge.delete_entities(["Anna"], namespace="alpha")
        _rebuild(service, "alpha")
        _rebuild(service, "beta")
        assert "Anna" not in _names(service, "alpha")
        assert "Anna" in _names(service, "beta")


def test_a_tombstone_keeps_no_name(tmp_path: Path) -> None:
    database = tmp_path / "hash.db"
    with MemoryService.open(_settings(database)) as service:
        service.remember("Zebulon went to Oslo.")
        service.new_worker().run_until_idle()
        service.knowledge.delete_entities(["Zebulon"])
    connection = apsw.Connection(str(database))
    try:
        rows = connection.execute(
            "SELECT namespace, key_hash FROM graph_entity_tombstones"
        ).fetchall()
    finally:
        connection.close()
    assert len(rows) == 1
    assert "zebulon" not in str(rows[0]).lower()
