"""Bringing memories from other tools: one entry point, a format per source, one report.

Formats (``format="auto"`` tells them apart by content, see :mod:`.detect`):

- ``recalld``: the lines of ``recalld export`` (memories, core memory, the
  declared graph; see :mod:`recalld.transfer`); ids are optional;
- ``mcp-memory``: the MCP reference memory server's ``memory.jsonl``
  (:meth:`recalld.knowledge.KnowledgeGraph.import_jsonl`);
- ``mem0``: mem0's exported memories (:mod:`.mem0`);
- ``hermes``: Hermes Agent's ``MEMORY.md`` / ``USER.md`` into core memory
  (:mod:`.hermes`); a directory holding them imports both; a file (or upload)
  not named ``USER.md`` fills ``memory``;
- ``chatgpt`` / ``claude``: chat exports, through conversation ingestion
  (:mod:`.chats`, :mod:`recalld.conversations`).

Every importer reports what it created, updated, left unchanged, skipped and
refused, each refusal with its line (files of lines) or item number (JSON
documents); a refused line or item writes nothing, and the others still
import. A line or item with the id of an earlier one of the same file (a mem0
memory, a recalld memory in its namespace, a chat export's conversation, a
message of one conversation) is refused, naming the first: it would overwrite
the first on every import. A leading UTF-8 byte-order mark is ignored; a file
or upload in UTF-16 or UTF-32 (its mark, or NUL bytes among its first characters) is
refused whole, naming it. A document
that cannot be read at all is one error (line 1); an empty upload imports
nothing, and one whose format ``auto`` cannot tell is read as recalld lines
(each bad one reported). ``may_write(namespace)`` is asked before anything is
written to a namespace (over HTTP: the token's scopes).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from recalld import _validate as check
from recalld.conflicts import rerun_on_conflict
from recalld.errors import ConflictError, ValidationError
from recalld.importing.detect import FORMATS, HERMES_FILES, SAMPLE_BYTES, detect_format
from recalld.model import ImportLineError, ImportReport, Memory, NewMemory
from recalld.scoping import mem0_namespace
from recalld.transfer_lines import add_counts

if TYPE_CHECKING:
    from recalld.service import MemoryService

__all__ = [
    "FORMATS",
    "Progress",
    "detect_format",
    "import_file",
    "import_text",
    "refuse_directory",
    "refuse_unimportable",
]

# progress(done, total): lines or bytes or items so far, out of total (for progress bars).
Progress = Callable[[int, int], None]
MayWrite = Callable[[str], bool]
CHUNK_ITEMS = 500
# The longest line a file of lines may hold: far past any export's (a memory of the
# content limit with its meta, an experience's senses line of two 1 MiB features in base64).
MAX_LINE_BYTES = 64 * 1024 * 1024
# recalld's fields of a memory and the mem0 fields they are read from.
MEM0_NAMES = {"content": "memory", "meta": "metadata", "tags": "categories", "at": "created_at"}
BOM = "\ufeff"
BOM_BYTES = BOM.encode("utf-8")
# UTF-32's before UTF-16's: UTF-32 LE's mark starts with UTF-16 LE's.
WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


class _Run:
    """One import: the service, where things go, who may write where, how far it got."""

    def __init__(
        self,
        service: MemoryService,
        namespace: str,
        may_write: MayWrite | None,
        progress: Progress | None,
        include_tools: bool,
        include_system: bool,
    ) -> None:
        self.service = service
        self.namespace = namespace
        self.may_write = may_write
        self.progress = progress
        self.include_tools = include_tools
        self.include_system = include_system

    def allowed(self, namespace: str) -> bool:
        return self.may_write is None or self.may_write(namespace)

    def tick(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total)


def refuse_directory(path: Path, format: str) -> None:
    """Refuse ``path`` naming ``file`` if it is a directory ``format`` cannot import (only
    hermes imports one); the CLI asks before it opens the database (review of pass e66)."""
    if path.is_dir() and format not in ("auto", "hermes"):
        raise ValidationError(
            "file", f"{path} is a directory (only hermes imports one){_export_hint(path)}"
        )


def import_file(
    service: MemoryService,
    path: Path | BinaryIO,
    *,
    format: str = "auto",
    namespace: str | None = None,
    may_write: MayWrite | None = None,
    progress: Progress | None = None,
    include_tools: bool = False,
    include_system: bool = False,
) -> ImportReport:
    """Import the file (or, for Hermes, the directory) at ``path``, or what an open binary
    stream (stdin) holds; see the module docstring."""
    run = _Run(
        service, service._namespace(namespace), may_write, progress, include_tools, include_system
    )
    if not isinstance(path, Path):
        # Read as a file is (`recalld import -`): it was read whole and split, so a huge
        # stdin filled the memory, and the bound on a line's length never applied.
        name = getattr(path, "name", None)
        shown = name if isinstance(name, str) and name else "<stdin>"
        try:
            return _import_source(run, path, format, shown, None, 0)
        except OSError as error:
            reason = error.strerror or error
            raise ValidationError("file", f"cannot read {shown}: {reason}") from error
    if path.is_dir():
        refuse_directory(path, format)
        return _hermes_directory(run, path)
    try:
        # Opened once: a pipe (``/dev/stdin``, ``<(...)``) cannot be read again, so the
        # sample that tells the format is read on with the rest.
        with path.open("rb") as source:
            return _import_source(run, source, format, str(path), path.name, _size(path))
    except OSError as error:  # unreadable: a device, a directory's permissions, an I/O error
        raise ValidationError("file", f"cannot read {path}: {error.strerror or error}") from error


def _import_source(
    run: _Run, source: BinaryIO, format: str, shown: str, name: str | None, total: int
) -> ImportReport:
    """Import what ``source`` holds (``shown`` names it in errors, ``name`` is its file
    name if it has one, ``total`` its size for progress, 0 if unknown)."""
    head = source.read(SAMPLE_BYTES)
    if not isinstance(head, bytes):  # a text stream (sys.stdin rather than its .buffer)
        raise ValidationError(
            "file", f"{shown} is read as text: give a binary stream (sys.stdin.buffer, 'rb')"
        )
    chosen = _format_of(head, format, shown, name)
    if chosen is None:
        return ImportReport()
    if chosen in ("recalld", "mcp-memory"):
        # Chunks read before a failed read stay imported (a second run skips them).
        return _lines(run, chosen, _file_lines(head, source, total, run))
    whole = head + source.read()
    return _document(run, chosen, whole, name)


def _format_of(head: bytes, format: str, shown: str, name: str | None) -> str | None:
    """The format of a file that starts with ``head`` (``format``, or told by content for
    auto), None when it holds nothing to import; raises ValidationError for a file no
    importer reads (an archive, UTF-16, a database, what no format is)."""
    kind = check.archive_kind(head)
    if kind is not None:  # in any format: no importer reads an archive
        raise ValidationError("file", f"{shown} {check.archive_message(kind)}")
    if format == "auto" and len(head) < SAMPLE_BYTES and _empty(head, name):
        # The whole file is empty (an export of an empty namespace, or of an account
        # without conversations: "[]"): nothing to import.
        return None
    wide = wide_encoding(head)
    if wide is not None:
        # Told apart by content it could not be: "cannot tell the format" said nothing
        # of the cause (PowerShell's `>` writes UTF-16); and as lines, it was split at
        # its 0x0a bytes, each piece refused as "not JSON", lines it never held.
        raise ValidationError("file", f"{shown} {wide}")
    return _chosen(format, head.decode("utf-8", errors="replace"), name)


def refuse_unimportable(path: Path, format: str) -> None:
    """Refuse ``path`` as the import would, from its start, before the database is opened
    (the CLI asks): a file no importer reads (a backup's database, an archive, UTF-16,
    what no format is) created the database of a mistyped ``--db`` anyway, and a new
    one said "created a new database" beside the refusal (adversarial pass d69). Only a
    directory or a regular file is read here: a pipe cannot be read twice."""
    refuse_directory(path, format)
    if not path.is_file():
        return
    try:
        with path.open("rb") as source:
            head = source.read(SAMPLE_BYTES)
    except OSError as error:
        raise ValidationError("file", f"cannot read {path}: {error.strerror or error}") from error
    _format_of(head, format, str(path), path.name)


def import_text(
    service: MemoryService,
    text: str | bytes,
    *,
    format: str = "auto",
    name: str | None = None,
    namespace: str | None = None,
    may_write: MayWrite | None = None,
    progress: Progress | None = None,
    include_tools: bool = False,
    include_system: bool = False,
) -> ImportReport:
    """Import ``text`` (an upload; ``name`` its file name, if known). As bytes, it is read
    as UTF-8 line by line (a line that is not UTF-8 is a bad line) or, for a document, as
    a whole."""
    run = _Run(
        service, service._namespace(namespace), may_write, progress, include_tools, include_system
    )
    kind = check.archive_kind(text) if isinstance(text, bytes) else None
    if kind is not None:  # in any format: no importer reads an archive
        raise ValidationError("file", f"the upload {check.archive_message(kind)}")
    wide = wide_encoding(text) if isinstance(text, bytes) else None
    if wide is not None:
        raise ValidationError("file", f"the upload {wide}")  # as a file's (above)
    # An editor's byte-order mark is no part of the first record.
    text = text.removeprefix(BOM_BYTES) if isinstance(text, bytes) else text.removeprefix(BOM)
    if format == "auto" and _empty(text, name):
        return ImportReport()  # an empty upload imports nothing (as an empty recalld file)
    sample = text[:SAMPLE_BYTES]
    try:
        chosen = _chosen(
            format,
            sample.decode("utf-8", errors="replace") if isinstance(sample, bytes) else sample,
            name,
        )
    except ValidationError as error:
        if format != "auto" or error.field != "format":
            raise
        # An upload nothing recognises is read as recalld lines: each one is reported.
        chosen = "recalld"
    if chosen in ("recalld", "mcp-memory"):
        # Lines end at "\n" only: JSON strings may hold U+2028, which splitlines() splits on.
        if isinstance(text, bytes):
            return _lines(
                run, chosen, iter([line.removesuffix(b"\r") for line in text.split(b"\n")])
            )
        return _lines(run, chosen, iter([line.removesuffix("\r") for line in text.split("\n")]))
    return _document(run, chosen, text, name)


def wide_encoding(head: bytes) -> str | None:
    """Why ``head``, the start of a file, is UTF-16 or UTF-32 rather than UTF-8 (its
    byte-order mark, or a NUL byte beside an ASCII one among its first four: no UTF-8 JSON
    or Markdown starts so), or None."""
    for mark, name in WIDE_BOMS:
        if head.startswith(mark):
            return f"is {name} (it starts with its byte-order mark): save it as UTF-8"
    first = head[:4]
    if 0 in first and any(0 < byte < 0x80 for byte in first):
        return "is UTF-16 or UTF-32 (NUL bytes between its first characters): save it as UTF-8"
    return None


def _empty(text: str | bytes, name: str | None) -> bool:
    """Whether ``text`` holds nothing to import: white space (after a byte-order mark), or
    an empty JSON list (a chat export or mem0 export of nothing), which no format could be
    told from ("cannot tell the format", exit 1, for an export with nothing in it); not in
    a Hermes file (``name``: MEMORY.md, USER.md, a .md), where "[]" is an entry's text."""
    if name is not None and (_hermes_target(name) == "user" or name.lower().endswith(".md")):
        return not text.strip()
    if isinstance(text, bytes):
        data = text.removeprefix(BOM_BYTES).strip()
        return not data or (data[:1] == b"[" and data[1:].strip() == b"]")
    whole = text.removeprefix(BOM).strip()
    return not whole or (whole[:1] == "[" and whole[1:].strip() == "]")


