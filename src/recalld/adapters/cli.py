"""The ``recalld`` command line (click). Also reachable as ``python -m recalld``.

Every command takes ``--db`` (env ``RECALLD_DB``) and ``--namespace`` (env
``RECALLD_NAMESPACE``) from the group, prints readable output by default (rich
tables that wrap in 80 columns) and one JSON document with ``--json``. Errors
print one line to stderr and exit 1. Modules are imported by the commands that
need them, so ``--version``, ``stats`` and ``get`` start fast.
"""

from __future__ import annotations

import io
import os
import shlex
import sys
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from recalld import _validate as check
from recalld._version import __version__
from recalld.adapters._cli_support import (
    CLEARABLE_FIELDS,
    CLEARED_BY_OPTION,
    PLACE_NAME_HELP,
    TERMINATED,
    ErrorAsJson,
    JsonAwareGroup,
    _filters,
    _filters_options,
    _importance_to_salience,
    _parse_meta,
    _parse_place,
    _print_json,
    _State,
    asks_for_json,
    check_limit,
    filter_options,
    limit_option,
    load_settings,
    pass_state,
    read_text,
    visible,
    writes_utf8,
)
from recalld.adapters.cli_context import context_commands
from recalld.adapters.cli_graph import graph_group
from recalld.adapters.cli_intentions import intention_commands
from recalld.adapters.cli_migrate import migrate_command
from recalld.adapters.cli_servers import server_commands
from recalld.adapters.cli_transfer import transfer_commands
from recalld.errors import RecalldError, ValidationError
from recalld.model import Forgotten

if TYPE_CHECKING:
    from recalld.config import Settings

__all__ = ["cli", "main"]


@click.group(cls=JsonAwareGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    envvar="RECALLD_DB",
    help="SQLite database file or postgresql:// URL"
    " [env RECALLD_DB; default: recalld.db in the user data dir]",
)
@click.option(
    "--namespace",
    envvar="RECALLD_NAMESPACE",
    help="namespace to read and write [env RECALLD_NAMESPACE; default: default]",
)
@click.version_option(__version__, prog_name="recalld")
@click.pass_context
def cli(context: click.Context, db: str | None, namespace: str | None) -> None:
    """recalld: long-term memory for AI agents, in one SQLite file (or PostgreSQL).

    Start with `recalld serve` (REST API, web UI, MCP at /mcp) or `recalld mcp`
    (an MCP server on stdio, for Claude Desktop, Claude Code, Cursor ...).
    """
    if isinstance(context.obj, _State):  # a line typed in `recalld shell`
        # The shell keeps its open database and namespace: the group's options on a line
        # would be ignored (the line run elsewhere than it says), so the line is refused.
        typed = [
            parameter.opts[0]
            for parameter in context.command.params
            if parameter.name is not None
            and context.get_parameter_source(parameter.name) is ParameterSource.COMMANDLINE
        ]
        if typed:
            raise ValidationError(
                " and ".join(typed),
                f"{'goes' if len(typed) == 1 else 'go'} on the `recalld shell` command line"
                f" (recalld {typed[0]} … shell): this shell keeps its own database and"
                " namespace, so nothing was run",
            )
        return
    try:
        state = _State(settings=_settings(context, db, namespace))
    except RecalldError as error:
        if asks_for_json(context):
            # As every error of a command given --json (adversarial pass a65): a script
            # reading that line got "error: RECALLD_...: ..." (review of pass a65).
            raise ErrorAsJson(error) from None
        raise
    context.obj = state
    context.call_on_close(state.close)


