"""``recalld`` commands that move memories in and out: export, import, ingest, backup,
restore (``migrate`` is in :mod:`recalld.adapters.cli_migrate`)."""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar, cast

import click

from recalld.adapters._cli_support import (
    OUTPUT_PIECE_CHARS,
    InPieces,
    _print_json,
    _State,
    pass_state,
    progress_bar,
    read_text,
    refuse_empty_path,
    sigterm_ends_cleanly,
)
from recalld.errors import ValidationError
from recalld.store.base import BackupResult
from recalld.store.file_modes import PRIVATE_FILE_MODE

if TYPE_CHECKING:
    from recalld.service import MemoryService

__all__ = ["transfer_commands"]

T = TypeVar("T")

IMPORT_FORMATS = ("auto", "recalld", "mcp-memory", "mem0", "hermes", "chatgpt", "claude")


@click.command("export")
@click.argument(
    "file",
    type=click.Path(dir_okay=False, writable=True, allow_dash=True),
    default="-",
    callback=refuse_empty_path,
)
@click.option("--all-namespaces", is_flag=True, help="export every namespace (admin)")
@pass_state
def export_command(state: _State, file: str, all_namespaces: bool) -> None:
    """Write the namespace as JSON lines to FILE (default: stdout): every live memory,
    then core memory and the entities and relations declared through the knowledge tools.
    `recalld import` reads it back."""
    database = state.settings.db
    if isinstance(database, Path) and str(database) != ":memory:" and not database.exists():
        # Opening it would create an empty database, and its empty export (exit 0) would
        # pass for a backup of a mistyped --db (backup and migrate refuse it too).
        raise click.ClickException(
            f"there is no database at {database} to export: check --db (RECALLD_DB)"
        )
    if file != "-" and isinstance(database, Path):
        from recalld.store.sqlite_file import database_file

        if database_file(database, Path(file)):
            # The export replaces FILE: over the database (or its WAL) it destroyed it.
            raise click.BadParameter(
                f"{click.format_filename(file)} is the database itself or one of its own"
                " files (<db>-wal, -shm, -journal, -reserve, ...): the export would replace"
                " it; give another file name, e.g. memories.jsonl",
                param_hint="FILE",
            )
    memory = state.memory()
    namespaces = memory.namespaces() if all_namespaces else None
    problems: list[str] = []
    lines = memory.export(namespaces, on_problem=problems.append)
    try:
        if file != "-" and (not os.path.exists(file) or os.path.isfile(file)):
            with sigterm_ends_cleanly():
                _write_replacing(Path(file), lines)
        else:  # stdout, a pipe or a device: nothing to keep, nothing to replace
            with click.open_file(file, "w", encoding="utf-8") as output:
                # A line longer than a pipe holds (a memory of quotes or control characters,
                # each escaped) went out in one write that came back short, no error, when
                # the reader left: exit 0, the export cut. Long lines go a piece at a time.
                pieces = InPieces(output)
                for line in lines:
                    if len(line) < OUTPUT_PIECE_CHARS:
                        output.write(line + "\n")
                    else:
                        pieces.write(line + "\n")
    except OSError as error:  # a missing directory, a full disk, a file that takes no writes
        if file == "-":
            if error.errno == errno.EPIPE:
                raise  # the reader stopped early (`| head`): click ends quietly, as elsewhere
            # stdout was open: "Could not open file '-'" named neither what nor where.
            raise click.ClickException(
                f"could not write the export to stdout: {error.strerror or error}"
            ) from error
        # Not "Could not open file": the opening worked where a device (/dev/full) failed.
        raise click.ClickException(
            f"could not write the export to {click.format_filename(file)}:"
            f" {error.strerror or error}"
        ) from error
    # Every row was written; a row that could not be rendered as stored is named here,
    # so a backup is never silently different from the database.
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
    if problems:
        sys.exit(1)


