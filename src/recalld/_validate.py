"""Input checks shared by the service: each failure names the field and the limit.

Every surface (library, CLI, REST, MCP) reaches the engine through the service,
so these rules are the one place where what is accepted is decided. Patterns
are matched in full (``re.fullmatch``): ``$`` alone would let ``"B\\n"`` through
as a look-alike of ``"B"``.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

import pydantic

from recalld._lookalikes import blank_looking as _blank_looking
from recalld._schema import ECMA_SPACE_CLASS, INVISIBLE_CLASS
from recalld._text import MAX_ECHO_CHARS, shown
from recalld._validate_files import ARCHIVES as ARCHIVES
from recalld._validate_files import SQLITE_DATABASE as SQLITE_DATABASE
from recalld._validate_files import LongLine as LongLine
from recalld._validate_files import archive_kind as archive_kind
from recalld._validate_files import archive_message as archive_message
from recalld._validate_files import line_text as line_text
from recalld._validate_files import utf8_text as utf8_text
from recalld._validate_walk import NOT_UNICODE, SURROGATE
from recalld._validate_walk import nul_problem as nul_problem
from recalld._validate_walk import text_problem as text_problem
from recalld._validate_walk import unpaired_surrogate as unpaired_surrogate
from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.model import (
    MAX_JSON_DEPTH,
    QUERY_MAX_CHARS,
    SHORT_TEXT_MAX_CHARS,
    Filters,
    Place,
    PlaceInput,
    QueryFilters,
)

ModelT = TypeVar("ModelT", bound=pydantic.BaseModel)

NAMESPACE_PATTERN = re.compile(r"[\w.:@/-]{1,100}")
ID_PATTERN = re.compile(r"[\w.:-]{1,64}")
# Path segments a URL resolves away (RFC 3986 §5.2.4): an id or key holding one as a whole
# segment could be written but never reached over REST or from the web UI.
DOT_SEGMENTS = frozenset({".", ".."})
UNREACHABLE = "a URL resolves it away, so the memory could not be reached by its address"
GEOHASH_ALPHABET = frozenset("0123456789bcdefghjkmnpqrstuvwxyz")
# Precision used when a place is given as coordinates: 10 characters is ~1 m.
GEOHASH_PRECISION = 10
# JSON text is refused before parsing when it nests deeper than this: far below what
# would exhaust the parser's stack, far above any field's own limit.
PARSE_DEPTH_LIMIT = 512
# SQLite integers are signed 64-bit.
MAX_SEQ = 2**63 - 1
# Characters that are never part of a name or a core-memory entry (see INVISIBLE_RANGES).
INVISIBLE = re.compile(f"[{INVISIBLE_CLASS}]")
# One character that is neither white space nor NUL (the published TEXT_PATTERN's test,
# with its white space: ECMA-262's, not Python's).
VISIBLE = re.compile(f"[^{ECMA_SPACE_CLASS}\\x00]")
# One character that is not white space (the published QUERY_PATTERN's test, ECMA-262's).
NOT_SPACE = re.compile(f"[^{ECMA_SPACE_CLASS}]")


def is_blank(text: str) -> bool:
    """Whether ``text`` holds nothing but ECMAScript's spaces (a BOM among them; U+0085 and
    U+001C-U+001F not, as the published ``\\S`` pattern has it): a blank query to search,
    recall and explain."""
    return NOT_SPACE.search(text) is None


def parse_model(model: type[ModelT], data: Any, *, prefix: str = "") -> ModelT:
    """Validate ``data`` into ``model``; the first problem becomes a :class:`ValidationError`.

    A string that is not valid Unicode, or bytes where text belongs, is refused first,
    naming its path (pydantic would decode bytes, and let a lone surrogate through to
    the database driver in fields without a length limit).
    """
    found = text_problem(data)
    if found is not None:
        path, problem = found
        raise ValidationError(f"{prefix}{path}" if path else prefix.rstrip(".") or "input", problem)
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        location, message = union_problem(error.errors()) or (first["loc"], first["msg"])
        raise ValidationError(f"{prefix}{field_path(location) or 'input'}", message) from None
    except RecursionError:
        raise ValidationError(
            prefix.rstrip(".") or "input", f"is nested deeper than {MAX_JSON_DEPTH} levels"
        ) from None


def union_problem(errors: Sequence[Any]) -> tuple[tuple[int | str, ...], str] | None:
    """A time field (``Moment | str``: a datetime, or ISO 8601 text) given another JSON type
    (a number of Unix seconds, a boolean): pydantic names one member of the union per
    error, so the field read ``at.datetime: Input should be a valid datetime``, naming a
    field that does not exist. The field itself, and what it takes (for the engine's
    models, and for REST's and MCP's request models, whose errors read the same)."""
    location = tuple(errors[0]["loc"])
    if not location or location[-1] != "datetime":
        return None
    members = {
        tuple(item["loc"])[-1] for item in errors if tuple(item["loc"])[:-1] == location[:-1]
    }
    if members != {"datetime", "str"}:
        return None
    given = errors[0].get("input")
    kind = "null" if given is None else type(given).__name__
    return location[:-1], f"expected an ISO 8601 date-time as text, got {kind}"


def field_path(location: Sequence[int | str]) -> str:
    """A field's path as errors name it: ``messages[0].speaker`` (list items in brackets,
    as the engine's own errors write them; pydantic says ``messages.0.speaker``). A name
    longer than :data:`~recalld._text.MAX_ECHO_CHARS` is the caller's (an unknown key), cut
    with its length as a refused value is: a 10,000-character key came back whole."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
            continue
        name = field_name(str(part))
        path += f".{name}" if path else name
    return path


