"""What every ``recalld`` command shares: the state, output helpers, common options."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import click
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from recalld import _validate as check
from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.model import Filters, Hit, Memory
from recalld.service import MemoryService

CommandT = TypeVar("CommandT", bound=Callable[..., Any])


@dataclass
class _State:
    """What the group hands to its commands: settings, and the service once opened."""

    settings: Settings
    service: MemoryService | None = None
    console: Console = field(default_factory=Console)

    def memory(self) -> MemoryService:
        if self.service is None:
            self.service = MemoryService.open(self.settings)
        return self.service

    def close(self) -> None:
        if self.service is not None:
            self.service.close()
            self.service = None


def _print_json(value: Any) -> None:
    if isinstance(value, BaseModel):
        text = value.model_dump_json()
    elif isinstance(value, list):
        text = json.dumps(
            [
                item.model_dump(mode="json") if isinstance(item, BaseModel) else item
                for item in value
            ]
        )
    else:
        text = json.dumps(value)
    click.echo(text)


def _importance_to_salience(importance: int | None, salience: float | None) -> float | None:
    if importance is not None and salience is not None:
        raise click.UsageError("give --importance or --salience, not both")
    if importance is not None:
        return (importance - 1) / 4
    return salience


def _parse_place(value: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    if "," in value:
        lat_text, _, lon_text = value.partition(",")
        try:
            return {"lat": float(lat_text), "lon": float(lon_text)}
        except ValueError:
            raise click.BadParameter(f"expected LAT,LON or a geohash, got {value!r}") from None
    return {"geohash": value}


def _parse_meta(value: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = check.load_json(value, "--meta")
    except ValidationError as error:
        raise click.BadParameter(error.message, param_hint="--meta") from None
    if not isinstance(parsed, dict):
        raise click.BadParameter("--meta must be a JSON object")
    return parsed


def _filters_options(command: CommandT) -> CommandT:
    options = [
        click.option("--kind", help="only this kind"),
        click.option("--category", help="only this category"),
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


def _filters(options: dict[str, Any], include_expired: bool = False) -> Filters:
    return Filters(
        kind=options.pop("kind"),
        category=options.pop("category"),
        tags_any=list(options.pop("tags_any")),
        tags_all=list(options.pop("tags_all")),
        since=options.pop("since"),
        until=options.pop("until"),
        created_since=options.pop("created_since"),
        created_until=options.pop("created_until"),
        include_expired=include_expired,
    )


def _memory_table(memories: list[Memory], scores: list[float] | None = None) -> Table:
    table = Table(show_lines=False)
    table.add_column("id", style="cyan", no_wrap=True)
    if scores is not None:
        table.add_column("score", justify="right")
    table.add_column("when", no_wrap=True)
    table.add_column("kind")
    table.add_column("tags")
    table.add_column("content")
    for index, memory in enumerate(memories):
        when = (memory.at or memory.created_at).strftime("%Y-%m-%d %H:%M")
        title = f"[bold]{memory.title}[/bold]: " if memory.title else ""
        row = [memory.id]
        if scores is not None:
            row.append(f"{scores[index]:.3f}")
        row += [when, memory.kind, ", ".join(memory.tags), title + memory.content]
        table.add_row(*row)
    return table


def _show_hits(state: _State, hits: list[Hit], as_json: bool) -> None:
    if as_json:
        _print_json(hits)
    elif not hits:
        state.console.print("no memories match")
    else:
        state.console.print(
            _memory_table([hit.memory for hit in hits], [hit.score for hit in hits])
        )


def _show_memory(state: _State, memory: Memory, as_json: bool) -> None:
    if as_json:
        _print_json(memory)
        return
    for name, value in memory.model_dump(mode="json").items():
        if value not in (None, [], {}):
            state.console.print(f"[bold]{name}[/bold]: {value}", highlight=False)


pass_state = click.make_pass_decorator(_State)
