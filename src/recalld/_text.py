"""Turning free text into safe keyword terms, memories into one-line summaries, content
into the normalised form (and hash) that duplicate detection compares, and telling a text
that asks a question (with or without its question mark)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import TYPE_CHECKING

import regex

if TYPE_CHECKING:
    from recalld.model import Memory

WORD = re.compile(r"\w+", re.UNICODE)
# Words that carry no retrieval signal in questions; dropped unless nothing else is left.
STOPWORDS = frozenset(
    (
        "a an and are as at be but by did do does for from had has have he her his how i if in "
        "into is it its me my of on or our she so that the their them then there these they this "
        "to was we were what when where which who whom why will with would you your"
    ).split(" ")
)
# What a contraction or a possessive leaves after its apostrophe ("what's", "Jess's",
# "don't", "I'll"): as a query term ("s") it is rare in a chat typed without apostrophes,
# so it lifted whatever held one. Removed before a query is split into words ("vitamin d"
# keeps its "d").
_CONTRACTION_END = re.compile(r"(?<=\w)['\u2019](?:s|t|d|m|ll|re|ve)\b", re.IGNORECASE)
# How far into a memory its opening words are looked for (see asks_question).
QUESTION_HEAD = 120
_AUXILIARY = "did|do|does|is|are|was|were|will|would|can|could|should|has|have|had|am|r"
_SUBJECT = "u|you|ya|we|they|he|she|it|i|anyone|anybody|someone|somebody|everyone|y'all"
# A message that asks without a question mark, as people text, after an optional "Speaker: "
# prefix and "hey"/"ok"/"so": "what did u name him", "how did it go", "whats ur name", "what
# time is it", "how many are coming", "did you get the job", "is Tom coming", "r u ok". Not
# "what a day", "how nice", "when I got home", "did my taxes", "was the best concert ever".
_UNMARKED_QUESTION = re.compile(
    r"\s*(?:[\w .'\u2019-]{1,40}:\s+)?(?:(?i:hey|hi|ok|okay|so|and|but|oh|um|also|wait)\b,?\s+)?"
    r"(?:(?i:(?:what|who|whom|whose|where|when|why|how|which)\s+(?:"
    + _AUXILIARY
    + r")|(?:what|who|where|when|how)['\u2019]?s|(?:what|which)\s+(?:time|kind|day|year|one)"
    r"|how\s+(?:many|much|long|old|far|often|come)|(?:what|who|where|how)\s+(?:u|ya|r))\b"
    r"|(?i:" + _AUXILIARY + r")\s+(?i:" + _SUBJECT + r")\b"
    # "is Tom coming", not "Had Covid last week" nor "Did Christmas shopping today".
    r"|(?i:is|are|was|were|does|has|can|will|would|could|should)\s+[A-Z]\w+\s+\w)"
)


# The words such a question may open with (checked first: most texts open otherwise).
_OPENERS = frozenset(
    (
        "what who whom whose where when why how which whats hows wheres whos whens "
        "hey hi ok okay so and but oh um also wait " + _AUXILIARY.replace("|", " ")
    ).split()
)
_FIRST_WORD = re.compile(r"\s*([^\W\d_]+)")


# How much of a value an error repeats: enough to recognise it, never a screenful.
MAX_ECHO_CHARS = 80


def shown(value: object) -> str:
    """``value`` as an error message repeats it: its repr, cut to :data:`MAX_ECHO_CHARS`
    with its length (a 100,000-character id looked up came back whole in the error)."""
    text = repr(value)
    if len(text) <= MAX_ECHO_CHARS:
        return text
    return f"{text[:MAX_ECHO_CHARS]}... ({len(str(value))} characters)"


def asks_question(text: str) -> bool:
    """Whether a memory's text asks something: it holds a question mark, or it opens as a
    question typed without one (only its first :data:`QUESTION_HEAD` characters are read)."""
    if "?" in text:
        return True
    head = text[:QUESTION_HEAD].lstrip()
    first = _FIRST_WORD.match(head)
    if first is not None and first.group(1).lower() not in _OPENERS:
        colon = head.find(":", first.end(), 41)  # "Speaker: what did u ..."
        second = None if colon < 0 else _FIRST_WORD.match(head, colon + 1)
        if second is None or second.group(1).lower() not in _OPENERS:
            return False
    return _UNMARKED_QUESTION.match(head) is not None


def query_terms(text: str, max_terms: int) -> list[str]:
    """Lower-cased word tokens of ``text``: unique, stop-words dropped, at most ``max_terms``.

    Only ``\\w+`` runs survive, so quotes, ``*``, parentheses and operator words
    can never reach the FTS5 query parser as syntax. A word holding a run of a script
    written without spaces (Chinese, Japanese, Korean, Thai ...) becomes its character
    pairs (:func:`query_grams`): "北京烤鸭" -> 北京, 京烤, 烤鸭.
    """
    text = _CONTRACTION_END.sub("", text)
    if has_gram_text(text):
        words = [
            part for word in WORD.findall(unmarked(text)) for part in query_grams(word.lower())
        ]
    else:  # the common case, as fast as before pairs existed
        words = [word.lower() for word in WORD.findall(text)]
    content_words = [word for word in words if word not in STOPWORDS]
    unique = list(dict.fromkeys(content_words or words))
    return unique[:max_terms]


# Words that are capitalised at the start of a chat line far more often than they name anything.
COMMON_CAPITALISED = frozenset(STOPWORDS) | frozenset(
    (
        "hey hi hello oh ok okay yes yeah yep no nope thanks thank wow well also just really "
        "sure great good nice cool awesome amazing sounds sorry please congrats congratulations "
        "haha lol omg absolutely definitely totally maybe anyway btw yesterday today tomorrow "
        "tonight last next this that those there here now then one some any every all both "
        "not can could should would will shall may might must let let's i'm i've i'll i'd "
        "it's that's what's there's here's he's she's we're they're you're don't didn't "
        "can't won't isn't aren't wasn't weren't being been having getting going doing"
    ).split(" ")
)


# A word (a letter first; inner apostrophes and hyphens kept: "O'Brien", "Jean-Luc"), and
# what ends a sentence.
_NAME_WORD = re.compile("[^\\W\\d_][\\w'\u2019-]*", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?:;\n]")
# Titles: their full stop ends no sentence ("Mr. Smith"), and they name nobody themselves.
_TITLES = frozenset("mr mrs ms dr prof st mt".split())
# Short forms of months and weekdays (the time lexicon holds the full words).
_CALENDAR_SHORT = frozenset("jan feb mar apr jun jul aug sep sept oct nov dec".split()) | frozenset(
    "mon tue tues wed thu thur thurs fri sat sun".split()
)
# A query naming more than this many things is no question: the rest are not looked up.
MAX_NAMED_WORDS = 16


def named_words(text: str) -> list[str]:
    """The capitalised words of ``text`` that do not start a sentence, possessive "'s"
    dropped: how a question names a person, a place or a thing ("When did Caroline's
    sister move to Sweden?" -> Caroline, Sweden). Unique, in order, at most
    :data:`MAX_NAMED_WORDS`. Words capitalised for other reasons name nothing:
    :data:`COMMON_CAPITALISED` ("I'll", "OK", "What"), titles, short months and
    weekdays; nor does a text with no lower-case letter (written in capitals)."""
    if not any(character.islower() for character in text):
        return []
    named: list[str] = []
    previous_end = 0
    previous = ""
    for match in _NAME_WORD.finditer(text):
        word = match.group()
        continues = previous_end > 0 and (
            _SENTENCE_END.search(text, previous_end, match.start()) is None
            or (previous.lower() in _TITLES and text[previous_end : match.start()].strip() == ".")
        )
        previous_end, previous = match.end(), word
        if not continues or not word[0].isupper():
            continue
        word = word.removesuffix("'s").removesuffix("\u2019s").strip("'\u2019-")
        folded = word.lower().replace("\u2019", "'")
        if (
            len(word) > 1
            and folded not in COMMON_CAPITALISED
            and folded not in _TITLES
            and folded not in _CALENDAR_SHORT
            and word not in named
        ):
            named.append(word)
            if len(named) == MAX_NAMED_WORDS:
                break
    return named


def prompt_line(memory: Memory, width: int = 160) -> str:
    """A compact, single-line summary of a memory for an agent's prompt."""
    when = (memory.at or memory.created_at).date().isoformat()
    label = memory.kind if memory.category is None else f"{memory.kind}/{memory.category}"
    body = " ".join(memory.content.split())
    if memory.title:
        body = f"{' '.join(memory.title.split())}: {body}"
    if len(body) > width:
        body = body[: _cluster_start(body, width - 1)].rstrip() + "…"
    return f"[{when} {label}] {body}"


def _cluster_start(text: str, cut: int) -> int:
    """``cut``, moved back to the start of the user-perceived character (extended grapheme
    cluster, UAX #29, as the ``regex`` package's ``\\X`` finds them) it falls in, so a
    shortened line never ends in half of one: "é" kept as "e" without its accent, half a
    flag, an emoji family cut after a joiner, a Devanagari conjunct or a Hangul syllable
    typed as jamo cut in two. Where ``text`` up to ``cut`` is one such character (Zalgo
    text), ``cut`` itself: a line must show something."""
    if text[cut - 1 : cut + 1].isascii() and text[cut - 1 : cut + 1] != "\r\n":
        return cut  # two ASCII characters other than CR LF always have a boundary between
    # Clusters are read from the last certain boundary before the cut, not from the start
    # of the text: \X costs about a microsecond a character.
    plain = _BEFORE_PLAIN.search(text, 0, cut + 1)
    start = 0 if plain is None else plain.start() + 1
    last: int = _ALL_BUT_LAST_CLUSTER.match(text, start, cut + 1).end()
    return last or cut


# A character whose boundary with what precedes it depends on nothing before it, and which
# no later rule looks back past (not a mark, joiner, regional indicator, emoji, Indic
# consonant or virama, Hangul jamo, control): preceded by anything but a Prepend character
# (Arabic number signs …), a cluster starts at it. So does a Hangul syllable that does not
# follow a leading jamo (Korean written without spaces would otherwise be read whole).
_PLAIN = r"[\p{Grapheme_Cluster_Break=Other}&&\p{InCB=None}--\p{Extended_Pictographic}]"
_SYLLABLE = r"[\p{Grapheme_Cluster_Break=LV}\p{Grapheme_Cluster_Break=LVT}]"
_BEFORE_PLAIN = regex.compile(
    rf"(?rV1)[^\p{{Grapheme_Cluster_Break=Prepend}}]{_PLAIN}"
    rf"|[^\p{{Grapheme_Cluster_Break=Prepend}}\p{{Grapheme_Cluster_Break=L}}]{_SYLLABLE}"
)
# Every cluster of a text but its last: the match ends where the last one starts.
_ALL_BUT_LAST_CLUSTER = regex.compile(r"(?:\X(?!\Z))*")


def reminder_line(action: str, why: str, width: int = 160) -> str:
    """A queued reminder's line for an agent's prompt: what to do, and why it is due now."""
    line = f"[reminder] {' '.join(action.split())} ({why})"
    return line if len(line) <= width else line[: _cluster_start(line, width - 1)].rstrip() + "…"


def new_id() -> str:
    """A new time-sortable id (a ULID); python-ulid is imported on the first call, so a
    command that writes nothing does not pay for it."""
    from ulid import ULID

    return str(ULID())


def normalized_content(text: str) -> str:
    """``text`` with every run of white space turned into one space and the ends trimmed:
    two writes are the same memory when these are equal (case and punctuation still count)."""
    return " ".join(text.split())


def content_hash(text: str) -> str:
    """The SHA-256 (hex) of :func:`normalized_content`: what duplicate detection indexes."""
    return hashlib.sha256(normalized_content(text).encode("utf-8", "surrogatepass")).hexdigest()


# Scripts written without spaces between words: Han (CJK ideographs and their iteration
# marks), Hiragana, Katakana (full and half width, the prolonged sound mark), Hangul
# syllables and jamo; Thai, Lao, Myanmar and Khmer. FTS5's unicode61 tokenizer (and
# PostgreSQL's parser) reads a whole run of CJK as one word, so "北京" never matched
# "我昨天在北京吃了烤鸭", and cuts Thai, Lao, Myanmar and Khmer at every vowel sign or tone
# mark, wherever the words end: these runs are also indexed, and searched, as their
# characters and overlapping character pairs (bigrams), as Lucene's CJK analyzer does
# (the four scripts' combining marks left out, as the tokenizer leaves them out).
_GRAM_CHARACTERS = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"  # Thai, Lao, Myanmar, Khmer
    "\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u3041-\u3096\u309d-\u309f"
    "\u30a1-\u30fa\u30fc-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
GRAM_RUN = re.compile(f"[{_GRAM_CHARACTERS}]+")
# The combining marks of Thai, Lao, Myanmar and Khmer (vowel signs, tone marks, viramas):
# not letters to ``\\w`` nor to unicode61, so they are dropped before a run is paired.
_SCRIPT_MARKS = regex.compile(r"[[\p{Thai}\p{Lao}\p{Myanmar}\p{Khmer}]&&\p{M}]+", regex.V1)


def unmarked(text: str) -> str:
    """``text`` without the combining marks of Thai, Lao, Myanmar and Khmer (see
    :data:`_SCRIPT_MARKS`); ASCII text as it is, at once."""
    return text if text.isascii() else _SCRIPT_MARKS.sub("", text)


def has_gram_text(text: str) -> bool:
    """Whether ``text`` holds a character of a script written without spaces (see
    :data:`GRAM_RUN`). ASCII text answers at once."""
    return not text.isascii() and GRAM_RUN.search(text) is not None


def _bigrams(run: str) -> list[str]:
    return [run[index : index + 2] for index in range(len(run) - 1)]


def query_grams(word: str) -> list[str]:
    """A query word split where a run of :data:`GRAM_RUN` characters starts or ends, each
    such run as its overlapping character pairs (one character alone stays itself), the
    other parts as they are: "田中さんと" -> 田中, 中さ, さん, んと; "東京2020" -> 東京, 2020.
    A word without such characters is returned alone, unchanged; one with them is read in
    NFKC first, as :func:`document_grams` reads a memory (half-width katakana as full
    width, Hangul typed as jamo as its syllables)."""
    if not has_gram_text(word):
        return [word]
    word = unicodedata.normalize("NFKC", word)
    parts: list[str] = []
    position = 0
    for run in GRAM_RUN.finditer(word):
        if run.start() > position:
            parts.append(word[position : run.start()])
        text = run.group()
        parts.extend(_bigrams(text) if len(text) > 1 else [text])
        position = run.end()
    if position < len(word):
        parts.append(word[position:])
    return parts


def document_grams(text: str) -> list[str]:
    """The index terms a memory's text adds for its :data:`GRAM_RUN` runs: each run's
    characters and overlapping character pairs, and the other parts of a ``\\w+`` word that
    holds such a run ("東京2020" adds 2020, which unicode61 keeps inside 東京2020). So a
    query's pairs (:func:`query_grams`) find a word inside a run, and a single character
    finds every memory holding it. Empty for text without such characters."""
    if not has_gram_text(text):
        return []
    terms: list[str] = []
    for word in WORD.findall(unmarked(text)):
        if not has_gram_text(word):
            continue
        word = unicodedata.normalize("NFKC", word)
        position = 0
        for run in GRAM_RUN.finditer(word):
            if run.start() > position:
                terms.append(word[position : run.start()])
            found = run.group()
            terms.extend(found)
            terms.extend(_bigrams(found))
            position = run.end()
        if position < len(word):
            terms.append(word[position:])
    return terms


def grams_column(*texts: str | None) -> str | None:
    """What the ``fts_grams`` column of a memory holds (migration 32): the
    :func:`document_grams` of its searchable texts, separated by spaces, or None when
    they hold no :data:`GRAM_RUN` character (English text stores nothing)."""
    terms = [term for text in texts if text for term in document_grams(text)]
    return " ".join(terms) if terms else None