def field_name(name: str) -> str:
    """An argument's or key's name as an error repeats it: cut to
    :data:`~recalld._text.MAX_ECHO_CHARS` with its length when longer (an unknown key
    is the caller's value; a 10,000-character one came back whole)."""
    if len(name) <= MAX_ECHO_CHARS:
        return name
    return f"{name[:MAX_ECHO_CHARS]}... ({len(name)} characters)"


def renamed(error: ValidationError, names: Mapping[str, str]) -> ValidationError:
    """``error`` with the library field it names (and the path below it) spelled as the
    caller gave it (``names``: field to the caller's parameter or option, ``tags_any`` to
    ``--tag``); ``error`` itself when no name applies."""
    for name, spelled in names.items():
        if error.field == name or error.field.startswith((name + ".", name + "[")):
            return ValidationError(spelled + error.field[len(name) :], error.message)
    return error


def namespace(value: str) -> str:
    """A namespace: 1-100 letters, digits or ``._:@/-``."""
    if not isinstance(value, str) or not NAMESPACE_PATTERN.fullmatch(value):
        raise ValidationError(
            "namespace",
            f"must be 1-100 letters, digits or . _ : @ / - (got {shown(value)})"
            + decomposed_note(value, NAMESPACE_PATTERN),
        )
    return value


def decomposed_note(value: object, pattern: re.Pattern[str]) -> str:
    """What to add to the refusal of ``value`` by ``pattern`` when only its combining marks
    fail it: "café" typed with a combining accent (macOS input) looks like the accepted
    "café" in the message, so say what differs. Not composed instead, as a key or a tag
    is: a namespace (and a mem0 id naming one) is a wall, and one spelling must name one."""
    if not isinstance(value, str):
        return ""
    composed = unicodedata.normalize("NFC", value)
    if composed == value or not pattern.fullmatch(composed):
        return ""
    return ": it holds a combining mark (decomposed Unicode, NFD); send its composed form (NFC)"