def _chosen(format: str, sample: str, name: str | None) -> str:
    if format == "auto":
        return detect_format(sample, name)
    if format not in FORMATS:
        known = ", ".join(FORMATS)
        raise ValidationError("format", f"must be auto or one of {known}; got {format!r}")
    return format


def _size(path: Path) -> int:
    """The file's size for progress (0 for a pipe, whose size is unknown)."""
    return path.stat().st_size if path.is_file() else 0


def _file_lines(head: bytes, rest: BinaryIO, total: int, run: _Run) -> Iterator[bytes]:
    """The lines of ``head`` then of what ``rest`` still holds, without their line ends
    (bytes: each is decoded by itself, so a line that is not UTF-8 is one bad line)."""
    done = 0
    for number, raw in enumerate(_rejoined(head, rest)):
        if isinstance(raw, check.LongLine):
            yield raw  # reported as the line it stands for; nothing follows it
            return
        done += len(raw)
        run.tick(done, total)
        line = raw.removesuffix(b"\n").removesuffix(b"\r")
        # A byte-order mark (Windows editors write one) is no part of the first record.
        yield line.removeprefix(BOM_BYTES) if number == 0 else line


def _rejoined(head: bytes, rest: BinaryIO) -> Iterator[bytes]:
    """The lines of ``head`` followed by ``rest``'s, the line the sample cut made whole.

    A line longer than :data:`MAX_LINE_BYTES` (past the sample) ends the reading: in its
    place comes a :class:`~recalld._validate.LongLine`, reported as a bad line by its
    number, and nothing after it, so what came before it is imported and reported. It
    was read whole first, so a file without line ends (a 2 GB one, ``/dev/zero``) took
    all the memory; raised from here, the lines of the chunk being read, and every
    structure line (imported after the memories), were dropped unreported."""
    *whole, cut = head.split(b"\n")
    for line in whole:
        yield line + b"\n"
    while raw := rest.readline(MAX_LINE_BYTES + 1 - len(cut)):
        raw, cut = cut + raw, b""
        if len(raw) > MAX_LINE_BYTES:
            yield check.LongLine.of(MAX_LINE_BYTES)
            return
        yield raw
    if cut:  # the sample held the end of a file without a last line end
        yield cut


