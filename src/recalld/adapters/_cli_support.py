"""What every ``recalld`` command shares: the state, JSON output, option parsing.

Nothing heavy is imported here at module level (no service, no rich): a
command pays only for what it uses, so ``recalld --version``, ``stats`` and
``get`` start fast (``bench/cli_bench.py`` measures them).
"""

from __future__ import annotations

import functools
import json
import re
import sys
import tempfile
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, cast

import click

from recalld import _validate as check
from recalld._text import shown
from recalld.errors import (
    AuthenticationError,
    ConflictError,
    DatabaseBusyError,
    DatabaseReadOnlyError,
    DatabaseUnavailableError,
    DiskFullError,
    EmbeddingError,
    NotFoundError,
    PermissionDeniedError,
    PreconditionFailedError,
    RecalldError,
    StorageError,
    ValidationError,
)
from recalld.writing import Clearable

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from recalld.config import Settings
    from recalld.model import Filters
    from recalld.service import MemoryService

CommandT = TypeVar("CommandT", bound=Callable[..., Any])
P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class _State:
    """What the group hands to its commands: settings, and the service once opened."""

    settings: Settings
    service: MemoryService | None = None
    _console: Console | None = field(default=None, repr=False)
    _scratch: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)

    @property
    def console(self) -> Console:
        """Where human output goes (stdout); rich is imported on first use."""
        if self._console is None:
            from recalld.adapters.cli_console import ShownConsole

            self._console = ShownConsole(file=cast("IO[str]", InPieces(sys.stdout)))
        return self._console

    def no_database_yet(self) -> bool:
        """Whether ``--db`` names a SQLite file that does not exist (and the service is not
        open): a command that would only read, delete or change a named thing finds
        nothing there, and must not create the database to say so (pass e66)."""
        if self.service is not None or self.settings.uses_postgres:
            return False
        return not Path(self.settings.db).exists()

    def memory(self, *, existing: bool = False, reports_settings: bool = False) -> MemoryService:
        """The service, opened on first use; says on stderr when the database is new.

        ``existing``: the command only reads or changes what is stored (``get``,
        ``update``, ``list``, ``core remove``, ``graph show`` ...). On a ``--db`` that does
        not exist it answers as an empty database does, from an empty one in a temporary
        directory, and says on stderr that there is no database there: a mistyped
        ``--db`` created a new, empty database to say "not found" (pass a67).
        ``reports_settings``: the command reports the embedder the settings name
        (``status``), so the empty one keeps it (no model is loaded to report it)."""
        if self.service is None:
            from recalld.service import MemoryService

            settings = self.settings
            # A directory that does not exist (or a "~" no shell expanded) is still the
            # error every command gives: only a missing file in it is answered as empty.
            if existing and self.no_database_yet() and Path(settings.db).parent.is_dir():
                self._scratch = tempfile.TemporaryDirectory(prefix="recalld-none-")
                location = visible(str(self.settings.db))
                click.echo(f"no database at {location}: nothing was created", err=True)
                scratch = Path(self._scratch.name) / "empty.db"
                # No embedder: an empty database has no vector to compare a query with,
                # and `search` loaded (or first derived) the model, seconds, to answer
                # "nothing" (review of pass a67).
                update: dict[str, Any] = {"db": scratch}
                if not reports_settings:
                    update["embedder"] = "none"
                settings = settings.model_copy(update=update)
            migrations = MigrationProgress()
            try:
                self.service = MemoryService.open(settings, on_migration=migrations)
            finally:
                migrations.stop()
            if self._scratch is not None:
                return self.service
            if self.service.store.created:
                location = visible(self.service.store.location())
                click.echo(f"created a new database at {location}", err=True)
        return self.service

    def close(self) -> None:
        """Close the service if it was opened."""
        try:
            if self.service is not None:
                self.service.close()
                self.service = None
        finally:
            # Removed even when the close fails (review of pass a67).
            if self._scratch is not None:
                self._scratch.cleanup()
                self._scratch = None