def _settings(context: click.Context, db: str | None, namespace: str | None) -> Settings:
    """The settings of the group's ``--db`` and ``--namespace`` over the environment."""
    overrides: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name, value in (("db", db), ("namespace", namespace)):
        if value is not None:
            overrides[name] = value
            given = context.get_parameter_source(name) is ParameterSource.COMMANDLINE
            sources[name] = f"--{name}" if given else f"RECALLD_{name.upper()}"
    # Else "" is the path ".", a directory. click passes no empty RECALLD_DB on (db is
    # None), but the settings would still read it, in any case (recalld_db too).
    empty = "--db" if db is not None and not db.strip() else None
    from recalld.config import spelled_variables

    # click reads RECALLD_DB and RECALLD_NAMESPACE itself, as options: only an option
    # typed leaves the environment's spellings of its setting unread.
    on_command_line = [name for name, source in sources.items() if source.startswith("--")]
    variable = spelled_variables(given=dict.fromkeys(on_command_line)).get("db")
    if variable is not None and not os.environ[variable].strip():
        empty = variable
    if empty is not None:
        raise ValidationError(
            sources.get("db", empty), "is empty; give a database file or a postgresql:// URL"
        )
    return load_settings(overrides, sources)


@cli.command()
@click.argument("text")
@click.option("--key", help="upsert by this key (1-200 chars) within the namespace")
@click.option("--title", help="a short label")
@click.option("--tag", "tags", multiple=True, help="a tag (repeat for several)")
@click.option("--category", help="e.g. spatial, preference, hazard, fact, goal, person")
@click.option("--importance", type=click.IntRange(1, 5), help="1-5 (maps to salience)")
@click.option("--salience", type=click.FloatRange(0, 1), help="0-1, how much it matters")
@click.option("--kind", default="note", show_default=True, help="note, reference, kv, ...")
@click.option("--source", help="URI of the evidence")
@click.option("--speaker", help="who said or wrote it (searched as its own field)")
@click.option("--at", help="when it happened (ISO 8601; the offset is kept)")
@click.option("--place", help="LAT,LON or a geohash")
@click.option("--place-name", help=PLACE_NAME_HELP)
@click.option("--ttl", type=float, help="expire after this many seconds")
@click.option(
    "--meta", "meta", multiple=True, help="a JSON object of extra fields (repeat to merge)"
)
@click.option("--id", "memory_id", help="use this id instead of a generated one")
@click.option("--json", "as_json", is_flag=True, help="print the receipt as JSON")
@pass_state
def remember(
    state: _State,
    text: str,
    key: str | None,
    title: str | None,
    tags: tuple[str, ...],
    category: str | None,
    importance: int | None,
    salience: float | None,
    kind: str,
    source: str | None,
    speaker: str | None,
    at: str | None,
    place: str | None,
    place_name: str | None,
    ttl: float | None,
    meta: tuple[str, ...],
    memory_id: str | None,
    as_json: bool,
) -> None:
    """Store TEXT as a memory (- reads it from stdin)."""
    if text == "-":
        # As `$(...)` does, the trailing line breaks are dropped (`echo` adds one).
        text = read_text(click.open_file("-", "rb")).rstrip("\r\n")
    receipt = state.memory().remember(
        text,
        id=memory_id,
        key=key,
        title=title,
        kind=kind,
        category=category,
        tags=tags,
        salience=_importance_to_salience(importance, salience),
        source=source,
        speaker=speaker,
        at=at,
        ttl_seconds=ttl,
        place=_parse_place(place, place_name),
        meta=_parse_meta(meta),
    )
    if as_json:
        _print_json(receipt)
    else:
        from recalld.adapters.cli_output import describe_receipt

        click.echo(describe_receipt(receipt))


MIN_SCORE_HELP = "only hits scoring at least this, 0-1 [default: RECALLD_MIN_SCORE]"


def _query_command(name: str, touches: bool) -> click.Command:
    @click.argument("query")
    @limit_option(10)
    @click.option("--min-score", type=float, help=MIN_SCORE_HELP)
    @_filters_options
    @click.option("--json", "as_json", is_flag=True, help="print the hits as a JSON list")
    @pass_state
    def command(
        state: _State,
        /,
        query: str,
        limit: int | None,
        min_score: float | None,
        as_json: bool,
        **options: Any,
    ) -> None:
        check_limit(state, limit)
        memory = state.memory(existing=True)
        action = memory.recall if touches else memory.search
        with filter_options():
            hits = action(query, filters=_filters(options), limit=limit, min_score=min_score)
        if as_json:
            _print_json(hits)
        else:
            from recalld.adapters.cli_output import show_hits

            show_hits(state.console, hits)

    command.__doc__ = (
        "Find memories relevant to QUERY (counts an access of each result)."
        if touches
        else "Find memories relevant to QUERY without changing anything."
    )
    return cli.command(name)(command)


