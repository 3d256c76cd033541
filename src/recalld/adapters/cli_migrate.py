"""``recalld migrate``: bring the schema up to date, or copy a database to another store
(SQLite ↔ PostgreSQL), with progress bars.

The heavy imports (rich, the copier, the stores) happen inside the command, so
commands that do not migrate start fast.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from recalld.adapters._cli_support import _print_json, _State, pass_state, refuse_empty_path

if TYPE_CHECKING:
    from recalld.config import Settings
    from recalld.moving import CopyReport
    from recalld.store.base import Store

__all__ = ["migrate_command"]


@click.command("migrate")
@click.option(
    "--to",
    "destination",
    callback=refuse_empty_path,
    help="the database to copy into: a postgresql:// URL or a SQLite file path"
    " [default: only bring --db's schema up to date]",
)
@click.option(
    "--from",
    "origin",
    callback=refuse_empty_path,
    help="the database to copy from [default: --db / RECALLD_DB]",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='print rows copied per table (with --to), else {"database", "schema_version", "created"}',
)
@pass_state
def migrate_command(
    state: _State, destination: str | None, origin: str | None, as_json: bool
) -> None:
    """Without --to: apply pending schema migrations now (every command does it when it
    opens the database; this shows a progress bar for a large one and exits).

    With --to: copy every memory, vector, job, core memory, context feature, token hash,
    intention and graph row into another database (PostgreSQL and back); a memory whose
    TTL has passed is left out, with its rows. Safe to run
    again: what is already there is skipped, so an interrupted copy resumes, and what
    changed in the source since (edited, forgotten) is brought up to date in the target.
    A copy started while another runs into the same database waits for it to end.
    Exits 1, after the report, when a memory was refused or rows were left behind."""
    if destination is None:
        if origin is not None:
            raise click.UsageError("--from needs --to (the database to copy into)")
        _upgrade_schema(state, as_json)
    else:
        _copy(state, destination, origin, as_json)


def _upgrade_schema(state: _State, as_json: bool) -> None:
    from recalld.adapters._cli_support import MigrationProgress
    from recalld.store.factory import open_store

    migrations = MigrationProgress()
    try:
        store = open_store(state.settings, on_migration=migrations)
    finally:
        migrations.stop()
    try:
        result = {
            "database": store.location(),
            "schema_version": store.schema_version,
            "created": store.created,
        }
    finally:
        store.close()
    if as_json:
        _print_json(result)
    else:
        verb = "created" if result["created"] else "up to date:"
        click.echo(f"{verb} {result['database']} (schema {result['schema_version']})")


def _copy(state: _State, destination: str, origin: str | None, as_json: bool) -> None:
    from contextlib import ExitStack

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

    from recalld._location import display_location
    from recalld.errors import ValidationError
    from recalld.moving import CopyReport, copy_store
    from recalld.store.factory import open_store

    source_settings = state.settings if origin is None else _with_db(state.settings, origin, "from")
    target_settings = _with_db(state.settings, destination, "to")
    if display_location(source_settings.db) == display_location(target_settings.db):
        raise ValidationError("to", "the source and the target are the same database")
    if isinstance(source_settings.db, Path) and isinstance(target_settings.db, Path):
        from recalld.store.sqlite_file import database_file

        if database_file(source_settings.db, target_settings.db):
            # Its -wal: the source's next open would take the copy for its log, and drop it.
            raise ValidationError(
                "to",
                "the source and the target are the same database:"
                f" {target_settings.db} is the source or one of its own files (<db>-wal,"
                " -shm, -journal, -reserve, ...); give another file name",
            )
    if not source_settings.uses_postgres and not Path(source_settings.db).exists():
        # Opening it would create an empty database, and "copied 0 rows" would look like
        # a finished migration of a mistyped path.
        raise ValidationError(
            "db" if origin is None else "from",
            f"no database at {Path(source_settings.db)}: check the path (the source of a"
            " copy must exist)",
        )
    with ExitStack() as stack:
        if source_settings.uses_postgres:
            source = open_store(source_settings)
            stack.callback(source.close)
            target = open_store(target_settings)
            stack.callback(target.close)
        else:
            # Opening a store migrates it: a SQLite file an older recalld wrote was upgraded
            # before a target refused (a mistyped password, a newer schema), and the older
            # recalld could no longer open it. Its refusals that need no upgrade come
            # first, then the target, then the upgrade.
            _check_older_file(Path(source_settings.db), source_settings.busy_timeout_ms)
            made = _files_made_by(target_settings)
            target = open_store(target_settings)
            stack.callback(target.close)
            try:
                # The target's refusals of the source's rows, before the upgrade too.
                _refuse_conflicts(Path(source_settings.db), target, source_settings)
                source = open_store(source_settings)
            except BaseException:
                # Its upgrade failed after the target was opened: a target file this run
                # made goes (closed first), so the failed run leaves nothing behind.
                stack.close()
                made()
                raise
            stack.callback(source.close)
        columns = (
            TextColumn("{task.description:<24}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[outcome]}"),
        )
        with Progress(*columns, console=state.console, disable=as_json, transient=False) as bar:
            tasks: dict[str, TaskID] = {}

            def progress(table: str, done: int, total: int) -> None:
                # A table the source holds no row of gets no bar: one shown full at 1/1
                # read as a row copied (the report says what was copied: none).
                total = max(total, done)  # rows written to the source while it ran
                if table not in tasks:
                    if total == 0:
                        return
                    tasks[table] = bar.add_task(table, total=total, outcome="")
                bar.update(tasks[table], completed=done, total=total)

            committed = CopyReport()
            try:
                report = copy_store(
                    source,
                    target,
                    progress=progress,
                    scrub_wait_seconds=state.settings.scrub_wait_seconds,
                    waiting=lambda: _say_waiting(display_location(target_settings.db)),
                    report=committed,
                )
            except BaseException:
                # The memories adopted before the run stopped are this copy's already: the
                # next run does not count them, so this is the one chance to say so.
                _note_adopted(committed.adopted)
                raise
            # A bar counts the rows gone through; what became of them is the report's.
            for table, task in tasks.items():
                bar.update(task, outcome=_outcome(report, table))
    if as_json:
        _print_json(
            {
                "copied": report.copied,
                "updated": report.updated,
                "skipped": report.skipped,
                "removed": report.removed,
                "left": report.left,
                "expired": report.expired,
                "refused": report.refused,
                "scrub": report.scrub,
                "adopted": report.adopted,
            }
        )
    else:
        _print_summary(state, report, display_location(target_settings.db))
    _warn_incomplete(report)


def _check_older_file(path: Path, busy_timeout_ms: int) -> None:
    """Refuse, without writing to it, a source file that opening would refuse: not a
    recalld database, or one a newer recalld migrated (see :func:`_copy`)."""
    import apsw

    from recalld.errors import StorageError
    from recalld.store.migrations import MIGRATIONS
    from recalld.store.schema_guard import newer_schema_error
    from recalld.store.sqlite_file import check_path, schema_versions

    check_path(path, create_directory=False, busy_timeout_ms=busy_timeout_ms)
    try:
        connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error as error:
        raise StorageError(f"cannot open {path}: {error}") from error
    try:
        connection.set_busy_timeout(busy_timeout_ms)
        newest = max(schema_versions(connection), default=0)
    except apsw.Error as error:
        raise StorageError(f"cannot read {path}: {error}") from error
    finally:
        connection.close()
    if newest > len(MIGRATIONS):
        raise newer_schema_error(path, newest, len(MIGRATIONS))


def _refuse_conflicts(path: Path, target: Store, settings: Settings) -> None:
    """Refuse, before opening (so upgrading) the SQLite source ``path``, a copy the target
    would refuse once the source is open: an API token of the same id with another hash,
    a core memory holding other entries than the source's that no copy from it wrote
    (:func:`recalld.moving.overwrite_conflict`). Refused after the upgrade, an older
    recalld could no longer open its own file, and nothing was copied (adversarial pass
    b67). Read from the file as it is: both tables are as migration 4 made them."""
    import json

    import apsw

    from recalld.errors import StorageError
    from recalld.moving import overwrite_conflict
    from recalld.store.tables import COPIED_TABLES

    connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        connection.set_busy_timeout(settings.busy_timeout_ms)
        held = {
            str(row[0])
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        rows: dict[str, list[dict[str, Any]]] = {"tokens": [], "core_memory": []}
        if "tokens" in held:
            rows["tokens"] = [
                {"id": str(token_id), "token_hash": str(token_hash)}
                for token_id, token_hash in connection.execute("SELECT id, token_hash FROM tokens")
            ]
        if "core_memory" in held:
            rows["core_memory"] = [
                {"namespace": str(namespace), "target": str(name), "entries": json.loads(entries)}
                for namespace, name, entries in connection.execute(
                    "SELECT namespace, target, entries FROM core_memory"
                )
            ]
    except apsw.Error as error:
        raise StorageError(f"cannot read {path}: {error}") from error
    finally:
        connection.close()
    ours = target.tables.migrated_core(str(path.resolve()))
    for table in COPIED_TABLES:
        if not rows.get(table.name):
            continue
        present: dict[tuple[Any, ...], dict[str, Any]] = {}
        after: tuple[Any, ...] | None = None
        while page := target.tables.read(table, after, 500):
            for there in page:
                present[tuple(there[name] for name in table.identity)] = there
            after = tuple(page[-1][name] for name in table.order)
        for row in rows[table.name]:
            held_there = present.get(tuple(row[name] for name in table.identity))
            if held_there is None:
                continue  # new in the target
            if table.name == "core_memory" and row["entries"] == held_there["entries"]:
                continue  # as the target holds it: copy_store decides
            identity = (row.get("namespace"), row.get("target"))
            conflict = overwrite_conflict(table.name, row, held_there, identity in ours)
            if conflict is not None:
                raise conflict


def _files_made_by(settings: Settings) -> Callable[[], None]:
    """What removes the SQLite database file ``settings.db`` and its own files beside it
    (``-wal``, ``-reserve``, ...) when no file was there before: called when the copy
    fails before it wrote anything (see :func:`_copy`). A PostgreSQL target, or a file
    that was there, is left as it is."""
    from recalld.store.sqlite_file import database_file

    if settings.uses_postgres or str(settings.db) == ":memory:":
        return lambda: None
    path = Path(settings.db)
    if path.exists() or path.is_symlink():
        return lambda: None
    before = set(path.parent.iterdir()) if path.parent.is_dir() else set()

    def remove() -> None:
        if not path.parent.is_dir() or _written_into(path, settings.busy_timeout_ms):
            return
        for candidate in set(path.parent.iterdir()) - before:
            if candidate.name.startswith(path.name) and database_file(path, candidate):
                candidate.unlink(missing_ok=True)

    return remove


def _written_into(path: Path, busy_timeout_ms: int) -> bool:
    """Whether the database file ``path`` a failed run made holds a row a copy or a client
    wrote: another ``migrate --to`` (or a server) opened it meanwhile, and removing it would
    lose what that one wrote (adversarial pass b67). A file that cannot be read is kept
    too: it is not known to be empty."""
    import apsw

    from recalld.store.tables import COPIED_TABLES

    if not path.exists():
        return False
    try:
        connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE)
    except apsw.Error:
        return True
    try:
        connection.set_busy_timeout(busy_timeout_ms)
        # A write transaction: a writer half-way is waited for, never read past.
        connection.execute("BEGIN IMMEDIATE")
        held = {
            str(row[0])
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        return any(
            connection.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None
            for table in ("memories", *(table.name for table in COPIED_TABLES))
            if table in held
        )
    except apsw.Error:
        return True
    finally:
        connection.close()  # rolls the transaction back: nothing was written


def _note_adopted(adopted: int) -> None:
    """Say on stderr that ``adopted`` memories the target held without its ledger naming
    this source are this copy's now, and what that cannot do (see :class:`CopyReport`)."""
    if not adopted:
        return
    # An older recalld's copy (before migration 25) kept no ledger, nor one made while the
    # source was elsewhere: what the source forgot since cannot be told from the target's
    # own memories (adversarial pass b66).
    click.echo(
        f"note: {_memories(adopted)} the target already held under the source's ids (an"
        " earlier copy by a recalld before schema 25, or from this source at another path"
        " or URL, or an import of its export) are this copy's from now on; a memory the"
        " source forgot before this run cannot be told from the target's own and stays"
        " there: forget it in the target",
        err=True,
    )