def _lines(run: _Run, chosen: str, lines: Iterator[str] | Iterator[bytes]) -> ImportReport:
    service = run.service
    if chosen == "recalld":
        report = ImportReport(format="recalld")
        return service._transfer.import_lines(
            lines, run.namespace, may_write=run.may_write, report=report
        )
    if not run.allowed(run.namespace):
        raise_denied(run.namespace)
    knowledge = service.knowledge.import_jsonl(lines, namespace=run.namespace)
    report = ImportReport(format="mcp-memory", unchanged=knowledge.unchanged)
    for what, number in (
        ("entities", knowledge.entities),
        ("observations", knowledge.observations),
        ("relations", knowledge.relations),
    ):
        if number:
            report.count("created", what, number)
    report.refuse_all(knowledge)
    return report


def raise_denied(namespace: str) -> None:
    """Refuse an import into a namespace the caller may not write."""
    from recalld.errors import PermissionDeniedError

    raise PermissionDeniedError(f"this token may not write namespace {namespace!r}")


def _document(run: _Run, chosen: str, text: str | bytes, name: str | None) -> ImportReport:
    try:
        if isinstance(text, bytes):
            text = check.utf8_text(text, "document").removeprefix(BOM)
        if chosen == "mem0":
            return _mem0(run, text)
        if chosen == "hermes":
            return _hermes(run, text, name)
        return _chats(run, chosen, text)
    except ValidationError as error:
        if error.field != "document":
            raise
        # The whole document is unreadable: one error, as a file of lines reports a bad line.
        return ImportReport(format=chosen, errors=[ImportLineError(line=1, error=str(error))])