def load_settings(overrides: dict[str, Any], sources: Mapping[str, str]) -> Settings:
    """The settings: ``overrides`` (the group's options) over the ``RECALLD_*`` environment.

    A value that does not validate is one line naming where it was given: the option
    or variable in ``sources`` (field -> name), else the field's ``RECALLD_*`` variable
    (a traceback naming the field would not tell which variable to fix).
    """
    from recalld.config import InvalidSettingsError, Settings, spelled_variables
    from recalld.config_errors import SECRET_FIELDS

    # Named as spelled in the environment (recalld_namespace is read as RECALLD_NAMESPACE).
    spelled = spelled_variables(given=overrides)

    def origin(field: str) -> str:
        return sources.get(field, spelled.get(field, f"RECALLD_{field.upper()}"))

    from recalld.config import unknown_variables

    for line in unknown_variables():
        click.echo(f"warning: {line}", err=True)  # stderr: stdio MCP keeps stdout for protocol

    try:
        return Settings(**overrides)
    except InvalidSettingsError as error:
        if not error.problems:
            # A variable pydantic-settings could not read (a list is read as JSON).
            raise ValidationError(origin(error.field), error.message) from None
        problems = []
        for location, message, given in error.problems:
            name = origin(location[0]) + "".join(f"[{part}]" for part in location[1:])
            # A URL or key may carry a secret: not echoed (the message says what is wrong).
            echoed = "" if location[0] in SECRET_FIELDS else f" (got {shown(given)})"
            problems.append(f"{name}: {message}{echoed}")
        first, _, message = problems[0].partition(": ")
        raise ValidationError(first, "; ".join([message, *problems[1:]])) from None


# The exit status of a command ended by SIGTERM, as a shell reports it (128 + 15).
TERMINATED = 143


@contextmanager
def sigterm_ends_cleanly() -> Iterator[None]:
    """While a command writes a file under a temporary name (``export FILE``, ``backup``),
    SIGTERM (a service stop, ``timeout``, ``kill``) ends it as an exception does, exit 143:
    its ``finally`` removes the partial file. Killed outright, it left a hidden
    ``.<name>.<pid>.partial`` holding the memories exported so far, which no ``forget``
    reaches. Only the main thread can take a signal; elsewhere nothing changes."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGTERM) is None:
        # A handler installed outside Python (a program embedding this one) cannot be put
        # back (`signal.signal(SIGTERM, None)` is a TypeError after the write): keep it.
        yield
        return

    def stop(number: int, frame: object) -> None:
        raise SystemExit(TERMINATED)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def read_text(file: IO[bytes]) -> str:
    """All of ``file`` (opened in binary, as ``click.File("rb")`` gives it) as UTF-8 text.

    Bytes that are not UTF-8 are a :class:`ValidationError` naming the file (``stdin``
    for ``-``), the first bad byte and where it is: a Latin-1 or UTF-16 export is
    refused in one line, not with a traceback, and never read with replacement
    characters in place of what it says.
    """
    from recalld import _validate as check

    name = str(getattr(file, "name", "FILE"))
    return check.utf8_text(file.read(), "stdin" if name == "<stdin>" else name, lines=True)


def error_console() -> Console:
    """A rich console on stderr (progress bars, warnings) that shows stored text, never
    obeys it (see :func:`visible`)."""
    from recalld.adapters.cli_console import ShownConsole

    return ShownConsole(stderr=True)


# What a terminal would obey rather than show: C0 controls but line feed and tab, DEL, C1
# controls, and the bidirectional overrides and isolates (which reorder what follows them).
_OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` as human output prints it: each character a terminal would act on shown as
    its escape (``\\x1b``, ``\\r``, ``\\u202e``), a CRLF line end as a line end.

    A memory holds whatever text it was given: ``ESC ]0;…`` in one retitled the terminal
    that listed it, ``ESC [2J`` cleared the screen, ``ESC [31m`` coloured what followed.
    ``--json`` keeps the text exact (JSON escapes them)."""
    text = text.replace("\r\n", "\n")
    if _OBEYED.search(text) is None:
        return text
    return _OBEYED.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"), text)