def memory_id(value: str) -> str:
    """A client-supplied id: 1-64 letters, digits or ``._:-``, not ``.`` or ``..``."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise ValidationError("id", f"must be 1-64 letters, digits or . _ : - (got {shown(value)})")
    if value in DOT_SEGMENTS:
        raise ValidationError("id", f"must not be {value!r}: {UNREACHABLE}")
    return value


def key(value: str | None, field: str = "key") -> str | None:
    """An optional key: a name (:func:`name_text`) with no ``.`` or ``..`` between slashes."""
    if value is None:
        return None
    name_text(value, field)
    if any(part in DOT_SEGMENTS for part in value.split("/")):
        raise ValidationError(field, f"must not hold . or .. between slashes: {UNREACHABLE}")
    return value


def seq(value: int, field: str = "seq") -> int:
    """A store sequence number (rover's ``memory_id``): an integer from 1 to 2^63-1."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, f"must be an integer, got {shown(value)}")
    if not 1 <= value <= MAX_SEQ:
        raise ValidationError(field, f"must be between 1 and {MAX_SEQ}, got {value}")
    return value


def text(value: Any, field: str) -> str:
    """A ``str`` (not bytes, not None) that is valid Unicode (no lone surrogate)."""
    if not isinstance(value, str):
        raise ValidationError(field, f"must be text (a str), got {type(value).__name__}")
    if not value.isascii() and SURROGATE.search(value):
        raise ValidationError(field, NOT_UNICODE)
    return value


def query(value: Any, field: str = "query") -> str:
    """Search text (:func:`text`) of at most ``QUERY_MAX_CHARS`` characters, on every surface."""
    given = text(value, field)
    if len(given) > QUERY_MAX_CHARS:
        raise ValidationError(
            field, f"is {len(given)} characters; the limit is {QUERY_MAX_CHARS} characters"
        )
    return given


def lookup(value: Any, field: str) -> str:
    """An id or key to look up (:func:`text`); not held to today's naming rules, so a
    memory written before a rule can still be reached. A NUL is refused: no id or key
    holds one, and PostgreSQL cannot look one up (its error would name no field)."""
    return free_text(value, field)


def filters(value: Any) -> QueryFilters | None:
    """Filters as given: ``None``, a :class:`Filters` (or :class:`QueryFilters`), or a
    mapping of their fields (as a REST body gives them), validated into :class:`Filters`."""
    if value is None or isinstance(value, QueryFilters):
        return value
    if isinstance(value, Mapping):
        return parse_model(Filters, dict(value), prefix="filters.")
    raise ValidationError(
        "filters", f"must be a Filters or a mapping of its fields, got {type(value).__name__}"
    )


# Zero-width non-joiner and joiner: invisible, but part of how some text is written
# (Persian "می‌خواهم", Indic conjuncts, emoji sequences such as a family).
JOINERS = frozenset("\u200c\u200d")
# What a joiner may stand between: letters, marks (a virama, an emoji's variation
# selector) and the symbols emoji are (with their skin-tone modifiers).
_JOINED = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "So", "Sk"})


def _joins(text: str, position: int) -> bool:
    """Whether the joiner at ``position`` stands between two characters it can join."""
    return (
        0 < position < len(text) - 1
        and unicodedata.category(text[position - 1]) in _JOINED
        and unicodedata.category(text[position + 1]) in _JOINED
    )


def invisible(text: str, *, joiners: bool = False) -> tuple[int, str] | None:
    """The position and name of the first control or invisible character, if any;
    ``joiners``: a zero-width (non-)joiner between two characters it can join is allowed."""
    for found in INVISIBLE.finditer(text):
        if joiners and found.group(0) in JOINERS and _joins(text, found.start()):
            continue
        break
    else:
        return None
    character = found.group(0)
    code = f"U+{ord(character):04X}"
    name = unicodedata.name(character, "")
    return found.start(), f"{name} ({code})" if name else code


def name_text(value: str, field: str) -> str:
    """A name-like string (key, tag, kind, category, source): not blank, nothing invisible.

    Such strings are compared and displayed as identifiers, so a NUL, a line
    break or a zero-width character would make a look-alike of another name.
    """
    text(value, field)
    reason = name_problem(value)
    if reason is not None:
        raise ValidationError(field, reason)
    return value


def name_problem(value: str) -> str | None:
    """Why ``value`` is no name (blank, or holding an invisible character), in words.

    Also for a check the web framework makes against the published ``NAME_PATTERN``
    (a graph route's entity name): its own message quotes the whole pattern, control
    characters and all, which tells a reader nothing.
    """
    if not value.strip():
        return "must not be empty or only spaces"
    found = invisible(value)
    if found is not None:
        position, described = found
        return (
            f"contains {described} at position {position}: control and invisible "
            "characters are not allowed here"
        )
    return None


def free_text(value: str, field: str) -> str:
    """Free text (content, title): any characters except NUL, which C libraries stop at
    (and lone surrogates, which are not Unicode)."""
    text(value, field)
    position = value.find("\x00")
    if position >= 0:
        raise ValidationError(field, f"contains a NUL character (U+0000) at position {position}")
    return value