# -- mem0 --------------------------------------------------------------------


def _mem0(run: _Run, text: str) -> ImportReport:
    from recalld.importing.mem0 import draft_of, parse_mem0
    from recalld.writing import expired

    report = ImportReport(format="mem0")
    memories = parse_mem0(text)
    service = run.service
    # The first item with a given id is imported; a later one would overwrite it on
    # every run (never idempotent), so it is refused, naming the first one's place.
    first_with_id: dict[str, str] = {}
    dropped = False  # an expired memory holding an item's id, deleted: scrubbed at the end

    def write_chunk(chunk: list[Any], report: ImportReport, first_with_id: dict[str, str]) -> bool:
        """One chunk's transaction; whether it deleted an expired memory (to scrub)."""
        deleted = False
        with service.store.transaction() as tx:
            for memory in chunk:
                where = {"item": memory.item, "line": memory.line}
                try:
                    draft_data, user_id, agent_id = draft_of(memory)
                    namespace = mem0_namespace(user_id, agent_id) or run.namespace
                    check.namespace(namespace)
                    if not run.allowed(namespace):
                        raise ValidationError("namespace", f"may not write to {namespace!r}")
                    draft = check.parse_model(NewMemory, draft_data)
                    if draft.id is not None:
                        _claim_id(first_with_id, draft.id, memory.item, memory.line)
                    existing = None if draft.id is None else tx.find(namespace, id=draft.id)
                    if existing is not None and not expired(existing, service._clock()):
                        if existing.content == draft.content or _edited_here(existing, draft):
                            report.count("unchanged", "memories")
                            continue
                        meta = {**existing.meta, "mem0": draft.meta["mem0"]}
                        service._writer.updated(
                            tx, existing, {"content": draft.content, "meta": meta}, service._clock()
                        )
                        report.count("updated", "memories")
                        continue
                    receipt, _ = service._write(tx, draft, namespace, dedupe=True)
                except ValidationError as error:
                    # Named as mem0 names the field: "content: is 70000 bytes" pointed at
                    # no field of the export.
                    named = check.renamed(error, MEM0_NAMES)
                    report.refuse(ImportLineError(**where, error=str(named)))
                    continue
                except ConflictError as error:
                    report.refuse(ImportLineError(**where, error=str(error)))
                    continue
                deleted = deleted or receipt.scrub == "pending"
                report.count("skipped" if receipt.status == "duplicate" else "created", "memories")
        return deleted

    for start in range(0, len(memories), CHUNK_ITEMS):
        chunk = memories[start : start + CHUNK_ITEMS]
        # Run again whole on a PostgreSQL conflict, counted once (integration read, stop 69):
        # each attempt claims ids from what the chunks before it claimed.
        counts, claimed, chunk_dropped = rerun_on_conflict(
            functools.partial(_attempt, write_chunk, chunk, first_with_id),
            what="import",
        )
        add_counts(report, counts)
        first_with_id = claimed
        dropped = dropped or chunk_dropped
        run.tick(min(start + CHUNK_ITEMS, len(memories)), len(memories))
    if report.updated or dropped:
        service.scrubber.after_drop()
    return report