def progress_bar(description: str, *, unit: str = "") -> Progress:
    """A rich progress bar on stderr: shown only on a terminal, gone when done."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    console = error_console()
    columns: list[Any] = [TextColumn(description), BarColumn()]
    columns.append(
        TextColumn("{task.percentage:>3.0f}%") if unit == "bytes" else MofNCompleteColumn()
    )
    columns.append(TimeRemainingColumn())
    return Progress(*columns, console=console, transient=True, disable=not console.is_terminal)


class MigrationProgress:
    """``on_migration(done, total)`` for the store: a bar while schema migrations run."""

    def __init__(self) -> None:
        self._progress: Progress | None = None
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if total <= 0:
            return
        if self._progress is None:
            self._progress = progress_bar("migrating the database")
            self._progress.start()
            self._task = self._progress.add_task("migrate", total=total)
        self._progress.update(self._task, completed=done)

    def stop(self) -> None:
        """Take the bar down (the migrations are done, or failed)."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


# Characters written at once (at most 8 KiB in UTF-8, what a text stream buffers): a pipe
# holds 64 KiB, and one larger write that its reader stops taking (`| head -c 100`) comes
# back short without an error, so the command ended 0 with its output cut. A piece at a
# time, flushed, a reader gone is a BrokenPipeError, which click ends quietly with exit 1.
OUTPUT_PIECE_CHARS = 2048


class InPieces:
    """A text stream (stdout) that writes what it is given a flushed piece at a time (see
    :data:`OUTPUT_PIECE_CHARS`); anything else is the stream's own."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` in pieces, each flushed: a short write is an error, not a loss."""
        for start in range(0, len(text), OUTPUT_PIECE_CHARS):
            self._stream.write(text[start : start + OUTPUT_PIECE_CHARS])
            self._stream.flush()
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def writes_utf8(stream: Any) -> bool:
    """Whether ``stream`` encodes text as UTF-8 (not a Latin-1 locale's stdout, nor one
    set by ``PYTHONIOENCODING=ascii``); a stream that names no encoding is taken as UTF-8."""
    import codecs

    try:
        return codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name == "utf-8"
    except LookupError:
        return False


def ascii_json(text: str) -> str:
    """JSON ``text`` with each non-ASCII character as its ``\\uXXXX`` escape (a surrogate pair
    beyond the BMP): the same document, readable whatever the output's encoding. Outside
    its strings JSON is ASCII, so only string contents change."""
    return re.sub(r"[^\x00-\x7f]", lambda found: json.dumps(found.group())[1:-1], text)