def content(value: str, settings: Settings, field: str = "content") -> str:
    """Non-empty text no larger than ``max_content_bytes`` (UTF-8), without NUL.

    "Empty" is what the published ``TEXT_PATTERN`` calls it: nothing but white space
    (``str.strip`` would also strip the control characters \x1c-\x1f).
    """
    text(value, field)
    if not VISIBLE.search(value):
        raise ValidationError(field, "must not be empty")
    size = len(value.encode("utf-8", errors="surrogatepass"))
    if size > settings.max_content_bytes:
        raise ValidationError(
            field, f"is {size} bytes; the limit is {settings.max_content_bytes} bytes"
        )
    return free_text(value, field)


def optional_name(value: str | None, field: str) -> str | None:
    """:func:`name_text` for an optional field (``None`` passes)."""
    return None if value is None else name_text(value, field)


def category(value: str | None, field: str = "category", *, as_given: bool = False) -> str | None:
    """:func:`optional_name`, trimmed and kept in one Unicode spelling (NFC), as a tag is: a
    category typed precomposed ("Café") and the decomposed "Cafe" + U+0301 some tools send
    look alike, so they must name one category (a filter's too). ``as_given`` as for
    :func:`composed_name`."""
    return None if value is None else composed_name(value, field, as_given=as_given)


def kind(value: str, field: str = "kind", *, as_given: bool = False) -> str:
    """:func:`name_text`, trimmed and kept in one Unicode spelling (NFC), as a category
    is: a kind written decomposed ("re" + U+0301 + "union", as macOS and some tools send
    it) and one typed precomposed in a filter look alike, so they must name one kind.
    ``as_given`` as for :func:`composed_name`."""
    return composed_name(value, field, as_given=as_given)


def composed_name(value: str, field: str, *, as_given: bool = False) -> str:
    """:func:`name_text` in NFC, refused naming ``field`` if composing made it longer than
    a stored name may be: NFC writes a few letters (Devanagari क़, U+0958) as two code
    points, and a 200-character kind stored 400 long was refused by the import of its own
    export. White space at its ends is dropped, as a tag's is: " work" and "work" looked
    alike and were two categories, and a filter typed "work" missed the first.

    With ``as_given`` (an import's line, a filter) a name is held instead to the limit its
    shortest spelling (:func:`shortest_spelling`) meets, as a tag is: an older version
    stored a kind of 200 क़ 400 code points long, and its export must import (and a filter
    reach it) without a migration to shorten it (adversarial pass e66)."""
    if as_given:  # bounded before it is scanned and composed (see filter_name)
        filter_name(value, field, SHORT_TEXT_MAX_CHARS)
    composed = unicodedata.normalize("NFC", name_text(value, field).strip())
    if as_given:
        if not _spelled_within(composed, SHORT_TEXT_MAX_CHARS):
            raise ValidationError(
                field,
                f"is {len(composed)} characters once composed (NFC), as it is stored; the"
                f" limit is {SHORT_TEXT_MAX_CHARS} (in its shortest spelling)",
            )
        return composed
    if len(composed) > max(len(value), SHORT_TEXT_MAX_CHARS):
        raise ValidationError(
            field,
            f"is {len(composed)} characters once composed (NFC), as it is stored;"
            f" the limit is {SHORT_TEXT_MAX_CHARS}",
        )
    return composed


def filter_name(value: Any, field: str, limit: int) -> Any:
    """A name filter (kind, category, speaker) no longer than the ``limit`` characters
    the name it is compared with may hold, checked before the name's own (slower) checks:
    nothing stored is longer, and a 10 MB filter was composed, scanned and sent to the
    database whole, to match nothing. Anything but text passes to the name's checks.
    A name an older version stored longer (its shortest spelling within ``limit``: see
    :func:`composed_name`) may be asked for as stored, and nothing longer than the three
    code points a character composes into at most is read to count it."""
    if isinstance(value, str) and len(value) > limit and not _spelled_within(value, limit):
        raise ValidationError(field, f"is {len(value)} characters; the limit is {limit} characters")
    return value


def optional_text(value: str | None, field: str) -> str | None:
    """:func:`free_text` for an optional field (``None`` passes)."""
    return None if value is None else free_text(value, field)