def _edited_here(existing: Memory, draft: NewMemory) -> bool:
    """Whether ``existing``, imported from mem0, differs from ``draft`` because it was
    edited here: mem0's text is still the one it was imported from (the same hash)."""
    before = existing.meta.get("mem0")
    now = draft.meta.get("mem0")
    return (
        isinstance(before, dict)
        and isinstance(now, dict)
        and before.get("hash") is not None
        and before.get("hash") == now.get("hash")
    )


def _claim_id(first_with_id: dict[str, str], memory_id: str, item: int, line: int | None) -> None:
    """Note the first item with ``memory_id``; refuse a later one (``ValidationError``)."""
    first = first_with_id.get(memory_id)
    if first is not None:
        mem0_id = memory_id.removeprefix("mem0-")
        raise ValidationError(
            "id", f"{mem0_id!r} repeats {first}: only the first item with an id is imported"
        )
    first_with_id[memory_id] = f"item {item}" if line is None else f"item {item} (line {line})"


def _attempt(
    write: Callable[[list[Any], ImportReport, dict[str, str]], bool],
    chunk: list[Any],
    first_with_id: dict[str, str],
) -> tuple[ImportReport, dict[str, str], bool]:
    """One attempt at a mem0 chunk: into a report and a copy of the claimed ids of its own."""
    counts = ImportReport(format="mem0")
    claimed = dict(first_with_id)
    return counts, claimed, write(chunk, counts, claimed)


# -- hermes ------------------------------------------------------------------


def _hermes_target(name: str | None) -> str:
    """``user`` for a file named USER.md, else ``memory`` (MEMORY.md, or text without a name:
    Hermes keeps the agent's own notes there)."""
    if name is None:
        return "memory"
    return HERMES_FILES.get(Path(name).name.upper(), "memory")


