"""``recalld`` commands that run servers or manage them: mcp, serve, token, worker, status."""

from __future__ import annotations

import sys
import threading

import click
from rich.table import Table

from recalld.adapters._cli_support import _print_json, _State, pass_state
from recalld.service import MemoryService


@click.command("mcp")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a client that launches recalld; http for streamable HTTP",
)
@click.option(
    "--dialect",
    "dialects",
    multiple=True,
    help="tool set(s): native (default), batbox, chaoscore, rover, hermes, madeleine,"
    " knowledge;"
    " repeat or comma-separate",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address")
@click.option("--port", default=8766, show_default=True, type=int, help="HTTP port")
@pass_state
def mcp_command(
    state: _State, transport: str, dialects: tuple[str, ...], host: str, port: int
) -> None:
    """Serve recalld as an MCP server (stdio by default; logs go to stderr)."""
    from recalld.adapters.mcp_server import build_server, run_server

    names = [name.strip() for value in dialects for name in value.split(",") if name.strip()]
    # A long-running server embeds new memories itself (worker thread) and fires
    # time-only intentions when they come due (scheduler thread).
    settings = state.settings.model_copy(update={"worker_thread": True, "scheduler_thread": True})
    # Over HTTP the caller may be another machine: media must be base64, never a path
    # on this one (stdio's client is the local user who launched the server).
    server = build_server(
        lambda: MemoryService.open(settings),
        names or ["native"],
        media_paths=transport == "stdio",
    )
    run_server(server, transport="http" if transport == "http" else "stdio", host=host, port=port)


@click.command("serve")
@click.option("--host", help="address to bind [env RECALLD_HOST; default 127.0.0.1]")
@click.option("--port", type=click.IntRange(0, 65535), help="port [env RECALLD_PORT; default 8765]")
@click.option("--log-level", default="info", show_default=True, help="uvicorn log level")
@click.option(
    "--mcp-dialect",
    "mcp_dialects",
    multiple=True,
    help="tool set(s) of the MCP endpoint at /mcp (default native); repeat or comma-separate",
)
@pass_state
def serve_command(
    state: _State,
    host: str | None,
    port: int | None,
    log_level: str,
    mcp_dialects: tuple[str, ...],
) -> None:
    """Serve the REST API, batbox's /remember, /recall, /status, and MCP at /mcp.

    Without any API token only a loopback address is accepted; see `recalld token`.
    """
    from recalld.adapters.http_api import mcp_mount, serve

    overrides = {
        name: value for name, value in (("host", host), ("port", port)) if value is not None
    }
    # A long-running server embeds new memories itself (worker thread) and fires
    # time-only intentions when they come due (scheduler thread).
    state.settings = state.settings.model_copy(
        update={"worker_thread": True, "scheduler_thread": True}
    )
    settings = state.settings.model_copy(update=overrides)
    names = [n.strip() for value in mcp_dialects for n in value.split(",") if n.strip()]
    service = state.memory()
    mount = mcp_mount(service, settings, names or ["native"])
    serve(service, settings, log_level=log_level, extra_mounts=[mount])


@click.group("token")
def token_group() -> None:
    """Create, list and revoke API tokens (stored hashed in the database)."""


@token_group.command("create")
@click.argument("name")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    required=True,
    help="NAMESPACE:read or NAMESPACE:read+write (NAMESPACE may be *); repeat for several",
)
@click.option("--json", "as_json", is_flag=True, help="print the token and its record as JSON")
@pass_state
def token_create(state: _State, name: str, scopes: tuple[str, ...], as_json: bool) -> None:
    """Create a token called NAME; the token is printed once and cannot be shown again."""
    from recalld.tokens import TokenRegistry, parse_scope

    parsed = dict(parse_scope(scope) for scope in scopes)
    with TokenRegistry.open(state.settings) as registry:
        issued = registry.create(name, parsed)
    if as_json:
        _print_json(issued)
        return
    click.echo(issued.token)
    click.echo(f"token {issued.info.id} ({name}); store it now: it cannot be shown again", err=True)