def listed(values: Iterable[Any], field: str) -> list[Any]:
    """``values`` as a list; a lone string is refused (naming ``field``): iterated, it would
    become one item per letter ("infra" as five tags). So is anything that is no list
    (None, a number, a mapping)."""
    if isinstance(values, str | bytes):
        raise ValidationError(field, f"give a list, not one string ({values[:20]!r})")
    if isinstance(values, Mapping) or not isinstance(values, Iterable):
        raise ValidationError(field, f"give a list, got {type(values).__name__}")
    return list(values)


@functools.cache
def _composed_spellings() -> dict[str, str]:
    """The characters NFC writes as two or three code points (Devanagari क़ U+0958, Hebrew
    שּׁ U+FB2C ...), by the code points it writes them as."""
    spellings: dict[str, str] = {}
    for code in range(0x30000):  # no character past it has a canonical decomposition
        character = chr(code)
        if unicodedata.decomposition(character)[:1] not in ("", "<"):
            composed = unicodedata.normalize("NFC", character)
            if len(composed) > 1:
                spellings[composed] = character
    return spellings


def shortest_spelling(tag: str) -> int:
    """How many characters the shortest text composing (NFC) into ``tag`` has: ``tag``'s
    length, less one or two for each character NFC writes as two or three code points."""
    spellings = _composed_spellings()
    length, position = 0, 0
    while position < len(tag):
        step = next((size for size in (3, 2) if tag[position : position + size] in spellings), 1)
        length, position = length + 1, position + step
    return length


def _spelled_within(tag: str, limit: int) -> bool:
    """Whether ``tag`` has a spelling of at most ``limit`` characters: NFC writes no
    character as more than three code points, so a longer ``tag`` is not even read (a 10 MB
    filter would take a minute to count)."""
    return len(tag) <= 3 * limit and shortest_spelling(tag) <= limit


def tags(
    values: Sequence[str], settings: Settings, field: str = "tags", *, as_given: bool = False
) -> tuple[str, ...]:
    """Trimmed, de-duplicated tags in their given order, within the count and length limits
    (a filter's tags too: ``field`` names it), each in one Unicode spelling (NFC), as a
    key is: "café" typed precomposed and the decomposed "cafe" + U+0301 are one tag.

    The limits apply to the tags as given (as the published schema says), before
    trimming, composing and de-duplication, and the length limit to each tag as it is
    stored too: NFC writes a few letters (Devanagari क़, U+0958) as two code points, and a
    tag stored longer than the limit lost its memory on the import of its own export.

    With ``as_given`` (an import's line, a filter) a tag is held instead to the limit its
    shortest spelling (:func:`shortest_spelling`) meets, the rule of the write that stored
    it before pass a65: an older version stored a tag of 100 क़ 200 code points long, and
    its export must import (and a filter reach it) without a migration to shorten it.
    """
    values = listed(values, field)
    if len(values) > settings.max_tags:
        raise ValidationError(field, f"{len(values)} tags; the limit is {settings.max_tags}")
    cleaned: list[str] = []
    for value in values:
        text(value, field)
        if len(value) > settings.max_tag_chars and not (
            as_given and _spelled_within(value, settings.max_tag_chars)
        ):
            raise ValidationError(
                field,
                f"tag {value[:20]!r}... is {len(value)} chars; the limit is"
                f" {settings.max_tag_chars}",
            )
        tag = value.strip()
        if not tag:
            raise ValidationError(field, "a tag must not be empty")
        tag = unicodedata.normalize("NFC", name_text(tag, field))
        if len(tag) > settings.max_tag_chars and not (
            as_given and _spelled_within(tag, settings.max_tag_chars)
        ):
            raise ValidationError(
                field,
                f"tag {value[:20]!r}... is {len(tag)} chars once composed (NFC), as it is"
                f" stored; the limit is {settings.max_tag_chars}",
            )
        if tag not in cleaned:
            cleaned.append(tag)
    return tuple(cleaned)


def json_depth(value: Any, stop_after: int = MAX_JSON_DEPTH) -> int:
    """How deeply ``value`` nests objects and arrays (a scalar is 0, ``{}`` is 1).

    Iterative, so it cannot itself overflow the stack; it stops counting once
    the depth passes ``stop_after``.
    """
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > stop_after:
            return deepest
        pending.extend((child, depth + 1) for child in children)
    return deepest