def _write_replacing(path: Path, lines: Iterable[str]) -> None:
    """Write ``lines`` to a new file beside ``path`` (its target, for a link), synced, and
    only then move it over ``path``: an export that fails on its way (a database error,
    a full disk, Ctrl-C) leaves the file as it was, where truncating it first destroyed
    the previous export. The file keeps its permissions, owner and group (a private one
    stays private: its mode means the same people).

    Where no new file can be made beside it (a directory not the user's), given the old
    one's owner and group (one the user cannot give), or moved over it (a file mounted
    on its own, as a container's volume), it is written in place, as before: the export
    still lands where it worked."""
    target = Path(os.path.realpath(path))
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    before = target.stat() if target.exists() else None
    # A new export holds memories: owner-only, as the database (recalld.store.file_modes).
    mode = PRIVATE_FILE_MODE if before is None else stat.S_IMODE(before.st_mode)
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except PermissionError:
        _write_in_place(target, lines)
        return
    try:
        with open(descriptor, "w", encoding="utf-8") as output:
            if before is not None and not _took_over(output.fileno(), before):
                output.close()
                partial.unlink()
                _write_in_place(target, lines)
                return
            for line in lines:
                output.write(line + "\n")
            output.flush()
            os.fsync(output.fileno())
        try:
            os.replace(partial, target)
        except OSError as error:
            if error.errno not in (errno.EBUSY, errno.EXDEV):
                raise
            shutil.copyfile(partial, target)  # whole already: only the copy is in place
    finally:
        partial.unlink(missing_ok=True)  # gone after the rename; else never left behind


def _took_over(descriptor: int, before: os.stat_result) -> bool:
    """Give the open new file the mode, owner and group of the one it replaces (``before``);
    whether it could (only root gives a file to another user, or to a group not its own)."""
    os.fchmod(descriptor, stat.S_IMODE(before.st_mode))  # exactly the old mode, whatever the umask
    now = os.fstat(descriptor)
    if (now.st_uid, now.st_gid) == (before.st_uid, before.st_gid):
        return True
    try:
        os.fchown(descriptor, before.st_uid, before.st_gid)
    except PermissionError:
        return False
    return True


def _write_in_place(path: Path, lines: Iterable[str]) -> None:
    """Write ``lines`` over ``path`` itself (truncated first)."""
    with open(path, "w", encoding="utf-8") as output:
        for line in lines:
            output.write(line + "\n")


@click.command("import")
@click.argument("file", type=click.Path(exists=True, allow_dash=True, path_type=Path))
@click.option(
    "--format",
    "file_format",
    type=click.Choice(IMPORT_FORMATS),
    default="auto",
    show_default=True,
    help="auto: told by content. recalld: `recalld export` lines (ids optional);"
    " mcp-memory: the MCP memory server's memory.jsonl; mem0: mem0's exported memories"
    " (user_id/agent_id become namespaces user:ID, agent:ID); hermes: Hermes Agent's"
    " MEMORY.md / USER.md (or their directory) into core memory; chatgpt / claude: their"
    " conversations.json exports, one memory per message",
)
@click.option("--include-tools", is_flag=True, help="chat exports: keep tool calls and results")
@click.option("--include-system", is_flag=True, help="chat exports: keep system messages")
@click.option("--json", "as_json", is_flag=True, help="print the import report as JSON")
@pass_state
def import_command(
    state: _State,
    file: Path,
    file_format: str,
    include_tools: bool,
    include_system: bool,
    as_json: bool,
) -> None:
    """Import memories from FILE (- for stdin): a `recalld export`, or another tool's export
    (see --format).

    Idempotent: importing the same file again changes nothing. A bad line or item is
    reported with its number (on stderr; exit 1) and the rest is imported.
    """
    if str(file) != "-":
        from recalld.importing import refuse_unimportable

        refuse_unimportable(file, file_format)  # before the database is opened
    memory = state.memory()
    with _told_when_interrupted("import", "lines"):
        _import(state, memory, file, file_format, include_tools, include_system, as_json)


@contextmanager
def _told_when_interrupted(command: str, items: str) -> Iterator[None]:
    """Say on stderr what an ``import`` or ``ingest`` Ctrl-C stopped has kept, then stop
    as Ctrl-C does: each commits a chunk of ``items`` at a time, and "aborted" alone read
    as "nothing was written" (the README's "what it had not committed is rolled back")
    though every chunk before was kept (adversarial pass a65). Both are idempotent, so
    running them again finishes the work."""
    try:
        yield
    except KeyboardInterrupt:
        click.echo(
            f"interrupted: what the {command} wrote before Ctrl-C is kept (it commits a chunk"
            f" of {items} at a time; the one it was writing is rolled back): {command} the"
            " file again to finish, which skips what is already there",
            err=True,
        )
        raise


