"""``recalld`` commands for core memory (``core ...``) and involuntary recall
(``experience``, ``sense``, ``pending``)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from recalld.adapters._cli_support import (
    PLACE_NAME_HELP,
    CommandT,
    _parse_place,
    _print_json,
    _State,
    limit_option,
    media_file,
    pass_state,
    read_text,
    visible,
)


@click.group()
def core() -> None:
    """The bounded core memory injected into every prompt (targets: user, memory)."""


def _core_edit(
    state: _State,
    target: str,
    operations: list[dict[str, Any]],
    as_json: bool,
    *,
    single: bool = True,
) -> None:
    from recalld.core_memory import CoreMemoryFullError, named_as_given
    from recalld.errors import ValidationError

    # Only patches and removals: they change entries that are there, so on a --db that
    # does not exist they find none, creating no database to say so (pass a67).
    existing = all(
        isinstance(operation, dict) and operation.get("action") in ("patch", "remove")
        for operation in operations
    )
    try:
        result = state.memory(existing=existing).core.apply(target, operations)
    except CoreMemoryFullError as full:
        if as_json:
            raise  # one JSON line on stderr, as every error of a --json command
        click.echo(f"error: {full}", err=True)
        for number, entry in enumerate(full.state.entries, start=1):
            click.echo(f"  {number}. {entry}", err=True)
        sys.exit(1)
    except ValidationError as error:
        # add, patch and remove take CONTENT and OLD_TEXT: not "operations[0].content".
        raise (named_as_given(error) if single else error) from None
    if as_json:
        _print_json(result)
        return
    # An entry is plain text: "[bold]" or "[/x]" in it is not rich markup.
    state.console.print(
        f"{result.message} {target}: {result.usage} chars", highlight=False, markup=False
    )
    for note in result.applied:
        state.console.print(f"  {note}", highlight=False, markup=False)
    if result.warning:
        click.echo(f"warning: {result.warning}", err=True)


TARGET = click.Choice(["user", "memory"])


@core.command("show")
@click.option("--json", "as_json", is_flag=True, help="print both targets as JSON")
@pass_state
def core_show(state: _State, as_json: bool) -> None:
    """Print the core memory block as it is injected into prompts."""
    memory = state.memory(existing=True)
    if as_json:
        _print_json([memory.core.state(target) for target in ("user", "memory")])
    else:
        click.echo(visible(memory.core.render()))


@core.command("add")
@click.argument("target", type=TARGET)
@click.argument("content")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
@pass_state
def core_add(state: _State, target: str, content: str, as_json: bool) -> None:
    """Add CONTENT as a new entry of TARGET."""
    _core_edit(state, target, [{"action": "add", "content": content}], as_json)


@core.command("patch")
@click.argument("target", type=TARGET)
@click.argument("old_text")
@click.argument("content")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
@pass_state
def core_patch(state: _State, target: str, old_text: str, content: str, as_json: bool) -> None:
    """Replace OLD_TEXT (found exactly once in TARGET) with CONTENT."""
    _core_edit(
        state, target, [{"action": "patch", "old_text": old_text, "content": content}], as_json
    )


@core.command("remove")
@click.argument("target", type=TARGET)
@click.argument("old_text")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
@pass_state
def core_remove(state: _State, target: str, old_text: str, as_json: bool) -> None:
    """Delete the one entry of TARGET that contains OLD_TEXT."""
    _core_edit(state, target, [{"action": "remove", "old_text": old_text}], as_json)


@core.command("apply")
@click.argument("file", type=click.File("rb"))
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
@pass_state
def core_apply(state: _State, file: Any, as_json: bool) -> None:
    """Apply a batch from FILE (JSON: {"target": ..., "operations": [...]}; - for stdin)."""
    try:
        batch = json.loads(read_text(file))
    except json.JSONDecodeError as error:
        raise click.BadParameter(f"not JSON: {error.msg}", param_hint="FILE") from None
    if not isinstance(batch, dict) or not isinstance(batch.get("operations"), list):
        raise click.BadParameter(
            'expected {"target": "user"|"memory", "operations": [...]}', param_hint="FILE"
        )
    _check_batch_keys(batch)
    _core_edit(state, batch["target"], batch["operations"], as_json, single=False)


def _check_batch_keys(batch: dict[str, Any]) -> None:
    """Refuse a batch file without its target, with a target that is none, or with a key it
    does not use: a ``"namespace"`` in it was ignored (the batch went to the default
    namespace), as were single-operation fields beside ``operations``, and a missing target
    read as 'None'. Refused before the database is opened (a bad target created one)."""
    from recalld import _validate as check

    other = sorted(set(batch) - {"target", "operations"})
    if other:
        # Names cut as every repeated value is, and only the first few of many keys.
        named = ", ".join(
            json.dumps(check.field_name(key), ensure_ascii=False) for key in other[:_KEYS_NAMED]
        )
        if len(other) > _KEYS_NAMED:
            named += f" and {len(other) - _KEYS_NAMED} more"
        hint = " (choose the namespace with --namespace)" if "namespace" in other else ""
        raise click.BadParameter(
            f"a batch holds only target and operations; not {named}{hint}", param_hint="FILE"
        )
    if "target" not in batch:
        raise click.BadParameter('give the "target" (user or memory)', param_hint="FILE")
    target = batch["target"]
    if not isinstance(target, str) or target not in ("user", "memory"):
        given = check.field_name(json.dumps(target, ensure_ascii=False))
        raise click.BadParameter(
            f'"target" must be "user" or "memory", got {given}', param_hint="FILE"
        )


_KEYS_NAMED = 5


def _biometrics(values: tuple[str, ...]) -> dict[str, float] | None:
    """``--biometric NAME=NUMBER`` readings by name; a name given twice is refused (one
    reading would silently replace the other)."""
    readings: dict[str, float] = {}
    for value in values:
        name, separator, number = value.partition("=")
        try:
            reading = float(number)
        except ValueError:
            reading = None
        if not separator or reading is None:
            raise click.BadParameter(
                f"expected NAME=NUMBER, got {value!r}", param_hint="--biometric"
            )
        name = name.strip()
        if name in readings:
            raise click.BadParameter(
                f"{name!r} is given twice ({readings[name]:g} and {reading:g}); give each"
                " reading once",
                param_hint="--biometric",
            )
        readings[name] = reading
    return readings or None


def _context_options(command: CommandT) -> CommandT:
    options = [
        click.option("--place", help="LAT,LON or a geohash"),
        click.option("--at", help="ISO 8601 time with offset"),
        # A file (or base64 data, as the library takes): a mistyped path ("/tmp/fotojpg")
        # may be valid base64, and was refused as "is not an image Pillow can read: cannot
        # identify image file the data" (adversarial pass a65; media_file).
        click.option(
            "--image",
            callback=media_file,
            help="image file path (only derived features are kept)",
        ),
        click.option(
            "--audio",
            callback=media_file,
            help="audio file path (only a fingerprint is kept)",
        ),
        click.option(
            "--biometric", "biometrics", multiple=True, help="NAME=NUMBER reading (repeat)"
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _show_recollections(state: _State, items: list[Any], as_json: bool) -> None:
    if as_json:
        _print_json(items)
        return
    if not items:
        state.console.print("nothing surfaced")
    for item in items:
        channels = ", ".join(f"{name} {value:.2f}" for name, value in item.channels.items())
        state.console.print(
            f"{item.score:.3f} {item.prompt_line}  ({channels})", highlight=False, markup=False
        )


@click.command()
@click.argument("text")
@_context_options
@click.option("--place-name", help=PLACE_NAME_HELP)
@click.option("--tag", "tags", multiple=True, help="a tag (repeat)")
@click.option("--salience", type=click.FloatRange(0, 1), help="0-1, how much it matters")
@click.option("--json", "as_json", is_flag=True, help="print the stored memory as JSON")
@pass_state
def experience(
    state: _State,
    text: str,
    place: str | None,
    at: str | None,
    image: str | None,
    audio: str | None,
    biometrics: tuple[str, ...],
    place_name: str | None,
    tags: tuple[str, ...],
    salience: float | None,
    as_json: bool,
) -> None:
    """Remember TEXT with the context it happened in (place, time, senses)."""
    memory = state.memory().recollections.remember(
        text,
        place=_parse_place(place, place_name),
        at=at,
        tags=tags,
        salience=salience,
        image=image,
        audio=audio,
        biometrics=_biometrics(biometrics),
    )
    if as_json:
        _print_json(memory)
    else:
        from recalld.adapters.cli_output import show_memory

        show_memory(state.console, memory)


@click.command()
@click.option("--text", help="text heard or read right now")
@_context_options
@click.option("--tag", "tags", multiple=True, help="a label of the situation (repeat)")
@click.option("--json", "as_json", is_flag=True, help="print what fired as JSON")
@pass_state
def sense(
    state: _State,
    text: str | None,
    place: str | None,
    at: str | None,
    image: str | None,
    audio: str | None,
    biometrics: tuple[str, ...],
    tags: tuple[str, ...],
    as_json: bool,
) -> None:
    """Report the present context; strongly matching memories and intentions whose
    triggers hold fire and are queued."""
    recollections = state.memory().recollections
    cue = recollections.cue(
        text=text,
        place=_parse_place(place),
        at=at,
        tags=tags,
        image=image,
        audio=audio,
        biometrics=_biometrics(biometrics),
    )
    _show_recollections(state, recollections.sense(cue), as_json)


@click.command()
@click.option("--peek", is_flag=True, help="show without removing")
@limit_option(50)
@click.option("--json", "as_json", is_flag=True, help="print the recollections as JSON")
@pass_state
def pending(state: _State, peek: bool, limit: int | None, as_json: bool) -> None:
    """Deliver queued involuntary recollections and reminders, oldest first (each once)."""
    items = state.memory(existing=True).recollections.pending(drain=not peek, limit=limit)
    _show_recollections(state, items, as_json)


context_commands: list[click.Command] = [core, experience, sense, pending]