def _say_waiting(target: str) -> None:
    """Say on stderr why nothing happens yet: another copy holds the target's lock."""
    click.echo(
        f"waiting: another migrate into {target} is running; this one starts when it ends"
        " (Ctrl-C to stop waiting)",
        err=True,
    )


def _outcome(report: CopyReport, table: str) -> str:
    """What the copy did with ``table``'s rows, in the numbers of ``--json``."""
    parts = [
        f"{label} {count}"
        for label, counts in (
            ("copied", report.copied),
            ("updated", report.updated),
            ("already there", report.skipped),
            ("removed", report.removed),
            ("not copied", report.left),
            ("expired", report.expired),
        )
        if (count := counts.get(table, 0))
    ]
    return ", ".join(parts)


def _memories(count: int, adjective: str = "") -> str:
    """``count`` memories, in words ("1 memory", "2 changed memories")."""
    return f"{count} {adjective}{'memory' if count == 1 else 'memories'}"


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _print_summary(state: _State, report: CopyReport, target: str) -> None:
    copied = sum(report.copied.values())
    memories = report.copied.get("memories", 0)
    summary = f"copied {copied} rows ({_memories(memories)}) into {target}"
    updated = report.updated.get("memories", 0)
    if updated:
        summary += f"; brought {_memories(updated, 'changed ')} up to date"
    removed = report.removed.get("memories", 0)
    if removed:
        summary += f"; removed {_memories(removed)} the source no longer holds"
    graph = [
        _plural(count, one, many)
        for count, one, many in (
            (
                report.removed.get("graph_entities", 0),
                "graph entity (with its relations)",
                "graph entities (with their relations)",
            ),
            (report.removed.get("graph_relations", 0), "graph relation", "graph relations"),
        )
        if count
    ]
    if graph:
        summary += f"; removed {' and '.join(graph)} the source deleted"
    summary += f"; {sum(report.skipped.values())} were already there"
    expired = report.expired.get("memories", 0)
    if expired:
        summary += f"; left out {_memories(expired, 'expired ')}"
    state.console.print(summary, highlight=False, markup=False)