def _import(
    state: _State,
    memory: MemoryService,
    file: Path,
    file_format: str,
    include_tools: bool,
    include_system: bool,
    as_json: bool,
) -> None:
    """The import of ``import_command``: from stdin, or from a file with a progress bar."""
    if str(file) == "-":
        # As `recalld ingest -` reads it (`-` was "Path '-' does not exist"), told apart by
        # content like a file and read as one, in bounded pieces (read whole, a huge stdin
        # filled the memory twice over).
        with click.open_file("-", "rb") as stdin:
            report = memory.import_file(
                cast(BinaryIO, stdin),
                format=file_format,
                include_tools=include_tools,
                include_system=include_system,
            )
        _report(state, report, as_json)
        return
    bar = progress_bar("importing", unit="bytes" if file.is_file() else "")
    with bar:
        task = bar.add_task("import", total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report = memory.import_file(
            file,
            format=file_format,
            progress=advance,
            include_tools=include_tools,
            include_system=include_system,
        )
    _report(state, report, as_json)


def _report(state: _State, report: Any, as_json: bool) -> None:
    if as_json:
        _print_json(report)
    else:
        from recalld.adapters._cli_support import error_console
        from recalld.adapters.cli_output import show_import_report

        show_import_report(state.console, report, error_console())
    if report.errors:
        sys.exit(1)


@click.command("ingest")
@click.argument("file", type=click.File("rb"))
@click.option("--conversation", help="the conversation's id (default: derived from its start)")
@click.option("--title", help="the conversation's title")
@click.option("--at", help="when it happened (ISO 8601), for messages without a time")
@click.option("--tag", "tags", multiple=True, help="a tag for every turn (repeat)")
@click.option("--source", help="URI of the transcript (default recalld://conversation/ID)")
@click.option("--include-tools", is_flag=True, help="keep tool calls and tool results")
@click.option("--include-system", is_flag=True, help="keep system messages")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
@pass_state
def ingest_command(
    state: _State,
    file: Any,
    conversation: str | None,
    title: str | None,
    at: str | None,
    tags: tuple[str, ...],
    source: str | None,
    include_tools: bool,
    include_system: bool,
    as_json: bool,
) -> None:
    """Remember a conversation from FILE (- for stdin), one memory per message.

    FILE is JSON (a list of messages, or {"messages": [...], "title": ...}), JSON lines
    (one message per line) or text with one `Speaker: message` per line. A message
    has a role (user, assistant ...) or a speaker, its content, and optionally at and
    id. Ingesting the same transcript again changes nothing; one that grew adds only
    its new messages. System and tool messages are skipped unless asked for.
    """
    text = read_text(file)
    try:
        with _told_when_interrupted("ingest", "turns"):
            _ingest(
                state,
                text,
                conversation,
                title,
                at,
                tags,
                source,
                include_tools,
                include_system,
                as_json,
            )
    except ValidationError as error:
        found = _other_export(text)
        if found is None:
            raise
        # `recalld ingest conversations.json` (a ChatGPT export) was refused as
        # "messages[0].title: Extra inputs are not permitted": the file is right, the
        # command is not.
        name = str(getattr(file, "name", "<stdin>"))
        name = "-" if name == "<stdin>" else name
        raise ValidationError(
            error.field,
            f"{error.message} (the file is {found}: bring it in with `recalld import {name}`)",
        ) from None


# What `recalld import` reads that `recalld ingest` does not, as the import names it.
_EXPORTS = {
    "chatgpt": "ChatGPT's export",
    "claude": "Claude's export",
    "mem0": "mem0's export",
    "mcp-memory": "the MCP memory server's memory.jsonl",
}


def _other_export(text: str) -> str | None:
    """What another tool's export (or a `recalld export`) ``text`` is, when it is one."""
    from recalld.importing import detect_format
    from recalld.importing.detect import SAMPLE_BYTES

    try:
        found = detect_format(text[:SAMPLE_BYTES])
    except ValidationError:
        return None
    if found == "recalld":
        first = text.lstrip("\ufeff \t\r\n").split("\n", 1)[0]
        # An export's memory lines name their namespace; a transcript's messages do not.
        return "a `recalld export`" if '"namespace":' in first else None
    return _EXPORTS.get(found)


def _ingest(
    state: _State,
    text: str,
    conversation: str | None,
    title: str | None,
    at: str | None,
    tags: tuple[str, ...],
    source: str | None,
    include_tools: bool,
    include_system: bool,
    as_json: bool,
) -> None:
    from recalld.importing.transcript import read_transcript

    fields = read_transcript(text)
    for name, value in (
        ("conversation", conversation),
        ("title", title),
        ("at", at),
        ("source", source),
    ):
        if value is not None:
            fields[name] = value
    if tags:
        fields["tags"] = list(tags)
    fields["include_tools"] = include_tools or fields.get("include_tools", False)
    fields["include_system"] = include_system or fields.get("include_system", False)
    memory = state.memory()
    bar = progress_bar("ingesting")
    with bar:
        task = bar.add_task("ingest", total=len(fields.get("messages", [])))

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report = memory.conversations.remember(fields, progress=advance)
    if as_json:
        _print_json(report)
        return
    click.echo(
        f"conversation {report.conversation}: created {report.created}, updated"
        f" {report.updated}, unchanged {report.unchanged}, skipped {report.skipped}"
        f" (source {report.source})"
    )
    for skipped in report.skipped_messages:
        click.echo(f"  message {skipped.index}: skipped, {skipped.reason}", err=True)


@click.command("backup")
@click.argument("destination", type=click.Path(), callback=refuse_empty_path)
@click.option("--json", "as_json", is_flag=True, help="print what was copied as JSON")
@pass_state
def backup_command(state: _State, destination: str, as_json: bool) -> None:
    """Copy the whole database to DESTINATION (a new file, or a directory to put it in)
    while servers keep writing: the copy holds every write acknowledged before it began,
    but no memory whose TTL has passed (they are purged first). A database an older
    recalld wrote is copied as it is (neither upgraded nor purged)."""
    from recalld.scrubbing import Scrubber
    from recalld.service import purge_before_backup
    from recalld.store.factory import open_store

    database = state.settings.db
    # A postgresql:// URL goes on to the store, which says to use pg_dump.
    if isinstance(database, Path) and not database.exists():
        raise click.ClickException(f"there is no database at {database} to back up")
    target = Path(destination)
    directory, now = (target, datetime.now(UTC)) if target.is_dir() else (None, None)
    if directory is not None and now is not None:
        target = _new_name_in(directory, now)
    elif destination.endswith(tuple(separator for separator in (os.sep, os.altsep) if separator)):
        # Path() drops the trailing "/": the copy became a file named like the directory.
        raise click.BadParameter(
            f"{click.format_filename(destination)} names a directory (it ends with"
            f" {destination[-1]}), and there is none there: create it first, or give a file"
            " name",
            param_hint="DESTINATION",
        )
    if isinstance(database, Path):
        from recalld.store.migrations import MIGRATIONS
        from recalld.store.sqlite_file import copy_older_schema

        with sigterm_ends_cleanly():
            older = _named_in_turn(
                lambda name: copy_older_schema(database, name, len(MIGRATIONS)),
                target,
                directory,
                now,
            )
        if older is not None:
            if older.schema_version >= len(MIGRATIONS):
                # Upgraded by a process of this version between the check and the copy.
                _report_backup(older, str(database.resolve()), as_json)
                return
            click.echo(
                f"note: {database} is at schema {older.schema_version}, older than this"
                f" recalld's {len(MIGRATIONS)}: copied as it is (not upgraded, expired"
                " memories not purged), so the recalld that wrote it can open the copy; it"
                " keeps what the upgrade removes (expired memories, traces of forgotten"
                " ones), so delete it once the upgrade has worked",
                err=True,
            )
            _report_backup(older, str(database.resolve()), as_json)
            return
    store = open_store(state.settings)
    scrubber = Scrubber(store, state.settings)
    try:
        source = store.location()
        if isinstance(database, Path):
            # As MemoryService.backup: an expired memory no read shows any more must not
            # live on in the copy, where no purge reaches (this process purged nothing
            # yet, and a server's purge runs at most every purge_interval_seconds).
            purge_before_backup(store, datetime.now(UTC))
        with sigterm_ends_cleanly():
            result = _named_in_turn(store.backup, target, directory, now)
    finally:
        # The purge's scrub, done now unless a reader holds it up (then the next process
        # to open the database finishes it); the copy has no trace of it either way.
        scrubber.close()
        store.close()
    _report_backup(result, source, as_json)


@click.command("restore")
@click.argument("backup", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="print what was done as JSON")
@pass_state
def restore_command(state: _State, backup: Path, as_json: bool) -> None:
    """Put a copy of BACKUP (what `recalld backup` wrote) in place of the database, once
    every recalld process using it has stopped (refused while one has it open). The
    database is kept as <db>.old, with its -wal as <db>.old-wal (after a crash it holds
    the newest writes); refused while a <db>.old is there (move it away first). The copy
    is complete and fsynced before anything is moved."""
    from recalld.store.sqlite_restore import restore_database

    database = state.settings.db
    if not isinstance(database, Path):
        raise click.ClickException(
            "the database is PostgreSQL: restore a pg_dump with pg_restore; recalld restore"
            " puts a `recalld backup` of an SQLite database in place"
        )
    result = restore_database(backup, database)
    if as_json:
        _print_json(
            {
                "database": str(result.database),
                "backup": str(result.backup),
                "old": None if result.old is None else str(result.old),
                "old_log": None if result.old_log is None else str(result.old_log),
            }
        )
        return
    click.echo(f"restored {result.backup} in place of {result.database}")
    if result.old is not None:
        kept = "" if result.old_log is None else f" (its log as {result.old_log.name})"
        click.echo(f"the database it replaced is {result.old}{kept}")
    click.echo(
        "A token revoked or a memory forgotten since the backup is back: revoke or forget it again."
    )


def _report_backup(result: BackupResult, source: str, as_json: bool) -> None:
    copy = result.destination.resolve()
    if as_json:
        _print_json(
            {
                "destination": str(copy),
                "bytes": result.bytes,
                "memories": result.memories,
                "schema_version": result.schema_version,
                "source": source,
            }
        )
        return
    from recalld.adapters.cli_output import format_bytes

    click.echo(
        f"backed up {source} to {copy} ({format_bytes(result.bytes)},"
        f" {result.memories} memories, schema {result.schema_version})"
    )
    click.echo(_restore_hint(source, copy))


def _new_name_in(directory: Path, now: datetime) -> Path:
    """``recalld-<time>.db`` in ``directory``, or ``recalld-<time>-2.db``, ``-3``, ... when
    another backup took that name in the same second: the second backup of a script that
    makes two ("before the migration", "after") was refused with "already exists; give a
    new file name", though the user gave no file name."""
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    candidate = directory / f"recalld-{stamp}.db"
    number = 1
    while os.path.lexists(candidate):
        number += 1
        candidate = directory / f"recalld-{stamp}-{number}.db"
    return candidate


def _named_in_turn(
    copy: Callable[[Path], T], target: Path, directory: Path | None, now: datetime | None
) -> T:
    """``copy(target)``; when recalld chose the name (DESTINATION is a directory) and
    another backup published it first (two run at once, e.g. of two databases into one
    directory), again under the next free name instead of failing with "already exists;
    give a new file name" though no name was given."""
    from recalld.store.sqlite_file import DestinationExistsError

    while True:
        try:
            return copy(target)
        except DestinationExistsError:
            if directory is None or now is None:
                raise
            following = _new_name_in(directory, now)
            if following == target:  # taken and gone again: nothing to step past
                raise
            target = following


def _restore_hint(source: str, copy: Path) -> str:
    """How to put ``copy`` in place of the database at ``source``: shell commands with every
    path quoted, since a path with a space (macOS's default data directory, "Application
    Support") split into words that named other files, and ``rm -f`` deleted them.

    The database's ``-wal`` goes with it to ``<db>.old-wal``, not away: after a crash (the
    usual reason to restore) it holds the newest acknowledged writes, and the old file
    without it lost them (or, mid-checkpoint, read as damaged). Its ``-shm`` is an index
    SQLite rebuilds from the log.

    A ``<db>.old-wal`` left by an earlier restore is removed first: its ``<db>.old`` was
    just replaced, and SQLite applies whatever log lies beside a file as that file's, so a
    second restore after a clean stop (no ``-wal`` to take its place) left the new
    ``<db>.old`` reading the old log's pages: "database disk image is malformed"."""
    live, old, backup = shlex.quote(source), shlex.quote(f"{source}.old"), shlex.quote(str(copy))
    wal, shm = shlex.quote(f"{source}-wal"), shlex.quote(f"{source}-shm")
    old_wal, old_shm = shlex.quote(f"{source}.old-wal"), shlex.quote(f"{source}.old-shm")
    return (
        "To restore it: stop every recalld process using the database, then\n"
        f"  recalld --db {live} restore {backup}\n"
        f"(it keeps the replaced database as {old} and refuses while one is there), or by hand,"
        f" which replaces any {old}:\n"
        f"  mv {live} {old} && rm -f {old_wal} {old_shm} &&"
        f" if [ -e {wal} ]; then mv {wal} {old_wal}; fi && rm -f {shm}\n"
        f"  cp {backup} {live}\n"
        f"or use the copy where it is: recalld --db {backup} ...\n"
        "The copy is the database as it is now: after a restore, a token revoked or a"
        " memory forgotten since then is back (revoke or forget it again)."
    )


transfer_commands: list[click.Command] = [
    export_command,
    import_command,
    ingest_command,
    backup_command,
    restore_command,
]