def _hermes(
    run: _Run, text: str, name: str | None, report: ImportReport | None = None
) -> ImportReport:
    from recalld.importing.hermes import split_entries
    from recalld.transfer import restore_core_entries

    target = _hermes_target(name)
    if not run.allowed(run.namespace):
        raise_denied(run.namespace)
    report = report or ImportReport(format="hermes")
    entries = split_entries(text)
    joined = sum(1 for entry in entries if entry.joined_lines > 1)
    if joined:
        report.details[f"{target} entries joined to one line"] = joined
    restore_core_entries(
        run.service.core,
        target,
        [entry.text for entry in entries],
        run.namespace,
        report,
        position=lambda index: {"line": entries[index].line, "item": entries[index].number},
    )
    run.tick(len(entries), len(entries))
    return report


def _export_hint(directory: Path) -> str:
    """Where the import is, when ``directory`` is an unpacked chat export (ChatGPT's and
    Claude's zips hold a conversations.json): given the directory, the refusal said only
    that it held no Hermes file."""
    found = directory / "conversations.json"
    return f"; import the chat export's {found}" if found.is_file() else ""


def _hermes_directory(run: _Run, path: Path) -> ImportReport:
    report = ImportReport(format="hermes")
    # Both read (and decoded) before either is imported: one that cannot be read leaves
    # nothing of the other written.
    # Found whatever their case (memory.md, as a file given alone is read), USER.md first.
    found: dict[str, list[Path]] = {}
    for entry in sorted(path.iterdir()):
        if entry.name.upper() in HERMES_FILES and entry.is_file():
            found.setdefault(entry.name.upper(), []).append(entry)
    for files in found.values():
        if len(files) > 1:
            names = " and ".join(file.name for file in files)
            raise ValidationError("file", f"{path} holds both {names}: keep one")
    chosen = [found[upper][0] for upper in ("USER.MD", "MEMORY.MD") if upper in found]
    texts = {file.name: check.utf8_text(file.read_bytes(), file.name) for file in chosen}
    if not texts:
        raise ValidationError(
            "file", f"{path} holds neither MEMORY.md nor USER.md{_export_hint(path)}"
        )
    for name, text in texts.items():
        _hermes(run, text, name, report)
    return report


# -- chat exports ------------------------------------------------------------


def _chats(run: _Run, chosen: str, text: str) -> ImportReport:
    from recalld.importing.chats import chatgpt_conversations, claude_conversations, load_document

    if not run.allowed(run.namespace):
        raise_denied(run.namespace)
    report = ImportReport(format=chosen)
    document = load_document(text)
    items = list(
        chatgpt_conversations(document, run.service.settings.max_content_bytes)
        if chosen == "chatgpt"
        else claude_conversations(document, run.service.settings.max_content_bytes)
    )
    # A conversation id already imported from an earlier item would overwrite its turns
    # on every run (never idempotent): the later item is refused.
    first_item: dict[str, int] = {}
    for done, chat in enumerate(items, start=1):
        item, conversation = chat.number, chat.conversation
        if conversation is None:  # a chat without messages: nothing to write
            report.count("skipped", "conversations")
            report.details["conversations without messages"] = (
                report.details.get("conversations without messages", 0) + 1
            )
            run.tick(done, len(items))
            continue
        if isinstance(conversation, ValidationError):
            report.refuse(ImportLineError(item=item, error=str(conversation)))
            continue
        conversation_id = str(conversation.conversation)
        earlier = first_item.get(conversation_id)
        if earlier is not None:
            shown = conversation_id.removeprefix(f"{chosen}:")
            report.refuse(
                ImportLineError(
                    item=item,
                    error=f"id: conversation {shown!r} repeats item {earlier}:"
                    " only the first is imported",
                )
            )
            continue
        for why in chat.left_out:
            report.refuse(ImportLineError(item=item, error=str(why)))
        conversation = conversation.model_copy(
            update={"include_tools": run.include_tools, "include_system": run.include_system}
        )
        try:
            result = run.service.remember_conversation(conversation, namespace=run.namespace)
        except (ValidationError, ConflictError) as error:
            report.refuse(ImportLineError(item=item, error=str(chat.named(error))))
            continue
        first_item[conversation_id] = item
        if result.created:
            report.details["conversations"] = report.details.get("conversations", 0) + 1
        report.count("created", "turns", result.created)
        report.count("updated", "turns", result.updated)
        report.unchanged += result.unchanged
        report.skipped += result.skipped
        run.tick(done, len(items))
    return report