def _warn_incomplete(report: CopyReport) -> None:
    """Say on stderr what was not copied, and exit 1 (after the report)."""
    _note_adopted(report.adopted)
    if report.scrub == "pending":
        click.echo(
            "warning: what the copy removed from the target is not scrubbed yet (a reader"
            " holds an older snapshot); the next recalld process on it finishes the scrub",
            err=True,
        )
    if report.complete:
        return
    for refused in report.refused:
        click.echo(f"refused: {refused}", err=True)
    left = sum(report.left.values())
    if left:
        tables = ", ".join(f"{name} {count}" for name, count in report.left.items() if count)
        click.echo(
            f"error: {left} rows were not copied ({tables}): their memory is not in the"
            " target (refused above, or written to the source while the copy ran)",
            err=True,
        )
    click.echo(
        "error: the copy is incomplete: fix or forget what was refused in the source,"
        " then run migrate again",
        err=True,
    )
    raise SystemExit(1)


def _with_db(settings: Settings, location: str, field: str) -> Settings:
    from recalld.config import Settings
    from recalld.errors import ValidationError

    # Checked as --db is (model_copy checks nothing): a conninfo string (adversarial pass
    # b64: taken for a file name, the copy went into a new SQLite file named after it,
    # password and all), a NUL, a name that is not UTF-8 (the copy failed with a
    # UnicodeEncodeError traceback and left a file of that name: integration read, stop 66).
    try:
        database = Settings._database_location(location)
    except ValueError as error:
        raise ValidationError(field, str(error)) from None
    return settings.model_copy(update={"db": database})