def _print_json(value: Any) -> None:
    """Print ``value`` as a command's ``--json`` document: compact, one line, and UTF-8 as
    is (``"München"``, not ``"M\\u00fcnchen"``), whatever the command, so one reading of
    it fits them all. Every ``--json`` output goes through here. On a stdout that is not
    UTF-8 (a Latin-1 locale) non-ASCII characters are escaped instead: the document stays
    whole and valid where they could not be written (a traceback, nothing on stdout)."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        text = value.model_dump_json()  # compact, non-ASCII unescaped
    else:
        if isinstance(value, list):
            value = [
                item.model_dump(mode="json") if isinstance(item, BaseModel) else item
                for item in value
            ]
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if not writes_utf8(sys.stdout):
        text = ascii_json(text)
    for start in range(0, len(text), OUTPUT_PIECE_CHARS):
        click.echo(text[start : start + OUTPUT_PIECE_CHARS], nl=False)
    click.echo()


def _importance_to_salience(importance: int | None, salience: float | None) -> float | None:
    if importance is not None and salience is not None:
        raise click.UsageError("give --importance or --salience, not both")
    if importance is not None:
        return (importance - 1) / 4
    return salience


PLACE_NAME_HELP = "the place's name, e.g. 'Blue Bottle Cafe' (searched; needs --place)"


def _parse_place(value: str | None, name: str | None = None) -> dict[str, Any] | None:
    if value is None:
        if name is not None:
            raise click.BadParameter("--place-name needs --place", param_hint="--place-name")
        return None
    place: dict[str, Any]
    if "," in value:
        lat_text, _, lon_text = value.partition(",")
        try:
            place = {"lat": float(lat_text), "lon": float(lon_text)}
        except ValueError:
            raise click.BadParameter(
                f"expected LAT,LON or a geohash, got {value!r}", param_hint="--place"
            ) from None
    else:
        place = {"geohash": value}
    if name is not None:
        place["name"] = name
    return place


# What ``update --clear`` may name: as the native MCP ``update`` tool's ``clear``.
CLEARABLE_FIELDS: tuple[str, ...] = typing.get_args(Clearable)
# The option that sets each clearable field, when its name is not the field's.
CLEARED_BY_OPTION = {"tags": "--tag", "ttl_seconds": "--ttl"}


def _parse_meta(values: tuple[str, ...]) -> dict[str, Any] | None:
    """``--meta`` (repeatable): the JSON objects given, merged. A key given twice, in one
    object or in two, is refused naming it: JSON keeps the last, and a repeated option
    kept only the last object, both without a word."""
    from recalld import _validate as check

    if not values:
        return None
    merged: dict[str, Any] = {}
    for value in values:
        try:
            parsed = check.load_json(value, "--meta")
        except ValidationError as error:
            hint = " (give a JSON object, such as '{\"key\": 1}')" if "=" in value else ""
            raise click.BadParameter(error.message + hint, param_hint="--meta") from None
        if not isinstance(parsed, dict):
            raise click.BadParameter("must be a JSON object", param_hint="--meta")
        # Parsed again to see the keys JSON let repeat (the depth is checked above).
        json.loads(value, object_pairs_hook=_unique_keys)
        for key, item in parsed.items():
            if key in merged:
                raise click.BadParameter(
                    f"key {shown(key)} is given twice: give each key once", param_hint="--meta"
                )
            merged[key] = item
    return merged


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict; a click error naming a key it repeats."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise click.BadParameter(
                f"key {shown(key)} is given twice: give each key once", param_hint="--meta"
            )
        result[key] = value
    return result


def refuse_empty_path(
    context: click.Context, parameter: click.Parameter, value: str | None
) -> str | None:
    """A click callback: an empty path (or one of spaces) is a usage error naming the
    argument or option. ``recalld backup ""`` (``"$BACKUP_DIR"`` with the variable unset)
    wrote the copy into the current directory and exited 0, as if ``.`` had been given;
    ``export ""`` said "could not write the export to : Is a directory"."""
    if value is not None and not value.strip():
        raise click.BadParameter("is empty: give a path", context, parameter)
    return value


# Under this, a text that decodes as base64 is no media anyone sends (the smallest PNG is
# 92 characters of base64) but may be a mistyped path ("/tmp/fotojpg" decodes).
MEDIA_BASE64_MIN_CHARS = 64


def media_file(context: click.Context, parameter: click.Parameter, value: str | None) -> str | None:
    """A click callback for ``--image`` and ``--audio``: a path naming no file is a usage
    error naming the option and the path ("File '/tmp/foto.jpg' does not exist", "is a
    directory"), not an image refused as undecodable base64. A ``~`` is the home directory
    (no shell expands one after ``--image=``), and base64 data, which the library takes,
    passes as it did."""
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter("is empty: give a file", context, parameter)
    path = Path(value.strip()).expanduser()
    try:
        if path.is_file():
            return value
        if path.is_dir():
            raise click.BadParameter(f"File '{value}' is a directory.", context, parameter)
    except OSError:
        pass  # a name too long for a path: base64 data, or refused below
    text = value.strip()
    if len(text) >= MEDIA_BASE64_MIN_CHARS and re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", text):
        return value
    raise click.BadParameter(f"File '{value}' does not exist.", context, parameter)


def limit_option(default: int, help: str = "at most this many") -> Callable[[CommandT], CommandT]:
    """``--limit``, None when not given: the engine then uses ``default`` held to
    ``RECALLD_MAX_LIMIT`` (a lowered cap lowers the default; a --limit above it is refused)."""
    return click.option(
        "--limit",
        type=int,
        default=None,
        help=f"{help} [default: {default}, or RECALLD_MAX_LIMIT when lower]",
    )


def check_limit(state: _State, limit: int | None) -> None:
    """Refuse a ``--limit`` out of range before the database is opened: `list --limit 0`
    on a mistyped --db created a new, empty database, then refused the limit (adversarial
    pass e66)."""
    if limit is not None:
        check.limit(limit, state.settings)


def _filters_options(command: CommandT) -> CommandT:
    options = [
        click.option("--kind", help="only this kind"),
        click.option("--category", help="only this category"),
        click.option("--speaker", "speaker_filter", help="only what this speaker said"),
        click.option(
            "--has-key/--no-key",
            "has_key",
            default=None,
            help="only key/value records written with a key, or only memories without one",
        ),
        click.option("--tag", "tags_any", multiple=True, help="has any of these tags (repeat)"),
        click.option("--all-tags", "tags_all", multiple=True, help="has every one of these tags"),
        click.option("--since", help="at >= this ISO 8601 time"),
        click.option("--until", help="at < this ISO 8601 time"),
        click.option("--created-since", help="created >= this ISO 8601 time"),
        click.option("--created-until", help="created < this ISO 8601 time"),
    ]
    for option in reversed(options):
        command = option(command)
    return command


# The filter fields whose options are spelled otherwise, by the option that fills them.
FILTER_OPTIONS = {"tags_any": "--tag", "tags_all": "--all-tags"}


@contextmanager
def filter_options() -> Iterator[None]:
    """Name a refused tag filter by the option given (``--tag``, ``--all-tags``), not by
    the library's field (``tags_any``, which no option of the command is called)."""
    from recalld import _validate as check

    try:
        yield
    except ValidationError as error:
        raise check.renamed(error, FILTER_OPTIONS) from None


def _filters(options: dict[str, Any], include_expired: bool = False) -> Filters:
    from recalld.model import Filters

    return Filters(
        kind=options.pop("kind"),
        category=options.pop("category"),
        speaker=options.pop("speaker_filter"),
        has_key=options.pop("has_key"),
        tags_any=list(options.pop("tags_any")),
        tags_all=list(options.pop("tags_all")),
        since=options.pop("since"),
        until=options.pop("until"),
        created_since=options.pop("created_since"),
        created_until=options.pop("created_until"),
        include_expired=include_expired,
    )


# The library fields that options spelled otherwise fill, by the option (its parameter
# name): `--ttl -5` was "ttl_seconds: must be ...", `--created-since x` "created_since: ...",
# fields no option of the command is called. A field spelled as its option (`kind`,
# `limit`, `at`) keeps its name; a server's host or port keeps the message that names both
# the option and its variable.
OPTION_FIELDS: dict[str, tuple[str, ...]] = {
    "ttl_seconds": ("ttl",),
    "min_score": ("min_score",),
    "created_since": ("created_since",),
    "created_until": ("created_until",),
    "tags_any": ("tags_any",),
    "tags_all": ("tags_all",),
    "tags": ("tags",),
    "place.name": ("place_name",),
    "place.lat": ("place",),
    "place.lon": ("place",),
    "place.geohash": ("place",),
    "radius_m": ("radius",),
    "window_minutes": ("window_minutes",),
    "signals": ("signals",),
    "min_interval_seconds": ("min_interval",),
    "biometrics": ("biometrics",),
}


def given_options(context: click.Context) -> dict[str, str]:
    """The :data:`OPTION_FIELDS` of ``context``'s command given on its command line, each
    to the option's flag (``{"ttl_seconds": "--ttl"}``)."""
    from click.core import ParameterSource

    given = {
        parameter.name: parameter
        for parameter in context.command.params
        if isinstance(parameter, click.Option)
        and parameter.name is not None
        and context.get_parameter_source(parameter.name) is ParameterSource.COMMANDLINE
    }
    names: dict[str, str] = {}
    for field_name, parameters in OPTION_FIELDS.items():
        found = next((given[name] for name in parameters if name in given), None)
        if found is not None:
            names[field_name] = next(
                (flag for flag in found.opts if flag.startswith("--")), found.opts[0]
            )
    return names


# The error types of REST's `{"error": {"type", ...}}` body, by class (the most specific
# first), so that a script reads a CLI error given --json as it reads the server's.
ERROR_TYPES: tuple[tuple[type[RecalldError], str], ...] = (
    (ValidationError, "validation_error"),
    (NotFoundError, "not_found"),
    (PreconditionFailedError, "precondition_failed"),
    (ConflictError, "conflict"),
    (AuthenticationError, "unauthorized"),
    (PermissionDeniedError, "forbidden"),
    (DatabaseUnavailableError, "database_unavailable"),
    (DatabaseBusyError, "database_busy"),
    (DatabaseReadOnlyError, "database_read_only"),
    (DiskFullError, "disk_full"),
    (StorageError, "storage_error"),
    (EmbeddingError, "embedding_error"),
)


class ErrorAsJson(click.ClickException):
    """A recalld error of a command given ``--json``: shown on stderr as one JSON line,
    ``{"error": {"type", "field", "message"}}`` as REST answers it, exit 1. A script that
    asked for JSON read the document on stdout and got a line of prose on stderr."""

    exit_code = 1

    def __init__(self, error: RecalldError) -> None:
        super().__init__(str(error))
        self.error = error

    def document(self) -> dict[str, Any]:
        """The error as REST's body holds it: its type, and its message without the field
        in front (a conflict's too), a full core target's entries and usage."""
        from recalld.core_memory import CoreMemoryFullError

        error = self.error
        if isinstance(error, CoreMemoryFullError):
            return {
                "error": {
                    "type": "core_memory_full",
                    "field": error.field,
                    "message": error.message,
                    "entries": list(error.state.entries),
                    "usage": error.state.usage,
                }
            }
        kind = next((name for cls, name in ERROR_TYPES if isinstance(error, cls)), "bad_request")
        field = getattr(error, "field", None)
        message = (
            error.message if isinstance(error, ValidationError | ConflictError) else str(error)
        )
        return {"error": {"type": kind, "field": field, "message": message}}

    def show(self, file: IO[Any] | None = None) -> None:
        """Print the document on stderr; ASCII, so that no character in it (ESC, a
        bidirectional override in a stored name) reaches the terminal raw."""
        click.echo(json.dumps(self.document(), separators=(",", ":")), file=file, err=True)


class JsonAwareGroup(click.Group):
    """The top group: keeps its command line, so that an error found before the command
    runs (the settings) is told as JSON when the command was given ``--json``
    (:func:`asks_for_json`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """click's, noting ``args`` first."""
        ctx.meta[COMMAND_LINE] = list(args)
        return super().parse_args(ctx, args)


COMMAND_LINE = "recalld.command_line"


def asks_for_json(context: click.Context) -> bool:
    """Whether the command line of the top group of ``context`` (:class:`JsonAwareGroup`)
    runs a command given ``--json``: parsed as click will parse it, so a ``--json`` that is
    another option's value (``get --key --json``) is none. An unparsable line is none."""
    arguments = context.meta.get(COMMAND_LINE)
    if arguments is None:
        return False
    command: click.Command = context.find_root().command
    parent: click.Context | None = None
    name = context.find_root().info_name
    try:
        while True:
            parsed = command.context_class(
                command, info_name=name, parent=parent, resilient_parsing=True
            )
            # Command's own parsing, without a group's split of what follows its options.
            rest = click.Command.parse_args(command, parsed, list(arguments))
            if not isinstance(command, click.Group):
                return parsed.params.get("as_json") is True
            found = command.get_command(parsed, rest[0]) if rest else None
            if found is None:
                return False
            command, parent, name, arguments = found, parsed, rest[0], rest[1:]
    except click.ClickException:
        return False


def pass_state(function: Callable[Concatenate[_State, P], R]) -> Callable[P, R]:
    """``click.make_pass_decorator(_State)``, and a value the library refuses is named by
    the option that gave it (``--ttl``, ``--created-since``, ``--place-name``), not by the
    library's field, which no option of the command is called. Given ``--json``, a recalld
    error is printed as JSON (:class:`ErrorAsJson`)."""
    from recalld import _validate as check

    @functools.wraps(function)
    def command(*args: P.args, **kwargs: P.kwargs) -> R:
        context = click.get_current_context()
        state = context.find_object(_State)
        if state is None:  # pragma: no cover - the group always sets it
            raise RuntimeError("a recalld command ran without the group's state")
        try:
            return context.invoke(function, state, *args, **kwargs)
        except RecalldError as error:
            shown_error = (
                check.renamed(error, given_options(context))
                if isinstance(error, ValidationError)
                else error
            )
            if kwargs.get("as_json") is True:
                raise ErrorAsJson(shown_error) from None
            if shown_error is error:
                raise
            raise shown_error from None

    return command
