"""``recalld migrate`` run again, into a target that holds memories, and its report
(SQLite → SQLite; the PostgreSQL paths are in :mod:`tests.test_moving`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import apsw
import psycopg
import pytest
from click.testing import CliRunner

from recalld import moving
from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.errors import ConflictError, NotFoundError
from recalld.service import MemoryService
from recalld.store.tables import COPIED_TABLES, Table
from tests.conftest import FakeClock
from tests.moving_support import copy_between, moving_settings


class InterruptedCopyError(Exception):
    pass


def _stop_after_the_memories(table: str, done: int, total: int) -> None:
    if table == "memory_signals":
        raise InterruptedCopyError


def _database_bytes(db: Path) -> bytes:
    return b"".join(path.read_bytes() for path in db.parent.glob(db.name + "*") if path.is_file())


def test_migrate_again_removes_what_the_source_forgot_and_updates_what_it_changed(
    tmp_path: Path, clock: FakeClock
) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        own = memory.remember("The target's own note").id
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.remember_many([{"content": f"filler {index}"} for index in range(3)])
        secret = memory.put({"content": "My bank PIN is 4821"}, biometrics={"heart_rate": 91.0})[
            1
        ].id
        memory.remember("The office is on floor 3", key="office.floor")
        memory.core.apply("user", [{"action": "add", "content": "PIN hint: 4821"}])
    with pytest.raises(InterruptedCopyError):
        copy_between(source, target, progress=_stop_after_the_memories)
    clock.advance(60)
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.forget(secret)
        memory.remember("The office is on floor 7", key="office.floor")
        memory.core.apply("user", [{"action": "remove", "old_text": "PIN hint"}])
    report = copy_between(source, target)
    assert report.removed["memories"] == 1
    assert report.updated["memories"] == 1
    assert report.updated["core_memory"] == 1
    assert report.scrub == "done"
    assert report.complete
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        with pytest.raises(NotFoundError):
            memory.get(secret)
        assert memory.get(key="office.floor").content == "The office is on floor 7"
        assert memory.core.state("user").entries == []
        assert memory.get(own).content == "The target's own note"
        assert memory.stats().count == 5
        biometrics = next(table for table in COPIED_TABLES if table.name == "memory_biometrics")
        readings = memory.store.tables.count(biometrics)
    assert readings == 0
    assert b"4821" not in _database_bytes(target)
    again = copy_between(source, target)
    assert sum(again.copied.values()) + sum(again.updated.values()) == 0
    assert again.removed["memories"] == 0


def test_migrate_reports_rows_whose_memory_was_written_during_the_copy(
    tmp_path: Path, clock: FakeClock
) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.remember_many([{"content": f"memory {index}"} for index in range(3)])
    with MemoryService.open(moving_settings(source), clock=clock) as writer:
        late: list[str] = []

        def write_during_the_copy(table: str, done: int, total: int) -> None:
            if table == "memory_signals" and not late:
                written = writer.put({"content": "late"}, biometrics={"heart_rate": 88.0})
                late.append(written[1].id)

        report = copy_between(source, target, progress=write_during_the_copy)
    assert report.left["memory_biometrics"] == 1
    assert report.skipped["memory_biometrics"] == 0
    assert not report.complete
    finished = copy_between(source, target)
    assert finished.complete
    assert finished.copied["memories"] == 1
    assert finished.copied["memory_biometrics"] == 1


def test_migrate_refuses_a_target_memory_of_the_same_id_that_is_another_memory(
    tmp_path: Path, clock: FakeClock
) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.put({"content": "Ran 10 km", "id": "evt-1"}, biometrics={"heart_rate": 172.0})
        memory.remember("Another note of the source")
    clock.advance(5)
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        memory.remember("Quiet evening reading", id="evt-1")
    with pytest.raises(ConflictError) as caught:
        copy_between(source, target)
    assert caught.value.field == "id"
    assert "'evt-1'" in caught.value.message
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        kept = memory.get("evt-1")
        assert kept.content == "Quiet evening reading"
        assert memory.store.context.biometrics([kept.seq]) == {}
        assert memory.stats().count == 1


def test_migrate_refuses_core_memory_the_target_holds_otherwise_before_writing(
    tmp_path: Path, clock: FakeClock
) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.remember("A note of the source")
        memory.core.apply("user", [{"action": "add", "content": "Allergic to penicillin"}])
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        memory.core.apply("user", [{"action": "add", "content": "Name: Sam"}])
    with pytest.raises(ConflictError) as caught:
        copy_between(source, target)
    assert caught.value.field == "core_memory"
    assert "'user'" in caught.value.message
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert memory.core.state("user").entries == ["Name: Sam"]
        assert memory.stats().count == 0


def test_migrate_refuses_a_memory_an_older_version_stored_with_a_nul_in_meta(
    tmp_path: Path, clock: FakeClock
) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.remember_many([{"content": f"note {index}"} for index in range(3)])
        bad = memory.remember("scanned receipt", meta={"ocr": "TOTAL"}).id
    connection = apsw.Connection(str(source))  # as an older version accepted it
    connection.execute(
        "UPDATE memories SET meta = ? WHERE id = ?", (json.dumps({"ocr": "TOTAL\x00 1"}), bad)
    )
    connection.close()
    result = CliRunner().invoke(
        cli, ["--db", str(source), "migrate", "--to", str(target), "--json"]
    )
    assert result.exit_code == 1, result.output
    assert f"memory {bad!r} in 'default': meta.ocr: contains a NUL" in result.output
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert memory.stats().count == 3
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.update(bad, meta={"ocr": "TOTAL 1"})
    again = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert again.exit_code == 0, again.output
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert memory.get(bad).meta == {"ocr": "TOTAL 1"}


def test_migrate_json_counts_the_rows_it_inserted(tmp_path: Path, clock: FakeClock) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.remember_many([{"content": f"memory number {index}"} for index in range(10)])
        memory.new_worker().run_until_idle()
    arguments = ["migrate", "--from", str(source), "--to", str(target), "--json"]
    first = json.loads(CliRunner().invoke(cli, arguments).output.strip().splitlines()[-1])
    assert (first["copied"]["vectors"], first["skipped"]["vectors"]) == (10, 0)
    second = json.loads(CliRunner().invoke(cli, arguments).output.strip().splitlines()[-1])
    assert (second["copied"]["vectors"], second["skipped"]["vectors"]) == (0, 10)


def test_migrate_into_a_missing_directory_blames_the_path_not_db(tmp_path: Path) -> None:
    # Pass c59's review: the error said "a mistyped --db?" of the --to target.
    source = tmp_path / "source.db"
    CliRunner().invoke(cli, ["--db", str(source), "remember", "kept"])
    target = tmp_path / "missing" / "copy.db"
    result = CliRunner().invoke(cli, ["migrate", "--from", str(source), "--to", str(target)])
    assert result.exit_code == 1
    message = result.output + str(result.exception)
    assert "cannot be created there (a mistyped path?)" in message
    assert "--db" not in message
    assert not target.parent.exists()


def test_migrate_from_a_missing_file_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    missing, target = tmp_path / "mistyped.db", tmp_path / "target.db"
    result = CliRunner().invoke(cli, ["migrate", "--from", str(missing), "--to", str(target)])
    assert result.exit_code == 1
    assert str(missing) in str(result.exception)
    assert not missing.exists()
    assert not target.exists()


def test_migrate_again_carries_a_reminder_cancelled_in_the_source(
    tmp_path: Path, clock: FakeClock
) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        reminder = memory.remind("ask Anna about the move", mention=["Anna"])
    copy_between(source, target)
    clock.advance(60)
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.cancel(reminder.id)
    report = copy_between(source, target)
    assert report.updated["intentions"] == 1
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert [item.state for item in memory.intentions(state="all")] == ["cancelled"]


def test_migrate_again_never_takes_back_what_was_done_in_the_target_since(
    tmp_path: Path, clock: FakeClock
) -> None:
    # After the switch to the new store, a run again (to be sure) took the source's older
    # rows back: a revoked token worked again, a cancelled reminder fired, an edit was lost.
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        note = memory.remember("The staging password rotates monthly").id
        reminder = memory.remind("ask Anna about the move", mention=["Anna"])
        memory.core.apply("user", [{"action": "add", "content": "Works at Acme"}])
    copy_between(source, target)
    clock.advance(60)
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        memory.update(note, content="The staging password rotates on Mondays")
        memory.cancel(reminder.id)
        memory.core.apply("user", [{"action": "patch", "old_text": "Acme", "content": "Initech"}])
    report = copy_between(source, target)
    assert report.complete
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert memory.get(note).content == "The staging password rotates on Mondays"
        assert [item.state for item in memory.intentions(state="all")] == ["cancelled"]
        assert memory.core.state("user").entries == ["Works at Initech"]


def test_migrate_again_never_queues_again_what_the_target_delivered(
    tmp_path: Path, clock: FakeClock
) -> None:
    # A recollection and a reminder queued in the source, copied, then delivered by the
    # target: a run again copied them into its queue once more (delivered twice).
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    cafe = {"lat": 48.8642, "lon": 2.3475}
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        croissant = memory.recollections.remember("Croissant with Léa", place=cafe, tags=["lea"])
        memory.remind("ask Anna about the move", mention=["Anna"])
        cue = memory.recollections.cue(text="Croissant with Léa; Anna called", place=cafe)
        assert len(memory.recollections.sense(cue)) == 2
    copy_between(source, target)
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        delivered = memory.recollections.pending()
    assert sorted(item.kind for item in delivered) == ["recollection", "reminder"]
    report = copy_between(source, target)
    assert report.complete
    assert report.copied["pending_recollections"] == 0
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert memory.recollections.pending() == []
    # Nor when the memory changed in the source since: the target's copy is replaced.
    clock.advance(60)
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.update(croissant.id, content="Croissant with Léa at the corner café")
    report = copy_between(source, target)
    assert report.updated["memories"] == 1
    assert report.copied["pending_recollections"] == 0
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert memory.recollections.pending() == []


@pytest.mark.parametrize("kind", ["recollection", "reminder"])
def test_migrate_again_queues_what_the_target_still_held_of_a_memory_the_source_changed(
    tmp_path: Path, clock: FakeClock, kind: str
) -> None:
    # Copied, not yet delivered in the target, then the memory changed in the source: the
    # run replaced the target's copy (its queued item went with its row) and took the
    # source's item for one the target had delivered, so it was never delivered at all.
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    cafe = {"lat": 48.8642, "lon": 2.3475}
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        if kind == "recollection":
            fired = memory.recollections.remember("Croissant with Léa", place=cafe).id
            cue = memory.recollections.cue(place=cafe)
        else:
            fired = memory.remind("ask Anna about the move", mention=["Anna"]).id
            cue = memory.recollections.cue(text="Anna called")
        assert len(memory.recollections.sense(cue)) == 1
    copy_between(source, target)
    clock.advance(60)
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.update(fired, content="Changed since: ask Léa and Anna")
    report = copy_between(source, target)
    assert report.updated["memories"] == 1
    assert report.copied["pending_recollections"] == 1
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        queued = memory.recollections.pending()
    assert [(item.kind, item.memory.content) for item in queued] == [
        (kind, "Changed since: ask Léa and Anna")
    ]


def test_migrate_interrupted_after_the_trigger_history_queues_its_firings_when_it_finishes(
    tmp_path: Path, clock: FakeClock
) -> None:
    # The history was copied, the queue not yet: the run that finished the copy took the
    # firings the history knew for ones the target had delivered, and queued none.
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    cafe = {"lat": 48.8642, "lon": 2.3475}
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.recollections.remember("Croissant with Léa", place=cafe)
        memory.remind("ask Anna about the move", mention=["Anna"])
        cue = memory.recollections.cue(text="Croissant with Léa; Anna called", place=cafe)
        assert len(memory.recollections.sense(cue)) == 2

    def stop_after_the_history(table: str, done: int, total: int) -> None:
        if table == "recollection_triggers":
            raise InterruptedCopyError

    with pytest.raises(InterruptedCopyError):
        copy_between(source, target, progress=stop_after_the_history)
    assert copy_between(source, target).complete
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        queued = memory.recollections.pending()
    assert sorted(item.kind for item in queued) == ["recollection", "reminder"]


def test_migrate_again_holds_only_the_target_s_firings_the_source_still_queues(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run again read the target's whole trigger history into memory (some 170 MB a
    # million firings) to tell a delivered item, where only the source's queued items are
    # ever looked up.
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    cafe = {"lat": 48.8642, "lon": 2.3475}
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.recollections.remember("Croissant with Léa", place=cafe)
        for _ in range(6):  # five delivered, the last one waiting
            assert len(memory.recollections.pending()) <= 1
            clock.advance(24 * 3600)  # past the habituation, at the same hour
            assert len(memory.recollections.sense(memory.recollections.cue(place=cafe))) == 1
    copy_between(source, target)
    held: list[int] = []
    learn = moving._Copier.learn_firings

    def learn_and_count(self: moving._Copier, tables: dict[str, Table]) -> None:
        learn(self, tables)
        held.append(len(self.fired_there) + len(self.queued_there))

    monkeypatch.setattr(moving._Copier, "learn_firings", learn_and_count)
    assert copy_between(source, target).complete
    assert held == [2]  # the waiting item's firing, and the item (not the six firings)
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert len(memory.recollections.pending()) == 1


def test_migrate_again_copies_no_row_of_the_older_text_onto_a_memory_edited_in_the_target(
    tmp_path: Path, clock: FakeClock
) -> None:
    # The edit stayed, but the source's graph mentions of the text before it were written
    # onto the edited memory (review 51i): it read as mentioning a bakery in Ouagadougou
    # that its text no longer names. No row its older text gave (its graph mentions, its
    # vector) is copied onto it now.
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        note = memory.remember(
            "Bartholomew Quagmire runs a bakery in Ouagadougou.", tags=["baking"]
        ).id
        memory.new_worker().run_until_idle()
    copy_between(source, target)
    clock.advance(60)
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        memory.update(note, content="Zedekiah plays chess in Reykjavik.", tags=["chess"])
        memory.new_worker().run_until_idle()
        tags = memory.get(note).tags
        mentioned = sorted(
            item.entity.name for item in memory.graph.entities_of_memory(note).entities
        )
    assert "Ouagadougou" not in mentioned
    report = copy_between(source, target)
    assert report.complete
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert memory.get(note).content == "Zedekiah plays chess in Reykjavik."
        assert memory.get(note).tags == tags == ["chess"]
        assert (
            sorted(item.entity.name for item in memory.graph.entities_of_memory(note).entities)
            == mentioned
        )
        assert [hit.memory.id for hit in memory.search("chess Reykjavik", limit=1)] == [note]
        # Nor do the entities only the older text named come back, unmentioned (review
        # 52: they stayed in the target's tables, and forget could not remove them).
        names = {entity.name for entity in memory.graph.entities(limit=100).entities}
        assert names.isdisjoint({"Bartholomew Quagmire", "Ouagadougou", "baking"}), names
        memory.forget(note)
    with apsw.Connection(str(target)) as connection:
        assert list(connection.execute("SELECT name FROM graph_entities")) == []


def test_migrate_again_queues_a_source_firing_with_the_text_of_the_target_s_edit(
    tmp_path: Path, clock: FakeClock
) -> None:
    # The source fired a memory the target had edited since the last run: the copied queue
    # item kept the source's line, and pending handed out the text the edit removed.
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    cafe = {"lat": 48.8642, "lon": 2.3475}
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        pin = memory.recollections.remember("My PIN is 4821, said at the café", place=cafe)
    copy_between(source, target)
    clock.advance(60)
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        memory.update(pin.id, content="The PIN was said at the café (removed)")
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        assert len(memory.recollections.sense(memory.recollections.cue(place=cafe))) == 1
    report = copy_between(source, target)
    assert report.copied["pending_recollections"] == 1
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        queued = memory.recollections.pending()
    assert [item.memory.content for item in queued] == ["The PIN was said at the café (removed)"]
    assert "4821" not in queued[0].prompt_line
    assert "(removed)" in queued[0].prompt_line


def test_migrate_again_holds_only_the_target_s_edits_the_source_queued(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run again held every memory edited in the target (its whole text) to rewrite the
    # queued items of the source, where only the few the source queued are ever used.
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    cafe = {"lat": 48.8642, "lon": 2.3475}
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        fired = memory.recollections.remember("Croissant with Léa", place=cafe).id
        others = [memory.remember(f"A note on the move, part {index}").id for index in range(4)]
    copy_between(source, target)
    clock.advance(60)
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        for memory_id in [fired, *others]:
            memory.update(memory_id, content=f"Edited in the target: {memory_id}")
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        assert len(memory.recollections.sense(memory.recollections.cue(place=cafe))) == 1
    held: list[int] = []
    copy_memories = moving._Copier.memories

    def copy_and_count(self: moving._Copier) -> None:
        copy_memories(self)
        held.append(len(self.edits))

    monkeypatch.setattr(moving._Copier, "memories", copy_and_count)
    assert copy_between(source, target).complete
    assert held == [1]
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        queued = memory.recollections.pending()
    assert [item.memory.content for item in queued] == [f"Edited in the target: {fired}"]


@pytest.mark.spacy
def test_migrate_again_copies_no_relation_of_the_older_text_onto_a_memory_edited_there(
    tmp_path: Path, clock: FakeClock
) -> None:
    # The relations of the older text kept the edited memory as their source (review 52):
    # invisible through the API, and left in the tables once the memory was forgotten.
    def spacy(db: Path) -> Settings:
        return Settings(db=db, synchronous="NORMAL", embedder="none", recall_catch_up=0)

    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(spacy(source), clock=clock) as memory:
        note = memory.remember("Alice Johnson founded Acme Corporation in Paris.").id
        memory.new_worker().run_until_idle()
        assert memory.graph.relations(entity="Alice Johnson").relations
    copy_between(source, target)
    clock.advance(60)
    with MemoryService.open(spacy(target), clock=clock) as memory:
        memory.update(note, content="Bob went hiking.")
        memory.new_worker().run_until_idle()
    assert copy_between(source, target).complete
    with MemoryService.open(spacy(target), clock=clock) as memory:
        names = {entity.name for entity in memory.graph.entities(limit=100).entities}
        assert names.isdisjoint({"Alice Johnson", "Acme Corporation", "Paris"}), names
        memory.forget(note)
    with apsw.Connection(str(target)) as connection:
        left = [
            row
            for table in ("graph_entities", "graph_relations", "graph_relation_sources")
            for row in connection.execute(f"SELECT * FROM {table}")
        ]
    assert left == []


def test_migrate_again_keeps_an_entity_an_observation_or_relation_still_names(
    tmp_path: Path, clock: FakeClock
) -> None:
    # An undeclared entity without a mention (an older version's copy left such) that an
    # observation or a relation still names is no orphan: the copy's clean-up keeps it,
    # with them (review 52d: it deleted it, and the cascade took them).
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.remember("Bartholomew Quagmire runs a bakery in Ouagadougou.")
        memory.new_worker().run_until_idle()
    copy_between(source, target)
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        observed = memory.remember("an observation")
    with apsw.Connection(str(target)) as connection:
        connection.execute(
            "INSERT INTO graph_entities(namespace, key, name, type, declared, created_at,"
            " updated_at) VALUES ('default', 'observed only', 'Observed Only', 'topic', 0,"
            " '2026-10-25T08:00:00.000000Z', '2026-10-25T08:00:00.000000Z')"
        )
        connection.execute(
            "INSERT INTO graph_observations(entity_id, seq) SELECT id, ? FROM graph_entities"
            " WHERE key = 'observed only'",
            (observed.seq,),
        )
    assert copy_between(source, target).complete
    with apsw.Connection(str(target)) as connection:
        kept = list(connection.execute("SELECT name FROM graph_entities WHERE declared = 0"))
    assert ("Observed Only",) in kept


@pytest.mark.postgres
def test_migrate_again_into_postgres_scrubs_the_orphans_it_deletes(
    tmp_path: Path, postgres_url: str, clock: FakeClock
) -> None:
    # The entities the copy deleted as orphans were left as dead rows while the run said
    # "scrub": "done": no pending scrub was recorded, so no VACUUM ran (review 52d).
    source = tmp_path / "source.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        note = memory.remember("Bartholomew Quagmire runs a bakery in Ouagadougou.").id
        memory.new_worker().run_until_idle()
    copy_between(source, postgres_url)
    clock.advance(60)
    with MemoryService.open(moving_settings(postgres_url), clock=clock) as memory:
        memory.update(note, content="Zedekiah plays chess in Reykjavik.")
        memory.new_worker().run_until_idle()
    report = copy_between(source, postgres_url)
    assert (report.complete, report.scrub) == (True, "done")
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        row = connection.execute("SELECT pg_relation_size('graph_entities') / 8192").fetchone()
        assert row is not None
        for page in range(row[0]):
            items = connection.execute(
                "SELECT t_data FROM heap_page_items(get_raw_page('graph_entities', %s))",
                (page,),
            ).fetchall()
            assert not any(b"Ouagadougou" in bytes(data or b"") for (data,) in items), page


def test_migrate_resumed_after_the_target_recalled_a_copied_memory_copies_its_rows(
    tmp_path: Path, clock: FakeClock
) -> None:
    # A recall in the target between an interrupted run and the next one changes the
    # memory's access count, not its updated_at: it is not an edit, and the memory still
    # takes the rows the interrupted run did not copy (its vector, its graph mentions).
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        note = memory.remember("Bartholomew Quagmire runs a bakery in Ouagadougou.").id
        memory.new_worker().run_until_idle()
        mentioned = sorted(
            item.entity.name for item in memory.graph.entities_of_memory(note).entities
        )
    with pytest.raises(InterruptedCopyError):
        copy_between(source, target, progress=_stop_after_the_memories)
    clock.advance(60)
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert [hit.memory.id for hit in memory.recall("bakery Ouagadougou", mode="keyword")] == [
            note
        ]
        assert memory.get(note).access_count == 1
    report = copy_between(source, target)
    assert report.complete
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert (
            sorted(item.entity.name for item in memory.graph.entities_of_memory(note).entities)
            == mentioned
        )
        assert [hit.memory.id for hit in memory.search("bakery Ouagadougou", mode="vector")] == [
            note
        ]


def test_migrate_again_gives_a_key_to_the_memory_that_holds_it_in_the_source_now(
    tmp_path: Path, clock: FakeClock
) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        old = memory.remember("The office is on floor 3", key="office.floor").id
    copy_between(source, target)
    clock.advance(60)
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.forget(old)
        new = memory.remember("The office is on floor 7", key="office.floor").id
    report = copy_between(source, target)
    assert report.complete
    with MemoryService.open(moving_settings(target), clock=clock) as memory:
        assert memory.get(key="office.floor").id == new
        with pytest.raises(NotFoundError):
            memory.get(old)
        assert memory.stats().count == 1


def _bars(output: str) -> dict[str, tuple[int, int, str]]:
    """The progress bars `migrate --to` left on stdout: table -> (done, total, outcome)."""
    bars = {}
    for line in output.splitlines():
        found = re.fullmatch(r"(\w+)\s+━+\s+(\d+)/(\d+)\s*(.*)", line.strip())
        if found is not None:
            bars[found[1]] = (int(found[2]), int(found[3]), found[4])
    return bars


def test_migrate_bars_and_summary_count_only_the_rows_copied(
    tmp_path: Path, clock: FakeClock
) -> None:
    source = tmp_path / "source.db"
    with MemoryService.open(moving_settings(source), clock=clock) as memory:
        memory.remember_many([{"content": f"note {index}"} for index in range(3)])
        memory.new_worker().run_until_idle()
    as_json = CliRunner().invoke(
        cli, ["--db", str(source), "migrate", "--to", str(tmp_path / "a.db"), "--json"]
    )
    copied = json.loads(as_json.output.strip().splitlines()[-1])["copied"]
    assert copied["tokens"] == copied["intentions"] == copied["memory_signals"] == 0
    shown = CliRunner().invoke(
        cli, ["--db", str(source), "migrate", "--to", str(tmp_path / "b.db")]
    )
    assert shown.exit_code == 0, shown.output
    summary = " ".join(shown.output.split())  # the summary wraps in 80 columns
    assert f" copied {sum(copied.values())} rows (3 memories) into " in summary
    # A bar for each table that had rows, none (no 1/1) for an empty one.
    bars = _bars(shown.output)
    assert bars == {
        table: (count, count, f"copied {count}") for table, count in copied.items() if count
    }
    again = CliRunner().invoke(
        cli, ["--db", str(source), "migrate", "--to", str(tmp_path / "b.db")]
    )
    assert " copied 0 rows (0 memories) into " in " ".join(again.output.split())
    assert _bars(again.output)["memories"] == (3, 3, "already there 3")