def json_object(value: dict[str, Any], settings: Settings, field: str = "meta") -> dict[str, Any]:
    """A JSON object at most ``MAX_JSON_DEPTH`` levels deep and ``max_meta_bytes`` once
    serialised; returns the normalised (JSON round-tripped) object."""
    if not isinstance(value, dict):
        raise ValidationError(field, f"must be a JSON object, got {type(value).__name__}")
    found = text_problem(value, field) or nul_problem(value, field)
    if found is not None:
        raise ValidationError(*found)
    depth = json_depth(value)
    if depth > MAX_JSON_DEPTH:
        raise ValidationError(
            field, f"is nested deeper than {MAX_JSON_DEPTH} levels; the limit is {MAX_JSON_DEPTH}"
        )
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        # A number past a double's range (1e999) parses as infinity: it was "must be a
        # JSON object: Out of range float values are not JSON compliant" of an object.
        raise ValidationError(
            field, "holds a number that is not finite (NaN, infinity, or past 1.8e308 as 1e999)"
        ) from None
    except TypeError as error:
        raise ValidationError(field, f"must be a JSON object: {error}") from None
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > settings.max_meta_bytes:
        raise ValidationError(field, f"is {size} bytes; the limit is {settings.max_meta_bytes}")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def meta(value: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """The ``meta`` object (see :func:`json_object`)."""
    return json_object(value, settings, "meta")


def json_reason(message: str) -> str:
    """The JSON parser's complaint, in words for whoever sent the JSON: Python's limit on
    a number's digits is no setting of theirs (its message says to raise it in code)."""
    if "integer string conversion" in message:
        return f"a number has more than {sys.get_int_max_str_digits()} digits"
    return message


def load_json(text: str | bytes, field: str) -> Any:
    """Parse JSON text, refusing ``NaN``/``Infinity`` and nesting past ``PARSE_DEPTH_LIMIT``.

    Depth is checked on the brackets before parsing, so no input can make the
    parser recurse out of the stack; the fields inside (``meta``) are held to
    their own, lower limit afterwards, with an error that names them.
    """
    data = text.decode("utf-8") if isinstance(text, bytes) else text
    if _bracket_depth(data, PARSE_DEPTH_LIMIT) > PARSE_DEPTH_LIMIT:
        raise ValidationError(
            field,
            f"is nested deeper than {PARSE_DEPTH_LIMIT} levels (meta may nest at most"
            f" {MAX_JSON_DEPTH})",
        )

    def refuse(name: str) -> Any:
        raise ValidationError(field, f"{name} is not valid JSON")

    try:
        return json.loads(data, parse_constant=refuse)
    except json.JSONDecodeError as error:
        raise ValidationError(field, f"is not JSON: {_json_error(error)}") from None
    except ValueError as error:  # a number of more digits than Python converts
        raise ValidationError(field, f"is not JSON: {json_reason(str(error))}") from None


def _json_error(error: json.JSONDecodeError) -> str:
    """The parser's complaint with where it is: its ``msg`` alone left "Unterminated string
    starting at" ending on nothing, and a bad line of an import said no column."""
    place = f"column {error.colno}"
    if error.lineno > 1:
        place = f"line {error.lineno} {place}"
    return f"{error.msg} {place}" if error.msg.endswith(" at") else f"{error.msg} at {place}"


def _bracket_depth(text: str, limit: int) -> int:
    """The nesting depth of JSON ``text``, counted on its brackets outside strings
    (0 when there are too few brackets to pass ``limit`` at all)."""
    if text.count("{") + text.count("[") <= limit:
        return 0
    depth = deepest = 0
    in_string = escaped = False
    for character in text:
        if in_string:
            if escaped:
                escaped = False
            elif character == "\\":
                escaped = True
            elif character == '"':
                in_string = False
        elif character == '"':
            in_string = True
        elif character in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif character in "}]":
            depth -= 1
    return deepest


def place(value: PlaceInput) -> Place:
    """Resolve a geohash or lat+lon into a :class:`Place` holding both; the name without
    white space at its ends (a blank name is no name: it is searched and embedded)."""
    if value.name is not None:
        free_text(value.name, "place.name")
        # A name, shown and compared as one (no line break, nothing invisible).
        found = invisible(value.name)
        if found is not None:
            position, described = found
            raise ValidationError(
                "place.name",
                f"contains {described} at position {position}: control and invisible "
                "characters are not allowed here",
            )
        value = value.model_copy(update={"name": value.name.strip() or None})
    import pygeohash  # here, not at the top: most commands never see a place

    if value.lat is not None or value.lon is not None:
        if value.lat is None or value.lon is None:
            # The one missing (a dialect with flat arguments names it as its own).
            missing = "place.lon" if value.lon is None else "place.lat"
            raise ValidationError(missing, "give both lat and lon, or a geohash")
        encoded = pygeohash.encode(value.lat, value.lon, precision=GEOHASH_PRECISION)
        if value.geohash is not None:
            given = _geohash(value.geohash)
            if not encoded.startswith(given):
                raise ValidationError(
                    "place.geohash", f"{given!r} does not contain lat {value.lat}, lon {value.lon}"
                )
            # Both given (an export's place, say): the geohash keeps the precision given.
            encoded = given
        return Place(lat=value.lat, lon=value.lon, geohash=encoded, name=value.name)
    if value.geohash is None:
        raise ValidationError("place", "give a geohash, or lat and lon")
    given = _geohash(value.geohash)
    centre = pygeohash.decode(given)
    return Place(
        lat=float(centre.latitude), lon=float(centre.longitude), geohash=given, name=value.name
    )


def _geohash(value: str) -> str:
    text = value.strip().lower()
    if not text or len(text) > 12 or not set(text) <= GEOHASH_ALPHABET:
        raise ValidationError(
            "place.geohash", f"must be 1-12 characters of the geohash alphabet (got {shown(value)})"
        )
    return text


def speaker(value: str | None) -> str | None:
    """Who said or wrote a memory: one line of printable text (trimmed, its white space
    collapsed, in Unicode NFC), or None. A name stored before :func:`new_speaker` was
    the rule passes (a filter, an import, a memory updated otherwise)."""
    if value is None:
        return None
    # The same characters as every other name (and the published schema) are refused.
    name_text(value, "speaker")
    # One spelling per name, as core memory keeps one per text: "Zoë" typed precomposed
    # and the decomposed "Zoe" + U+0308 some tools write are the same speaker, for the
    # speaker filter and for a re-sent transcript alike.
    return " ".join(unicodedata.normalize("NFC", value).split())


def new_speaker(value: str | None) -> str | None:
    """A speaker a write gives a memory (see :func:`speaker`): a character that shows
    nothing though it is no format character (``_blank_looking``) is refused naming it.

    Only new names: a memory stored with one before (as :func:`key` is for keys) is
    still read, filtered on, exported and imported, updated in its other fields and
    re-sent unchanged in its conversation (review of pass e63)."""
    if value is None:
        return None
    name_text(value, "speaker")
    blank = _blank_looking(value)
    if blank is not None:
        position, described = blank
        raise ValidationError(
            "speaker",
            f"contains {described} at position {position}, which shows nothing: a speaker"
            " holding it reads as another, or as no name",
        )
    return speaker(value)


def min_score(value: float | None, field: str = "min_score") -> float | None:
    """A score threshold in [0, 1] (None: the caller's default applies)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(field, f"must be a number between 0 and 1, got {shown(value)}")
    if not 0.0 <= float(value) <= 1.0 or value != value:
        raise ValidationError(field, f"must be between 0 and 1, got {value}")
    return float(value)


def flag(value: bool, field: str) -> bool:
    """A true-or-false switch, strictly: the text "false" is truthy in Python, so a switch
    read from text would do the opposite of what it says."""
    if not isinstance(value, bool):
        raise ValidationError(field, f"must be true or false, got {shown(value)}")
    return value


def limit(
    value: int | None, settings: Settings, field: str = "limit", *, default: int | None = None
) -> int:
    """A result count between 1 and ``max_limit``; None (when there is a ``default``) is
    ``default`` held to ``max_limit``.

    A default is not the caller's input: lowering ``RECALLD_MAX_LIMIT`` below a surface's
    default lowers the default with it, while a count the caller gave above the cap is
    still refused.
    """
    if value is None and default is not None:
        return min(default, settings.max_limit)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, f"must be an integer, got {shown(value)}")
    if not 1 <= value <= settings.max_limit:
        raise ValidationError(field, f"must be between 1 and {settings.max_limit}, got {value}")
    return value
