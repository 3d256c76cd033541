"""A mention holds on the whole word in every script: marks stay on their word, "C++" is
not "C", and Chinese, Japanese, Thai, Lao, Khmer or Burmese, written without spaces, is
heard inside a sentence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.intentions import matching
from recalld.intentions.matching import tokens
from recalld.recollection import Recollection
from recalld.service import MemoryService
from tests.conftest import FakeClock

# Persian "I want": mi, a zero-width non-joiner, khaham (escaped: its letters look Latin).
I_WANT = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"


def _heard(memory: MemoryService, text: str) -> list[str]:
    fired: list[Recollection] = memory.recollections.sense(memory.recollections.cue(text=text))
    return [item.reminder.action for item in fired if item.reminder is not None]


def _every_time(memory: MemoryService, action: str, mention: str) -> None:
    memory.remind(action, mention=[mention], repeat="every_time", min_interval_seconds=0)


def test_a_devanagari_mention_is_a_whole_word_not_a_part_of_a_longer_one(
    memory: MemoryService,
) -> None:
    # The vowel sign of "राम" (Ram) split it into "र" and "म", which begin "रामायण"
    # (the Ramayana): the reminder fired on the longer word, as "Anna" must not on
    # "Annapolis".
    _every_time(memory, "call Ram", "राम")
    _every_time(memory, "buy the book", "किताब")
    assert _heard(memory, "मैंने रामायण पढ़ी") == []
    assert _heard(memory, "कुत्ता बाहर है") == []  # "dog" and "outside": no book
    assert _heard(memory, "राम आया") == ["call Ram"]
    assert _heard(memory, "वह किताब कहाँ है?") == ["buy the book"]


def test_a_language_s_plus_plus_or_sharp_stays_on_its_name(memory: MemoryService) -> None:
    _every_time(memory, "ask about templates", "C++")
    _every_time(memory, "ask about LINQ", "C#")
    assert _heard(memory, "I wrote it in C") == []
    assert _heard(memory, "the C++ build broke") == ["ask about templates"]
    assert _heard(memory, "we ported it to C#.") == ["ask about LINQ"]


def test_a_chinese_or_japanese_mention_is_heard_inside_a_sentence(memory: MemoryService) -> None:
    _every_time(memory, "book the hotel", "東京")
    assert _heard(memory, "京都に行きます") == []  # Kyoto, not Tokyo
    assert _heard(memory, "明日東京に行きます") == ["book the hotel"]


@pytest.mark.parametrize(
    ("mention", "heard", "unrelated"),
    [
        # Thai, Lao, Khmer and Burmese "coffee", in "I want to drink coffee"; and "tea".
        ("กาแฟ", "ฉันอยากดื่มกาแฟตอนเช้า", "ฉันอยากดื่มชา"),
        ("ກາເຟ", "ຂ້ອຍຢາກດື່ມກາເຟ", "ຂ້ອຍຢາກດື່ມຊາ"),
        ("កាហ្វេ", "ខ្ញុំចង់ផឹកកាហ្វេ", "ខ្ញុំចង់ផឹកតែ"),
        ("ကော်ဖီ", "ကျွန်တော်ကော်ဖီသောက်ချင်တယ်", "ကျွန်တော်လက်ဖက်ရည်သောက်ချင်တယ်"),
    ],
)
def test_a_mention_in_a_script_without_spaces_is_heard_inside_a_sentence(
    memory: MemoryService, mention: str, heard: str, unrelated: str
) -> None:
    # Written without spaces between words, the whole sentence was one word: the mention
    # never fired unless said alone.
    _every_time(memory, "offer coffee", mention)
    assert _heard(memory, unrelated) == []
    assert _heard(memory, heard) == ["offer coffee"]


def test_a_burmese_letter_keeps_its_vowel_signs() -> None:
    # Each letter is a word of its own there, but with its marks: "ကော်ဖီ" (coffee) is not
    # heard in "ကဖ", the same consonants without them.
    assert tokens("ကော်ဖီ") == ["ကော", "ဖီ"]
    assert not matching.contains_phrase(tokens("ကဖ"), tokens("ကော်ဖီ"))


@pytest.mark.parametrize(
    ("mention", "longer"),
    [
        ("ห้อง ๑๒", "ห้อง ๑๒๓"),  # Thai "room 12", "room 123"
        ("๑๒", "ฉันมี๑๒๓บาท"),
        ("໑໒", "໑໒໓"),  # Lao
        ("၁၂", "၁၂၃"),  # Burmese
        ("១២", "១២៣"),  # Khmer
    ],
)
def test_a_number_in_a_script_without_spaces_is_one_word(
    memory: MemoryService, mention: str, longer: str
) -> None:
    # Each letter of these scripts is a word of its own; their digits were too, so "12"
    # fired on "123" (as 12 never does in Latin digits).
    _every_time(memory, "number", mention)
    assert _heard(memory, longer) == []
    assert _heard(memory, f"{longer} {mention}") == ["number"]


def test_a_mention_stored_by_an_older_version_still_fires(
    memory: MemoryService, db_path: Path
) -> None:
    # Older versions indexed "राम" by a part of it ("र"), and "C++" by "c": the lookup
    # also reads the sensed text as they did, and decides on today's words.
    _every_time(memory, "call Ram", "राम")
    _every_time(memory, "ask about templates", "C++")
    connection = apsw.Connection(str(db_path))
    connection.setbusytimeout(5_000)
    connection.execute(
        "UPDATE intention_triggers SET term = CASE term WHEN ? THEN ? ELSE ? END"
        " WHERE type = 'mention'",
        ("राम", "र", "c"),
    )
    terms = connection.execute("SELECT term FROM intention_triggers").fetchall()
    assert sorted(str(term) for (term,) in terms) == ["c", "र"]
    connection.close()
    assert _heard(memory, "राम आया") == ["call Ram"]
    assert _heard(memory, "C++ again") == ["ask about templates"]
    assert _heard(memory, "C again, and रामायण") == []


def test_a_mention_stored_by_an_older_version_still_fires_on_its_entity(
    memory: MemoryService, db_path: Path
) -> None:
    # The graph recognises "C++" in "cpp": the lookup read the entity's name only as
    # today's words ("c++"), not as the older index did ("c"), so the old row was never
    # a candidate (as it was before the upgrade).
    memory.intentions.match_entities = lambda text, namespace: ["C++"] if "cpp" in text else []
    _every_time(memory, "ask about templates", "C++")
    connection = apsw.Connection(str(db_path))
    connection.setbusytimeout(5_000)
    connection.execute("UPDATE intention_triggers SET term = 'c' WHERE type = 'mention'")
    connection.close()
    assert _heard(memory, "we love cpp") == ["ask about templates"]
    assert _heard(memory, "we love C") == []


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("I had lunch with ANNA's brother", ["i", "had", "lunch", "with", "anna", "s", "brother"]),
        ("Léa said", ["lea", "said"]),
        ("किताब पढ़ी।", ["किताब", "पढी"]),
        ("C++, C#, F# and C.", ["c++", "c#", "f#", "and", "c"]),
        ("c++d x#y #tag", ["c", "d", "x", "y", "tag"]),
        ("明日東京abc", ["明", "日", "東", "京", "abc"]),
    ],
)
def test_words_of_a_text(text: str, words: list[str]) -> None:
    assert tokens(text) == words


@pytest.fixture
def shared(shared_settings: Settings, clock: FakeClock) -> Iterator[MemoryService]:
    with MemoryService.open(shared_settings, clock=clock) as service:
        yield service


@pytest.mark.parametrize(
    ("mention", "position"), [("a\x00b", 1), ("\x00Anna", 0), ("  Anna  \x00", 8)]
)
def test_a_mention_with_a_nul_is_refused_naming_it_and_nothing_is_stored(
    shared: MemoryService, mention: str, position: int
) -> None:
    # It was stored (PostgreSQL refused the write with a storage error naming no field),
    # and "a<NUL>b" listened for "a b". The position is in the mention as given, not
    # in its spaces collapsed (it said 5 for the last).
    with pytest.raises(ValidationError) as raised:
        shared.remind("say hello", mention=["Léa", mention])
    assert raised.value.field == "mention[1]"
    assert raised.value.message == f"contains a NUL character (U+0000) at position {position}"
    assert shared.intentions(state="all") == []
    assert shared.list_memories().memories == []


def test_a_reminder_remind_took_comes_back_from_its_export(
    memory: MemoryService, tmp_path: Path, clock: FakeClock
) -> None:
    # Persian writes "I want" with a zero-width non-joiner. remind took the mention; its
    # export line was refused on import ("control and invisible characters are not
    # allowed here"), so a round trip lost the reminder.
    memory.remind("buy bread", mention=[I_WANT])
    lines = list(memory.export())
    settings = Settings(db=tmp_path / "copy.db", synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings, clock=clock) as copy:
        report = copy.import_lines(lines)
        assert report.errors == []
        assert [intention.action for intention in copy.intentions()] == ["buy bread"]
        assert _heard(copy, f"\u0645\u0646 \u0646\u0627\u0646 {I_WANT}") == ["buy bread"]


def test_punctuation_outside_ascii_keeps_a_text_on_the_fast_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A curly apostrophe or a dash (most text an agent writes) sent every text to the
    # piece-by-piece reading, five times slower, though it cuts such text the same.
    monkeypatch.setattr(matching, "PIECE", None)  # what only that reading uses
    assert tokens("Anna\u2019s move \u2014 \u00abdone\u00bb\u2026") == ["anna", "s", "move", "done"]


def test_a_long_word_of_marks_is_one_word() -> None:
    # Each vowel sign was added to the word's string in a list (a copy each time): a
    # 100,000-character word without spaces took seconds, quadratic in its length.
    word = "कि" * 50_000
    assert tokens(f"{word} {word}!") == [word, word]


def test_a_long_word_after_a_character_of_a_script_without_spaces_is_one_token() -> None:
    # Memory content at its 64 KB limit: each letter was once added to a copied string.
    letters = "a" * (64 * 1024 - 3)
    assert tokens("中" + letters) == ["中", letters]
    assert tokens("中" + letters + "の" + letters) == ["中", letters, "の", letters]
