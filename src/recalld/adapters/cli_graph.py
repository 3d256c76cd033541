"""``recalld graph ...``: browse and rebuild the knowledge graph."""

from __future__ import annotations

import shlex

import click

from recalld.adapters._cli_support import (
    _print_json,
    _State,
    check_limit,
    limit_option,
    pass_state,
    visible,
)

__all__ = ["graph_group"]


@click.group("graph")
def graph_group() -> None:
    """The knowledge graph: entities and relations extracted from memories."""


@graph_group.command("entities")
@click.option("--query", help="only entities whose name or type contains this")
@click.option("--type", "entity_type", help="only this type (person, place, topic ...)")
@limit_option(50)
@click.option("--cursor", help="continue from the next_cursor of a previous page")
@click.option("--json", "as_json", is_flag=True, help='print {"entities": [...], "next_cursor"}')
@pass_state
def graph_entities(
    state: _State,
    query: str | None,
    entity_type: str | None,
    limit: int | None,
    cursor: str | None,
    as_json: bool,
) -> None:
    """List entities by name, with how many memories mention each."""
    check_limit(state, limit)
    page = state.memory(existing=True).graph.entities(
        query=query, type=entity_type, limit=limit, cursor=cursor
    )
    if as_json:
        _print_json(page)
        return
    if not page.entities:
        state.console.print("no entities")
        return
    from rich.table import Table
    from rich.text import Text

    table = Table()
    for column in ("name", "type", "mentions", "observations", "declared"):
        table.add_column(column)
    for entity in page.entities:
        table.add_row(  # names are text, not rich markup
            Text(visible(entity.name)),
            Text(visible(entity.type)),
            str(entity.mentions),
            str(entity.observations),
            "yes" if entity.declared else "",
        )
    state.console.print(table)
    if page.next_cursor:
        state.console.print(f"more: --cursor {page.next_cursor}", highlight=False, soft_wrap=True)


@graph_group.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="print the entity as JSON")
@pass_state
def graph_show(state: _State, name: str, as_json: bool) -> None:
    """Show entity NAME: aliases, observations, mentions and relations."""
    detail = state.memory(existing=True).graph.entity(name)
    if as_json:
        _print_json(detail)
        return
    from rich.markup import escape

    entity = detail.entity
    console = state.console
    console.print(
        f"[bold]{escape(entity.name)}[/bold] ({escape(entity.type)}); {entity.mentions} mentions,"
        f" {entity.observations} observations",
        highlight=False,
    )
    if detail.aliases:
        console.print(f"aliases: {', '.join(detail.aliases)}", highlight=False, markup=False)
    for observation in detail.observations:
        console.print(f"  observation: {observation.content}", highlight=False, markup=False)
    from recalld.config import Settings  # loaded with the service already

    # A command to run as printed: in this namespace, which it would else not read.
    namespace = state.settings.namespace
    default = Settings.model_fields["namespace"].default
    scope = "" if namespace == default else f" --namespace {shlex.quote(namespace)}"
    if detail.observations_cursor:
        console.print(
            f"  (the first {len(detail.observations)} of {entity.observations} observations)"
            f" more observations: recalld{scope} graph observations"
            f" {shlex.quote(entity.name)} --cursor {detail.observations_cursor}",
            highlight=False,
            markup=False,
            soft_wrap=True,  # a command to copy: never broken across lines
        )
    for relation in detail.relations:
        console.print(
            f"  {relation.subject} -[{relation.predicate}]-> {relation.object}",
            highlight=False,
            markup=False,
        )
    if detail.relations_cursor:
        console.print(
            f"  more relations: recalld{scope} graph relations"
            f" --entity {shlex.quote(entity.name)} --cursor {detail.relations_cursor}",
            highlight=False,
            markup=False,
            soft_wrap=True,  # a command to copy: never broken across lines
        )
    for mention in detail.mentions:
        console.print(f"  {mention.memory_id} {mention.prompt_line}", highlight=False, markup=False)


@graph_group.command("relations")
@click.option("--entity", help="only relations touching this entity")
@click.option("--predicate", help="only this predicate")
@limit_option(100)
@click.option("--cursor", help="continue from the next_cursor of a previous page")
@click.option("--json", "as_json", is_flag=True, help='print {"relations": [...], "next_cursor"}')
@pass_state
def graph_relations(
    state: _State,
    entity: str | None,
    predicate: str | None,
    limit: int | None,
    cursor: str | None,
    as_json: bool,
) -> None:
    """List relations (subject, predicate, object) and how many memories state each."""
    check_limit(state, limit)
    page = state.memory(existing=True).graph.relations(
        entity=entity, predicate=predicate, limit=limit, cursor=cursor
    )
    if as_json:
        _print_json(page)
        return
    if not page.relations:
        state.console.print("no relations")
        return
    from rich.table import Table
    from rich.text import Text

    table = Table()
    for column in ("subject", "predicate", "object", "sources", "at"):
        table.add_column(column)
    for relation in page.relations:
        table.add_row(
            Text(visible(relation.subject)),
            Text(visible(relation.predicate)),
            Text(visible(relation.object)),
            str(relation.sources),
            "" if relation.at is None else relation.at.strftime("%Y-%m-%d %H:%M"),
        )
    state.console.print(table)
    if page.next_cursor:
        state.console.print(f"more: --cursor {page.next_cursor}", highlight=False, soft_wrap=True)


@graph_group.command("observations")
@click.argument("name")
@limit_option(100)
@click.option("--cursor", help="continue from the next_cursor of a previous page")
@click.option(
    "--json", "as_json", is_flag=True, help='print {"entity", "observations": [...], "next_cursor"}'
)
@pass_state
def graph_observations(
    state: _State, name: str, limit: int | None, cursor: str | None, as_json: bool
) -> None:
    """List entity NAME's observations, oldest first (show prints only its first)."""
    check_limit(state, limit)
    page = state.memory(existing=True).graph.observations(name, limit=limit, cursor=cursor)
    if as_json:
        _print_json(page)
        return
    if not page.observations:
        state.console.print("no observations")
    for observation in page.observations:
        state.console.print(
            f"{observation.memory_id} {observation.content}", highlight=False, markup=False
        )
    if page.next_cursor:
        state.console.print(f"more: --cursor {page.next_cursor}", highlight=False, soft_wrap=True)


@graph_group.command("rebuild")
@click.option("--all-namespaces", is_flag=True, help="rebuild every namespace (admin)")
@click.option("--run", "run_now", is_flag=True, help="also run the worker here until idle")
@click.option("--json", "as_json", is_flag=True, help='print {"queued", "extracted"}')
@pass_state
def graph_rebuild(state: _State, all_namespaces: bool, run_now: bool, as_json: bool) -> None:
    """Queue re-extraction of every memory (the worker does it; --run does it now)."""
    memory = state.memory(existing=True)
    queued = memory.graph.rebuild(memory.namespaces() if all_namespaces else None)
    if not as_json:
        # Said before running: the queue is written whatever the run meets (a worker of
        # another model refuses it), and a running worker extracts it.
        state.console.print(f"queued {queued} memories for graph extraction", highlight=False)
    extracted = memory.new_worker().run_until_idle().extracted if run_now else 0
    if as_json:
        _print_json({"queued": queued, "extracted": extracted})
    elif run_now:
        state.console.print(f"extracted {extracted}", highlight=False)
