"""PostgreSQL's migration 28: tags, categories and tag triggers an older version stored
decomposed are composed (NFC), as SQLite's (tests/test_tag_spelling.py)."""

from __future__ import annotations

import json

import psycopg
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.migrations_spelling import postgres_migration_28
from tests.conftest import FakeClock
from tests.spelling_support import COMPOSED, DECOMPOSED, assert_composed, write_decomposable

pytestmark = pytest.mark.postgres


def test_postgres_migration_28_composes_what_an_older_version_stored(
    postgres_url: str, clock: FakeClock
) -> None:
    settings = Settings(db=postgres_url, embedder="none", zone="Europe/Paris")
    with MemoryService.open(settings, clock=clock) as service:
        memory_id, reminder_id = write_decomposable(service)
        before = service.get(memory_id).updated_at
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            seq = connection.execute("SELECT seq FROM memories WHERE id = %s", (memory_id,))
            (number,) = seq.fetchone() or (None,)
            connection.execute(
                "UPDATE memories SET tags = %s::jsonb, category = %s WHERE seq = %s",
                (json.dumps([DECOMPOSED, "kitchen", COMPOSED]), DECOMPOSED, number),
            )
            connection.execute("DELETE FROM memory_tags WHERE seq = %s", (number,))
            for tag in (DECOMPOSED, "kitchen", COMPOSED):
                connection.execute(
                    "INSERT INTO memory_tags(seq, tag) VALUES (%s, %s)", (number, tag)
                )
            connection.execute(
                "UPDATE intention_triggers SET term = %s, spec = %s::jsonb WHERE type = 'tag'"
                " AND seq = (SELECT seq FROM memories WHERE id = %s)",
                (DECOMPOSED, json.dumps({"type": "tag", "tag": DECOMPOSED}), reminder_id),
            )
            postgres_migration_28(connection.execute)
            tags = connection.execute("SELECT tag FROM memory_tags ORDER BY tag").fetchall()
        assert tags == [(COMPOSED,), ("kitchen",)]
        assert_composed(service, memory_id)
        assert service.get(memory_id).updated_at == before  # no one wrote it
