"""A speaker's name holding a character that shows nothing though it is no format
character (a variation selector after a letter, the combining grapheme joiner, a Hangul
filler, the braille blank) is refused naming it: "Ada" and "Ada" + U+FE0F were two
speakers that read the same, and a name of Hangul fillers a speaker that looks empty.
Emoji and ideographic variants keep their selectors (adversarial pass e63)."""

from __future__ import annotations

import pytest

from recalld import _validate as check
from recalld.errors import ValidationError
from recalld.service import MemoryService

LOOKALIKES = [
    ("Ada\ufe0f", 3),  # VARIATION SELECTOR-16 after a letter
    ("A\u034fda", 1),  # COMBINING GRAPHEME JOINER
    ("Ada\u2800", 3),  # BRAILLE PATTERN BLANK
    ("\u3164", 0),  # HANGUL FILLER: looks empty
    ("\u115f\u1160", 0),  # HANGUL CHOSEONG and JUNGSEONG FILLERS
    ("\uffa0", 0),  # HALFWIDTH HANGUL FILLER
    ("\ufe0f", 0),  # a selector alone
    ("Ada\u180b", 3),  # a Mongolian free variation selector after a Latin letter
]


@pytest.mark.parametrize(("name", "position"), LOOKALIKES)
def test_a_turn_whose_speaker_shows_nothing_more_is_refused_naming_the_character(
    service: MemoryService, name: str, position: int
) -> None:
    turns = [{"speaker": "Ada", "content": "hello"}, {"speaker": name, "content": "hi"}]
    with pytest.raises(ValidationError) as caught:
        service.remember_conversation(turns, conversation="greetings")
    assert caught.value.field.endswith("speaker")
    assert f"U+{ord(name[position]):04X}) at position {position}" in caught.value.message
    assert service.list_memories().memories == []


@pytest.mark.parametrize(("name", "position"), LOOKALIKES)
def test_a_memory_whose_speaker_shows_nothing_more_is_refused(
    service: MemoryService, name: str, position: int
) -> None:
    with pytest.raises(ValidationError) as caught:
        service.remember("Ada likes tea", speaker=name)
    assert caught.value.field == "speaker"
    assert service.list_memories().memories == []


@pytest.mark.parametrize(
    "name",
    [
        "\u2764\ufe0f Fan",
        "1\ufe0f\u20e3",
        "\u845b\U000e0100",
        "Zoë",
        # Review of pass e63: a Mongolian name needs its free variation selectors, and
        # these emoji are punctuation or a letter with their emoji selector.
        "\u182e\u1823\u180b\u1829\u182d\u1824\u182f",
        "\u2139\ufe0f desk",
        "\u203c\ufe0f",
    ],
)
def test_emoji_and_ideographic_variants_keep_their_selectors(
    service: MemoryService, name: str
) -> None:
    receipt = service.remember("a note", speaker=name)
    assert service.get(receipt.id).speaker == name


def test_a_speaker_stored_before_the_rule_is_read_updated_resent_and_imported(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass e63: the rule refused every path that re-checked a stored speaker,
    # so such a memory could not be updated in any field, its conversation not be
    # re-sent, its speaker not be filtered on, and its export line not be imported.
    turns = [{"speaker": "Ada\ufe0f", "content": "hello"}]
    with monkeypatch.context() as before_the_rule:
        before_the_rule.setattr(check, "_blank_looking", lambda value: None)
        stored = service.remember("Ada likes tea", speaker="Ada\ufe0f")
        service.remember_conversation(turns, conversation="greetings")
    found = service.list_memories(filters={"speaker": "Ada\ufe0f"}).memories
    assert len(found) == 2
    assert service.update(stored.id, title="tea").speaker == "Ada\ufe0f"
    assert service.remember_conversation(turns, conversation="greetings").unchanged == 1
    lines = list(service.export())
    for memory in found:
        service.forget(memory.id)
    report = service.import_text("\n".join(lines))
    assert (report.errors, report.created) == ([], 2)
    with pytest.raises(ValidationError) as caught:
        service.update(stored.id, speaker="Bob\ufe0f")  # a new name is checked
    assert caught.value.field == "speaker"
    assert service.get(stored.id).speaker == "Ada\ufe0f"
