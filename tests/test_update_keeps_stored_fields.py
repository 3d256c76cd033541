"""An edit keeps the fields it does not change as stored, without checking them again
(adversarial pass a67): a memory holding a tag, content or meta past today's limits (an
older version's, or a RECALLD_MAX_* lowered since) could not be edited at all, not even
to drop the tag, every field being checked again on each edit."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.service import MemoryService

LONG_TAG = "t" * 80
CONTENT = "tea " * 500  # 2,000 bytes
META = {"note": "m" * 1_500}


def _stored(database: Path | str) -> str:
    settings = Settings(db=database, synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings) as service:
        return service.remember(CONTENT, tags=["short", LONG_TAG], meta=META, title="old").id


def _tighter(database: Path | str) -> Settings:
    return Settings(
        db=database,
        synchronous="NORMAL",
        embedder="none",
        max_tag_chars=50,
        max_content_bytes=1_000,
        max_meta_bytes=1_000,
    )


def test_an_edit_of_one_field_keeps_the_others_past_todays_limits(any_database: Path | str) -> None:
    memory_id = _stored(any_database)
    with MemoryService.open(_tighter(any_database)) as service:
        edited = service.update(memory_id, title="new", salience=0.9)
        assert (edited.title, edited.salience) == ("new", 0.9)
        assert (edited.content, edited.tags, edited.meta) == (CONTENT, ["short", LONG_TAG], META)
        # The tag can be dropped, the content and meta replaced, within today's limits.
        assert service.update(memory_id, tags=["short"]).tags == ["short"]
        assert service.update(memory_id, meta={"note": "m"}).meta == {"note": "m"}
        assert service.update(memory_id, content="tea").content == "tea"


def test_what_an_edit_gives_is_still_held_to_todays_limits(any_database: Path | str) -> None:
    memory_id = _stored(any_database)
    with MemoryService.open(_tighter(any_database)) as service:
        with pytest.raises(ValidationError) as tags:
            service.update(memory_id, tags=["short", LONG_TAG])
        assert tags.value.field == "tags"
        with pytest.raises(ValidationError) as content:
            service.update(memory_id, content=CONTENT + "more")
        assert content.value.field == "content"
        with pytest.raises(ValidationError) as meta:
            service.update(memory_id, meta=META)
        assert meta.value.field == "meta"
        assert service.get(memory_id).title == "old"


@pytest.mark.parametrize(
    ("name", "stored"),
    [("source", "feed\u200b"), ("speaker", "Ada\u200b"), ("key", "old\u200bkey")],
)
def test_an_edit_keeps_a_name_an_older_version_stored(
    db_path: Path, name: str, stored: str
) -> None:
    # Review of pass a67: a source, speaker or key holding a character today's names
    # refuse (a zero-width space) made every edit of the memory fail naming it.
    settings = Settings(db=db_path, synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings) as service:
        memory_id = service.remember("tea", source="feed", speaker="Ada", key="old-key").id
    connection = apsw.Connection(str(db_path))
    connection.execute(f"UPDATE memories SET {name} = ? WHERE id = ?", (stored, memory_id))
    connection.close()
    with MemoryService.open(settings) as service:
        edited = service.update(memory_id, title="new")
        assert (edited.title, getattr(edited, name)) == ("new", stored)
        if name != "key":  # an edit never changes the key
            with pytest.raises(ValidationError) as given:
                service.update(memory_id, **{name: f"new\u200b{name}"})
            assert given.value.field == name
            assert getattr(service.update(memory_id, **{name: "plain"}), name) == "plain"