@token_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="print the tokens as a JSON list")
@pass_state
def token_list(state: _State, as_json: bool) -> None:
    """List tokens (id, name, scopes, last use; never the token itself)."""
    from recalld.tokens import TokenRegistry

    with TokenRegistry.open(state.settings) as registry:
        tokens = registry.list()
    if as_json:
        _print_json(tokens)
        return
    table = Table()
    for column in ("id", "name", "scopes", "created", "last used", "revoked"):
        table.add_column(column)
    for token in tokens:
        table.add_row(
            token.id,
            token.name,
            ", ".join(f"{name}:{access}" for name, access in token.scopes.items()),
            token.created_at.strftime("%Y-%m-%d %H:%M"),
            token.last_used_at.strftime("%Y-%m-%d %H:%M") if token.last_used_at else "",
            token.revoked_at.strftime("%Y-%m-%d %H:%M") if token.revoked_at else "",
        )
    state.console.print(table)


@token_group.command("revoke")
@click.argument("token_id")
@click.option("--json", "as_json", is_flag=True, help='print {"revoked": true|false}')
@pass_state
def token_revoke(state: _State, token_id: str, as_json: bool) -> None:
    """Revoke token TOKEN_ID (the id from `recalld token list`); it stops working at once."""
    from recalld.tokens import TokenRegistry

    with TokenRegistry.open(state.settings) as registry:
        revoked = registry.revoke(token_id)
    if as_json:
        _print_json({"revoked": revoked})
    else:
        state.console.print("revoked" if revoked else f"no active token {token_id}")
    if not revoked:
        sys.exit(1)


@click.command("worker")
@click.option("--until-idle", is_flag=True, help="exit once no job is runnable (scripts, tests)")
@click.option("--batch-size", type=click.IntRange(1, 10_000), help="jobs claimed per batch")
@click.option("--json", "as_json", is_flag=True, help="print what was done as JSON at the end")
@pass_state
def worker_command(state: _State, until_idle: bool, batch_size: int | None, as_json: bool) -> None:
    """Embed and graph-extract queued memories (the durable job queue) until stopped, or idle.

    It also fires time-only intentions as they come due (a scheduler thread; with
    --until-idle, once, for those due now). Without an embedder and a graph
    extractor it only does that.
    """
    if batch_size is not None:
        state.settings = state.settings.model_copy(update={"worker_batch_size": batch_size})
    if not until_idle:
        state.settings = state.settings.model_copy(update={"scheduler_thread": True})
    service = state.memory()
    reminders = len(service.intentions.run_due()) if until_idle else 0
    if service.embedder is None and service.indexing.extractor is None:
        _schedule_only(until_idle, reminders, as_json)
        return
    worker = service.new_worker()
    try:
        if until_idle:
            report = worker.run_until_idle()
        else:
            worker.run_forever()
            report = worker.report
    except KeyboardInterrupt:
        report = worker.report
    result = {
        "worker": worker.id,
        "reminders": reminders,
        "processed": report.processed,
        "failed_attempts": report.failed_attempts,
        "failed": report.failed_for_good,
        "batches": report.batches,
        "backfilled": report.backfilled,
    }
    if as_json:
        _print_json(result)
    else:
        click.echo(" ".join(f"{name}={value}" for name, value in result.items()), err=True)


def _schedule_only(until_idle: bool, reminders: int, as_json: bool) -> None:
    """``recalld worker`` with no embedder nor extractor: only the intention scheduler runs."""
    if not until_idle:
        stopped = threading.Event()
        try:
            while not stopped.wait(3600):
                pass  # the scheduler thread does the work; this thread waits for ^C
        except KeyboardInterrupt:
            pass
    result = {"reminders": reminders, "processed": 0}
    if as_json:
        _print_json(result)
    else:
        click.echo(" ".join(f"{name}={value}" for name, value in result.items()), err=True)


@click.command("status")
@click.option("--all-namespaces", is_flag=True, help="report every namespace (admin)")
@click.option("--json", "as_json", is_flag=True, help="print the status as JSON")
@pass_state
def status_command(state: _State, all_namespaces: bool, as_json: bool) -> None:
    """Indexing health: queue by state, embeddings per model, failures, workers, index."""
    memory = state.memory()
    result = memory.status(memory.namespaces() if all_namespaces else None)
    if as_json:
        _print_json(result)
        return
    for name, value in result.model_dump(mode="json").items():
        state.console.print(f"[bold]{name}[/bold]: {value}", highlight=False)


server_commands: list[click.Command] = [
    mcp_command,
    serve_command,
    token_group,
    worker_command,
    status_command,
]