_query_command("recall", touches=True)
_query_command("search", touches=False)


@cli.command()
@click.argument("query")
@click.argument("memory_id")
@limit_option(10, "the recall's limit")
@click.option("--min-score", type=float, help=MIN_SCORE_HELP)
@_filters_options
@click.option("--json", "as_json", is_flag=True, help="print the explanation as JSON")
@pass_state
def explain(
    state: _State,
    /,
    query: str,
    memory_id: str,
    limit: int | None,
    min_score: float | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Why recall of QUERY does or does not return memory MEMORY_ID (changes nothing)."""
    check_limit(state, limit)
    with filter_options():
        result = state.memory(existing=True).explain(
            query, memory_id, filters=_filters(options), limit=limit, min_score=min_score
        )
    if as_json:
        _print_json(result)
        return
    console = state.console
    console.print(f"{result.stage}: {result.reason}", highlight=False)
    if result.rank is None:  # an expired memory is not scored
        place = "not ranked"
    elif result.stage in ("excluded", "not_in_pool"):
        # Not a candidate: its rank is where it would go among them ("1 among the 0
        # candidates" read as a contradiction when recall found nothing else).
        found = f"{result.candidates} found" if result.candidates else "none found"
        place = f"would rank {result.rank} were it a candidate ({found})"
    else:
        place = f"rank {result.rank} of {result.candidates} candidates"
    console.print(
        f"score {result.score:.4f} (min_score {result.min_score:g}), {place}, found by"
        f" {', '.join(result.found_by) or 'none'}, index state {result.index_state},"
        f" model {result.model}",
        highlight=False,
    )
    channels = ", ".join(f"{name} {value:.3f}" for name, value in result.channels.items())
    console.print(f"channels: {channels}", highlight=False)
    if result.turn_of is not None:
        console.print(f"goes on with the turn of {result.turn_of}", highlight=False)
    for name, value in result.features.items():
        share = result.contributions.get(name)
        suffix = "" if share is None else f"  ({share:+.3f} log-odds)"
        console.print(f"  {name:<26} {value:10.4f}{suffix}", highlight=False)


@cli.command()
@click.argument("memory_id", required=False)
@click.option("--key", help="look up by key instead of id")
@click.option("--seq", type=int, help="look up by seq instead of id")
@click.option("--json", "as_json", is_flag=True, help="print the memory as JSON")
@pass_state
def get(
    state: _State, memory_id: str | None, key: str | None, seq: int | None, as_json: bool
) -> None:
    """Show one memory by ID, --key or --seq."""
    if sum(given is not None for given in (memory_id, key, seq)) != 1:
        # A usage error, refused before the database is opened: `recalld get` alone
        # created a new database, then named the library's fields (id, key, seq).
        raise click.UsageError("give exactly one of ID, --key or --seq")
    if seq is not None:
        check.seq(seq)  # refused before the database is opened (adversarial pass e66)
    _show_memory(state, state.memory(existing=True).get(memory_id, key=key, seq=seq), as_json)


def _show_memory(state: _State, memory: Any, as_json: bool) -> None:
    if as_json:
        _print_json(memory)
    else:
        from recalld.adapters.cli_output import show_memory

        show_memory(state.console, memory)


@cli.command()
@click.argument("memory_id")
@click.option("--content", help="new content")
@click.option("--title", help="new title")
@click.option("--tag", "tags", multiple=True, help="replace the tags (repeat)")
@click.option("--category", help="new category")
@click.option("--importance", type=click.IntRange(1, 5), help="1-5 (maps to salience)")
@click.option("--salience", type=click.FloatRange(0, 1), help="0-1")
@click.option("--kind", help="new kind")
@click.option("--source", help="new source URI")
@click.option("--speaker", help="new speaker")
@click.option("--at", help="new time (ISO 8601)")
@click.option("--place", help="LAT,LON or a geohash")
@click.option("--place-name", help=PLACE_NAME_HELP)
@click.option("--ttl", type=float, help="expire this many seconds from now")
@click.option(
    "--meta", "meta", multiple=True, help="replace meta with this JSON object (repeat to merge)"
)
@click.option(
    "--clear",
    "cleared",
    multiple=True,
    type=click.Choice(CLEARABLE_FIELDS),
    help="remove this field (repeat): ttl_seconds no longer expires, tags and meta empty",
)
@click.option("--json", "as_json", is_flag=True, help="print the updated memory as JSON")
@pass_state
def update(
    state: _State,
    /,
    memory_id: str,
    importance: int | None,
    salience: float | None,
    tags: tuple[str, ...],
    place: str | None,
    place_name: str | None,
    ttl: float | None,
    meta: tuple[str, ...],
    cleared: tuple[str, ...],
    as_json: bool,
    **fields: Any,
) -> None:
    """Change only the given fields of memory MEMORY_ID (--clear FIELD removes one)."""
    changes = {name: value for name, value in fields.items() if value is not None}
    given = (importance, salience, place, place_name, ttl)
    if not (changes or tags or meta or cleared) and all(value is None for value in given):
        # Refused before the database is opened, as the service refuses it: `update ID`
        # alone created a new database, then said there was nothing to update.
        raise ValidationError("changes", "give at least one field to update")
    chosen_salience = _importance_to_salience(importance, salience)
    if chosen_salience is not None:
        changes["salience"] = chosen_salience
    if tags:
        changes["tags"] = list(tags)
    if place is not None or place_name is not None:
        changes["place"] = _changed_place(state, memory_id, place, place_name)
    if ttl is not None:
        changes["ttl_seconds"] = ttl
    if meta:
        changes["meta"] = _parse_meta(meta)
    # The option typed, where two set one field (review of pass e63: "--clear salience
    # --importance 3" named --salience, which was not given).
    typed = {
        "salience": "--salience" if importance is None else "--importance",
        "place": "--place" if place is not None else "--place-name",
    }
    for name in dict.fromkeys(cleared):
        if name in changes:
            option = typed.get(name) or CLEARED_BY_OPTION.get(name, f"--{name.replace('_', '-')}")
            raise click.BadParameter(
                f"{name} is given a value too ({option}): give it or clear it",
                param_hint="--clear",
            )
        changes[name] = None  # the service clears a field given as None
    _show_memory(state, state.memory(existing=True).update(memory_id, **changes), as_json)


def _changed_place(
    state: _State, memory_id: str, place: str | None, name: str | None
) -> dict[str, Any] | None:
    """The place ``update`` sets: new coordinates keep the stored name, and a new name
    alone keeps the stored place (its geohash, at the precision it has)."""
    current = state.memory(existing=True).get(memory_id).place
    if place is None:
        if current is None:
            raise click.BadParameter(
                "--place-name needs --place (the memory has no place)", param_hint="--place-name"
            )
        return {"lat": current.lat, "lon": current.lon, "geohash": current.geohash, "name": name}
    if name is None and current is not None:
        name = current.name
    return _parse_place(place, name)


@cli.command()
@click.argument("memory_id")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='print {"deleted": true|false, "scrubbed": true|false, "scrub": "done|pending|none"}',
)
@pass_state
def forget(state: _State, memory_id: str, as_json: bool) -> None:
    """Delete memory MEMORY_ID and every trace of it (cannot be undone)."""
    if state.no_database_yet():
        # Nothing is there to forget, and nothing is created to say so: `forget ID` on a
        # mistyped --db created a new, empty database.
        forgotten = Forgotten.of(deleted=False, scrub="none")
    else:
        forgotten = state.memory().forget(memory_id)
    if as_json:
        _print_json(forgotten)
    elif not forgotten.deleted:
        # Idempotent, as DELETE /v1/memories/{id} is: nothing there is nothing to forget.
        click.echo(f"nothing to forget: no memory {visible(memory_id)}")
    elif forgotten.scrub == "pending":
        click.echo(
            "forgotten; scrubbing its bytes from the database files is pending (another"
            " reader holds an older snapshot): the next recalld process to open the database,"
            " or a running server, finishes it (`recalld stats` shows pending scrubs)"
        )
    else:
        click.echo("forgotten")


def _page_command(name: str, doc: str, default_limit: int) -> click.Command:
    @_filters_options
    @limit_option(default_limit)
    @click.option("--cursor", help="continue from the next_cursor of a previous page")
    @click.option("--include-expired", is_flag=True, help="admin: show expired, unpurged memories")
    @click.option(
        "--json", "as_json", is_flag=True, help='print {"memories": [...], "next_cursor"}'
    )
    @pass_state
    def command(
        state: _State,
        /,
        limit: int | None,
        cursor: str | None,
        include_expired: bool,
        as_json: bool,
        **options: Any,
    ) -> None:
        check_limit(state, limit)
        memory = state.memory(existing=True)
        lister = memory.list_memories if name == "list" else memory.recent
        with filter_options():
            page = lister(filters=_filters(options, include_expired), limit=limit, cursor=cursor)
        if as_json:
            _print_json(page)
            return
        if not page.memories:
            click.echo("no memories")
            return
        from recalld.adapters.cli_output import memory_table

        state.console.print(memory_table(page.memories))
        if page.next_cursor:
            click.echo(f"more: --cursor {page.next_cursor}")

    command.__doc__ = doc
    return cli.command(name)(command)


_page_command("list", "List memories, newest first.", 50)
_page_command("recent", "List the most recently created or updated memories.", 10)


@cli.command()
@click.option("--all-namespaces", is_flag=True, help="count across every namespace (admin)")
@click.option("--json", "as_json", is_flag=True, help="print the stats as JSON")
@pass_state
def stats(state: _State, all_namespaces: bool, as_json: bool) -> None:
    """Counts by category, kind and namespace; search backend; database size."""
    memory = state.memory()
    namespaces = memory.namespaces() if all_namespaces else None
    result = memory.stats(namespaces)
    if as_json:
        _print_json(result)
        return
    from recalld.adapters.cli_output import show_stats

    show_stats(state.console, result)


def _shell_words(line: str) -> list[str]:
    """A shell line's words, as a shell splits them; when that fails on a lone apostrophe
    ("the user's dog"), only double quotes quote, so the apostrophe is part of a word."""
    try:
        return shlex.split(line)
    except ValueError:
        lexer = shlex.shlex(line, posix=True)
        lexer.whitespace_split = True
        lexer.quotes = '"'
        lexer.escapedquotes = '"'
        return list(lexer)


@cli.command()
@pass_state
def shell(state: _State) -> None:
    """An interactive session: type commands without the `recalld` prefix."""
    memory = state.memory()
    # Commands piped in (`recalld shell < commands.txt`) answer as each would alone: no
    # banner, no prompt in front of every answer (a JSON line began "recalld> {").
    interactive = sys.stdin.isatty()
    if interactive:
        stats_now = memory.stats()
        state.console.print(
            f"recalld on {memory.store.location()} (namespace {state.settings.namespace},"
            f" {stats_now.count} memories). Type `help`, or `quit` to leave.",
            highlight=False,
            markup=False,
        )
    prompt = "[bold green]recalld>[/bold green] " if interactive else ""
    while True:
        try:
            line = state.console.input(prompt)
        except EOFError:
            break
        except KeyboardInterrupt:
            # Ctrl-C at the prompt drops the line typed, as a shell does (Ctrl-D or
            # `quit` leaves).
            state.console.print()
            continue
        try:
            if not _shell_line(state, line):
                break
        except (KeyboardInterrupt, click.exceptions.Abort):
            # Ctrl-C while a line runs (click turns it into Abort inside a command) stops
            # that command only: what it had not committed is rolled back.
            click.echo("interrupted", err=True)


def _shell_line(state: _State, line: str) -> bool:
    """Run one line typed in `recalld shell`; False when it asks to leave."""
    try:
        words = _shell_words(line)
    except ValueError as error:
        click.echo(f'error: {error}: close the quote, or quote text with "…"', err=True)
        return True
    if not words:
        return True
    if words[0] in {"quit", "exit"}:
        return False
    if words[0] == "help":
        words = ["--help"]
    if words[0] == "shell":
        click.echo("error: shell: this is the shell already", err=True)
        return True
    stdout = sys.stdout
    try:
        cli.main(words, prog_name="recalld", obj=state, standalone_mode=False)
    except click.ClickException as error:
        error.show()
    except RecalldError as error:
        click.echo(f"error: {visible(str(error))}", err=True)
    except SystemExit as stopped:
        if stopped.code == TERMINATED:
            raise  # SIGTERM during the line (see sigterm_ends_cleanly) ends the shell too
        if sys.stdout is not stdout or state.console.quiet:
            # A command whose reader left (`recalld shell < lines | head`) ends with exit 1,
            # once click has put a quiet stream in stdout's place (or rich, for a table,
            # has turned quiet and sent stdout to /dev/null): nothing more can be shown,
            # so the session ends there with that 1 (it went on and ended 0).
            raise
    return True


for _command in (
    *server_commands,
    *context_commands,
    *intention_commands,
    *transfer_commands,
    graph_group,
    migrate_command,
):
    cli.add_command(_command)


def _escape_what_output_cannot_encode() -> None:
    """On a stdout that is not UTF-8 (a Latin-1 locale, ``PYTHONIOENCODING=latin-1``),
    print a character it cannot encode as a backslash escape (``\\u65e5``): a memory in
    Japanese was a ``UnicodeEncodeError`` traceback and no output at all. (``--json``
    escapes such characters itself, as JSON does; stderr already escapes them.)"""
    stream = sys.stdout
    if isinstance(stream, io.TextIOWrapper) and not writes_utf8(stream):
        stream.reconfigure(errors="backslashreplace")


# The exit status of a command stopped by Ctrl-C: 128 + SIGINT, as a shell reports it.
INTERRUPTED = 130


def main() -> None:
    """Console entry point: run the CLI and turn recalld errors into one line and exit 1
    (Ctrl-C: ``aborted`` and exit 130)."""
    _escape_what_output_cannot_encode()
    try:
        cli.main(prog_name="recalld", standalone_mode=False)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except click.exceptions.Abort as error:
        click.echo("aborted", err=True)
        # Ctrl-C (click turns it into Abort) ends as a shell's interrupted command does,
        # 128 + SIGINT: a script tells "stopped" from "failed" (exit 1) by it.
        sys.exit(INTERRUPTED if isinstance(error.__cause__, KeyboardInterrupt) else 1)
    except RecalldError as error:
        # A path or value in the message is shown, not obeyed (a --db named with ESC [2J).
        click.echo(f"error: {visible(str(error))}", err=True)
        sys.exit(1)
    except OSError as error:
        # Any OSError a command let through is one line, not a traceback. One without a
        # file name is the output refusing writes (stdout on a full disk or /dev/full; a
        # closed pipe ends quietly in click and rich): say so, since what the command did
        # (a write, a forget) is done. One with a file name names it (a path too long).
        reason = error.strerror or str(error)
        if error.filename is None:
            click.echo(f"error: could not write the output: {reason}", err=True)
        else:
            click.echo(f"error: {reason}: {visible(str(error.filename))}", err=True)
        sys.exit(1)
