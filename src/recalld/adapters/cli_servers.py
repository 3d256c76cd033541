"""``recalld`` commands that run servers or manage them: mcp, serve, token, worker, status."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from recalld.adapters._cli_support import _print_json, _State, pass_state, progress_bar, visible

if TYPE_CHECKING:
    from recalld.config import Settings
    from recalld.service import MemoryService
    from recalld.worker import Worker, WorkerReport


def _names(values: Sequence[str]) -> list[str]:
    """Repeated or comma-separated option values, as one list."""
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


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
@click.option(
    "--port",
    default=8766,
    show_default=True,
    # As serve's: 99999 passed to uvicorn and ended in two tracebacks, -1 was "host:
    # cannot listen on 127.0.0.1: Servname not supported" (adversarial pass a65).
    type=click.IntRange(0, 65535),
    help="HTTP port (0: a free one)",
)
@click.option(
    "--namespaces",
    "namespaces",
    multiple=True,
    help="namespaces the native tools may name per call (namespace, user_id, agent_id),"
    " besides the server's own; * for any. Repeat or comma-separate.",
)
@pass_state
def mcp_command(
    state: _State,
    transport: str,
    dialects: tuple[str, ...],
    host: str,
    port: int,
    namespaces: tuple[str, ...],
) -> None:
    """Serve recalld as an MCP server (stdio by default; logs go to stderr)."""
    from recalld.adapters._network import base_url, check_listen, free_port
    from recalld.adapters.http_shutdown import exit_if_replaced
    from recalld.adapters.mcp_server import build_server, check_http_host, run_server
    from recalld.service import MemoryService

    # Every refusal comes before the database is opened: a bad option creates nothing
    # and starts no worker (one left running printed a traceback at exit).
    names = _dialect_names(dialects, "--dialect")
    allowed = _namespace_names(namespaces)
    if transport == "http":
        check_http_host(host)
        check_listen(host, port, choose="--port")
        if port == 0:
            port = free_port(host)  # chosen here, so the line below can say which
    # A long-running server embeds new memories itself (worker thread) and fires
    # time-only intentions when they come due (scheduler thread).
    settings = state.settings.model_copy(update={"worker_thread": True, "scheduler_thread": True})

    def open_service() -> MemoryService:
        if opened:
            return opened.pop()
        service = MemoryService.open(settings)
        if service.store.created:
            click.echo(f"created a new database at {visible(service.store.location())}", err=True)
        return service

    # Over HTTP the caller may be another machine: media must be base64, never a path
    # on this one (stdio's client is the local user who launched the server).
    server = build_server(open_service, names, media_paths=transport == "stdio", namespaces=allowed)
    # Opened once before serving, so a mistyped --db is the one-line error every other
    # command gives (inside the server's lifespan it became a long exception group, and
    # the client only saw the server go away); the server's lifespan takes this one.
    opened: list[MemoryService] = []
    opened.append(open_service())
    scheduler = opened[0].intentions.scheduler  # let go of when the service closes
    if transport == "http":
        # stdout is the protocol's only over stdio; over HTTP say where the endpoint is.
        click.echo(
            f"recalld MCP (streamable HTTP, {', '.join(names)}) at {base_url(host, port)}/mcp",
            err=True,
        )
    try:
        run_server(
            server,
            transport="http" if transport == "http" else "stdio",
            host=host,
            port=port,
            stop_on=None if scheduler is None else scheduler.gave_up,
        )
    finally:
        for service in opened:  # the server stopped before its lifespan took it
            service.close()
    exit_if_replaced(scheduler)  # exit 1, as `recalld worker` does (review of pass c68)


def _dialect_names(values: Sequence[str], option: str) -> list[str]:
    """The dialects given to ``option`` (native if none); unknown or clashing ones refused."""
    from recalld.adapters.dialects import resolve_dialects
    from recalld.errors import ValidationError

    names = _names(values) or ["native"]
    try:
        resolve_dialects(names)
    except ValidationError as error:
        raise ValidationError(option, error.message) from None
    return names


def _namespace_names(values: Sequence[str]) -> list[str]:
    """The namespaces given to ``--namespaces`` (``*`` for any); a malformed one refused."""
    from recalld import _validate as check
    from recalld.errors import ValidationError

    names = _names(values)
    for name in names:
        if name != "*":
            try:
                check.namespace(name)
            except ValidationError as error:
                raise ValidationError("--namespaces", error.message) from None
    return names


# uvicorn's levels: another name passed the option and ended the server with a KeyError
# traceback after its banner (adversarial pass a65).
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


@click.command("serve")
@click.option("--host", help="address to bind [env RECALLD_HOST; default 127.0.0.1]")
@click.option("--port", type=click.IntRange(0, 65535), help="port [env RECALLD_PORT; default 8765]")
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default="info",
    show_default=True,
    help="uvicorn log level",
)
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
    from recalld.adapters._network import check_listen, free_port
    from recalld.adapters.http_api import check_bind, mcp_mount, serve
    from recalld.adapters.http_shutdown import exit_if_replaced
    from recalld.errors import ValidationError
    from recalld.tokens import TokenRegistry

    if host is not None and not host.strip():
        # As an empty RECALLD_HOST is: "" binds every interface, which no one means blank.
        raise ValidationError(
            "--host", "is empty; give an address (127.0.0.1, or 0.0.0.0 for every interface)"
        )
    overrides = {
        name: value for name, value in (("host", host), ("port", port)) if value is not None
    }
    # A long-running server embeds new memories itself (worker thread) and fires
    # time-only intentions when they come due (scheduler thread).
    state.settings = state.settings.model_copy(
        update={"worker_thread": True, "scheduler_thread": True}
    )
    settings = state.settings.model_copy(update=overrides)
    names = _dialect_names(mcp_dialects, "--mcp-dialect")
    # Refused before the database is created or the banner printed: a port in use, and
    # a non-loopback address while no token exists (none can in a database not there yet).
    check_listen(settings.host, settings.port, choose="--port or RECALLD_PORT")
    if settings.port == 0:  # chosen here, so the banner can say which
        settings = settings.model_copy(update={"port": free_port(settings.host)})
    database = settings.db
    if isinstance(database, Path) and not database.exists():
        check_bind(settings.host, None)
    service = state.memory()
    check_bind(settings.host, TokenRegistry.for_store(service.store))
    mount = mcp_mount(service, settings, names)
    for line in banner(service, settings, names):
        click.echo(line, err=True)
    scheduler = service.intentions.scheduler  # let go of when the service closes
    serve(service, settings, log_level=log_level, extra_mounts=[mount])
    exit_if_replaced(scheduler)  # exit 1: a supervisor starts it on the restored file


def banner(service: MemoryService, settings: Settings, dialects: Sequence[str]) -> list[str]:
    """What `recalld serve` says when it starts: where everything is, how to connect."""
    from recalld._version import __version__
    from recalld.adapters._network import base_url, is_loopback
    from recalld.tokens import TokenRegistry

    host = settings.host
    base = base_url(host, settings.port)
    active = TokenRegistry.for_store(service.store).any_active()
    if active:
        tokens = "required (Authorization: Bearer <token>; `recalld token list`)"
    elif is_loopback(host):
        tokens = "not required on this machine (none exists; `recalld token create` adds one)"
    else:
        tokens = "required"
    embedder = service.embedder
    extractor = service.indexing.extractor
    worker = service.worker
    return [
        f"recalld {__version__}",
        f"  database   {service.store.location()}" + (" (new)" if service.store.created else ""),
        f"  REST API   {base}/v1  (OpenAPI: {base}/openapi.json)",
        f"  API docs   {base}/docs",
        f"  web UI     {base}/",
        f"  MCP        {base}/mcp  (streamable HTTP; dialects: {', '.join(dialects)})",
        f"  tokens     {tokens}",
        "  embedder   " + ("none: keyword recall only" if embedder is None else f"{embedder.name}"),
        "  graph      " + ("off" if extractor is None else extractor.name),
        "  worker     "
        + (
            "a thread of this server embeds and extracts new memories"
            if worker is not None
            else "none (nothing to embed or extract)"
        ),
    ]


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
    click.echo(
        f"token {issued.info.id} ({visible(name)}); store it now: it cannot be shown again",
        err=True,
    )


@token_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="print the tokens as a JSON list")
@pass_state
def token_list(state: _State, as_json: bool) -> None:
    """List tokens (id, name, scopes, last use; never the token itself)."""
    from recalld.tokens import TokenInfo, TokenRegistry

    tokens: list[TokenInfo]
    if state.no_database_yet():
        # No token is there, and no database is created to say so: `token list` on a
        # mistyped --db created an empty database without a word (pass a67).
        click.echo(
            f"no database at {visible(str(state.settings.db))}: nothing was created", err=True
        )
        tokens = []
    else:
        with TokenRegistry.open(state.settings) as registry:
            tokens = registry.list()
    if as_json:
        _print_json(tokens)
        return
    from rich import box
    from rich.table import Table
    from rich.text import Text

    # The id is what `token revoke` takes: never cut (the other columns fold).
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("id", no_wrap=True, min_width=16)
    for column in ("name", "scopes", "created", "last used", "revoked"):
        table.add_column(column, overflow="fold")
    for token in tokens:
        table.add_row(
            token.id,
            Text(visible(token.name)),  # a name is text: "[/x]" in it is not rich markup
            "\n".join(f"{name}:{access}" for name, access in token.scopes.items()),
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

    if state.no_database_yet():
        revoked = False  # no token is there, and no database is created to say so (e66)
    else:
        with TokenRegistry.open(state.settings) as registry:
            revoked = registry.revoke(token_id)
    if as_json:
        _print_json({"revoked": revoked})
    else:
        state.console.print(
            "revoked" if revoked else f"no active token {token_id}", highlight=False, markup=False
        )
    if not revoked:
        sys.exit(1)


@click.command("worker")
@click.option("--until-idle", is_flag=True, help="exit once no job is runnable (scripts, tests)")
@click.option(
    "--batch-size",
    type=click.IntRange(1, 10_000),
    help="jobs claimed per batch [default: RECALLD_WORKER_BATCH_SIZE, 64]",
)
@click.option(
    "--retry-failed",
    is_flag=True,
    help="first queue again the memories whose embedding or graph extraction failed for good",
)
@click.option("--json", "as_json", is_flag=True, help="print what was done as JSON at the end")
@pass_state
def worker_command(
    state: _State, until_idle: bool, batch_size: int | None, retry_failed: bool, as_json: bool
) -> None:
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
        _schedule_only(service, until_idle, reminders, as_json)
        return
    worker = service.new_worker()
    if retry_failed:
        worker.backfill(retry_failed=True)
    bar = progress_bar("embedding and extracting")
    with bar:
        step = _WorkerProgress(service, worker, bar)
        try:
            with _stopped_by_sigterm(worker) as stopping:
                if until_idle:
                    report = worker.run_until_idle(on_step=step, stop=stopping.is_set)
                else:
                    worker.run_forever(on_step=step)
                    report = worker.report
        except KeyboardInterrupt:
            report = worker.report
    if worker.stopped_by is not None:
        # Exit 1: a supervisor starting it again opens the file there now.
        raise worker.stopped_by
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
        click.echo(
            f"worker {worker.id}: embedded {report.processed}, extracted {report.extracted},"
            f" failed {report.failed_for_good} (retried {report.failed_attempts}),"
            f" reminders fired {reminders}",
            err=True,
        )


@contextmanager
def _stopped_by_sigterm(worker: Worker) -> Iterator[threading.Event]:
    """SIGTERM (a service stop, ``docker stop``, ``kill``) ends the worker after its
    batch, as Ctrl-C's report does: killed outright, its batch's jobs stayed leased (each
    an attempt used, run again a lease later), its heartbeat said it was alive (a worker
    of another model waited for it) and no report was printed. The event is set once
    asked. Only the main thread can take a signal; elsewhere nothing changes."""
    stopping = threading.Event()
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGTERM) is None  # installed outside Python: kept
    ):
        yield stopping
        return

    def stop(number: int, frame: object) -> None:
        stopping.set()
        worker.stop_soon()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield stopping
    finally:
        signal.signal(signal.SIGTERM, previous)


class _WorkerProgress:
    """Follows a worker on a progress bar: jobs done of the jobs pending when it started
    (including what its backfill queued after a model change), growing if more arrive."""

    def __init__(self, service: MemoryService, worker: Worker, bar: Any) -> None:
        self._service = service
        self._worker = worker
        self._bar = bar
        self._task: Any = None
        self._total = 0

    def _pending(self) -> int:
        store = self._service.store
        pending = 0
        embedder = self._service.embedder
        if embedder is not None:
            pending += store.semantic.pending_jobs(embedder.name)
        if self._service.indexing.extractor is not None:
            jobs = store.graph.counts(store.namespaces(), 0).jobs_by_state
            pending += jobs.get("queued", 0) + jobs.get("running", 0)
        return pending

    def __call__(self, report: WorkerReport) -> None:
        done = report.processed + report.extracted + report.failed_for_good
        if self._task is None:
            self._total = done + self._pending()
            self._task = self._bar.add_task("work", total=max(self._total, 1))
        self._total = max(self._total, done)
        self._bar.update(self._task, completed=done, total=max(self._total, 1))


def _schedule_only(service: MemoryService, until_idle: bool, reminders: int, as_json: bool) -> None:
    """``recalld worker`` with no embedder nor extractor: only the intention scheduler runs."""
    scheduler = service.intentions.scheduler
    if not until_idle:
        gave_up = threading.Event() if scheduler is None else scheduler.gave_up
        try:
            # The scheduler thread does the work; this thread waits for ^C, or for the
            # scheduler to give up on a database replaced under it (then exit 1).
            while not gave_up.wait(3600):
                pass
        except KeyboardInterrupt:
            pass
        if scheduler is not None and scheduler.stopped_by is not None:
            raise scheduler.stopped_by
    result = {"reminders": reminders, "processed": 0}
    if as_json:
        _print_json(result)
    else:
        click.echo(f"no embedder and no graph extractor: reminders fired {reminders}", err=True)


@click.command("status")
@click.option("--all-namespaces", is_flag=True, help="report every namespace (admin)")
@click.option("--json", "as_json", is_flag=True, help="print the status as JSON")
@pass_state
def status_command(state: _State, all_namespaces: bool, as_json: bool) -> None:
    """Indexing health: queue by state, embeddings per model, failures, workers, index."""
    # On a --db that does not exist: an empty database's health, and none is created.
    memory = state.memory(existing=True, reports_settings=True)
    result = memory.status(memory.namespaces() if all_namespaces else None)
    if as_json:
        _print_json(result)
        return
    from recalld.adapters.cli_output import show_status

    show_status(state.console, result)


server_commands: list[click.Command] = [
    mcp_command,
    serve_command,
    token_group,
    worker_command,
    status_command,
]
