"""Human output of the ``recalld`` commands: rich tables that read well in 80 columns.

Content wraps instead of being squeezed: a memory is one table cell holding
its text and, under it, a dim line with its id, time, kind and tags, so even
a narrow terminal shows whole words and whole ids (which commands such as
``get`` and ``forget`` take). Values are rendered for people (tags joined,
places as coordinates, sizes in MB, times without microseconds), never as
Python reprs; ``--json`` prints the models themselves.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from recalld.adapters._cli_support import visible
from recalld.model import Hit, ImportReport, Memory, Receipt, Stats, Status

__all__ = [
    "describe_receipt",
    "format_bytes",
    "format_time",
    "memory_table",
    "show_counts",
    "show_hits",
    "show_import_report",
    "show_memory",
    "show_stats",
    "show_status",
]


def format_time(value: datetime | None) -> str:
    """A time for people: ISO 8601 to the minute, with its offset."""
    if value is None:
        return ""
    text = value.isoformat(timespec="minutes")
    return text.replace("+00:00", "Z")


def format_bytes(value: int | None) -> str:
    """A size for people (``4.2 MB``)."""
    if value is None:
        return "not shown"
    size = float(value)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"  # pragma: no cover - the loop returns


def _memory_cell(memory: Memory) -> Text:
    cell = Text()
    if memory.speaker:
        cell.append(f"{visible(memory.speaker)}: ", style="bold")
    if memory.title:
        cell.append(visible(memory.title), style="bold")
        cell.append(": ")
    cell.append(visible(memory.content))
    details = [memory.id, format_time(memory.at or memory.created_at)]
    details.append(memory.kind if memory.category is None else f"{memory.kind}/{memory.category}")
    if memory.key:
        details.append(f"key {memory.key}")
    if memory.tags:
        details.append(" ".join(f"#{tag}" for tag in memory.tags))
    cell.append("\n" + visible(" · ".join(details)), style="dim")
    return cell


def memory_table(memories: Sequence[Memory], scores: Sequence[float] | None = None) -> Table:
    """Memories as a table: a score column for hits, then each memory's cell."""
    table = Table(box=box.SIMPLE_HEAD, show_lines=True, pad_edge=False)
    if scores is not None:
        table.add_column("score", justify="right", no_wrap=True, style="cyan")
    table.add_column("memory", overflow="fold", ratio=1)
    for index, memory in enumerate(memories):
        row: list[Any] = [] if scores is None else [f"{scores[index]:.3f}"]
        row.append(_memory_cell(memory))
        table.add_row(*row)
    return table


def show_hits(console: Console, hits: Sequence[Hit]) -> None:
    """Print search or recall hits (or say there are none)."""
    if not hits:
        console.print("no memories match")
        return
    console.print(memory_table([hit.memory for hit in hits], [hit.score for hit in hits]))


def _value(name: str, value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def show_memory(console: Console, memory: Memory) -> None:
    """Print every field a memory has, one per row, long values wrapped."""
    table = Table(box=box.SIMPLE, show_header=False, pad_edge=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold", ratio=1)
    for name in type(memory).model_fields:
        value = getattr(memory, name)
        if value in (None, [], {}, ""):
            continue
        if name == "place":
            place = memory.place
            assert place is not None
            shown = f"{place.lat:.6f}, {place.lon:.6f} (geohash {place.geohash})"
            if place.name:
                shown = f"{place.name}: {shown}"
            table.add_row(name, Text(visible(shown)))
        else:
            table.add_row(name.replace("_", " "), Text(visible(_value(name, value))))
    console.print(table)


def describe_receipt(receipt: Receipt) -> str:
    """One line saying what a write did."""
    if receipt.status == "duplicate":
        return (
            f"already stored as {receipt.id} (seq {receipt.seq}): the same text is there,"
            " nothing was written"
        )
    line = f"{receipt.status} {receipt.id} (seq {receipt.seq})"
    if receipt.scrub == "pending":
        line += "; scrubbing the old value from the files is pending"
    return line


def show_counts(console: Console, title: str, counts: Mapping[str, int]) -> None:
    """A small two-column table of counts (nothing when empty)."""
    if not counts:
        return
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
    table.add_column(title.split(" ")[-1], overflow="fold")
    table.add_column("count", justify="right")
    for name, count in counts.items():
        table.add_row(Text(visible(name)), str(count))
    console.print(table)


def _facts(console: Console, rows: Iterable[tuple[str, str]]) -> None:
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold", ratio=1)
    for name, value in rows:
        table.add_row(name, Text(visible(value)))
    console.print(table)


def show_stats(console: Console, stats: Stats) -> None:
    """Print counts, the search backend, the schema and the file's size."""
    _facts(
        console,
        [
            ("memories", str(stats.count)),
            ("search", f"{stats.search_backend} (full-text index: {'yes' if stats.fts else 'no'})"),
            ("schema version", str(stats.schema_version)),
            ("database size", format_bytes(stats.db_size_bytes)),
            ("expired, not yet purged", str(stats.expired_pending_purge)),
            ("scrubs pending", str(stats.pending_scrubs)),
        ],
    )
    show_counts(console, "by namespace", stats.by_namespace)
    show_counts(console, "by kind", stats.by_kind)
    show_counts(console, "by category", stats.by_category)


def show_status(console: Console, status: Status) -> None:
    """Print the indexing health: queue, embeddings, workers, failures, the graph."""
    queue = ", ".join(f"{state} {count}" for state, count in status.queue.items()) or "empty"
    rows = [
        ("namespaces", ", ".join(status.namespaces)),
        ("embedder", status.embedder or "none (keyword recall only)"),
        ("search", ", ".join(status.search_backends)),
        ("queue", queue),
        (
            "memories",
            ", ".join(f"{state} {n}" for state, n in status.memories_by_index_state.items())
            or "none",
        ),
        ("scrubs pending", str(status.pending_scrubs)),
    ]
    if status.index is not None:
        index = status.index
        rows.append(
            (
                "vector index",
                f"{index.vectors} vectors of {index.model}"
                + (f", loaded {index.loaded_vectors}" if index.loaded else ", not loaded")
                + (" (HNSW)" if index.ann else ""),
            )
        )
    if status.graph is not None:
        graph = status.graph
        rows.append(
            (
                "knowledge graph",
                f"{graph.state}: {graph.entities} entities, {graph.relations} relations"
                + (f" ({graph.extractor})" if graph.extractor else ""),
            )
        )
        if graph.warning:
            rows.append(("graph warning", graph.warning))
    _facts(console, rows)
    show_counts(console, "embeddings by model", status.embeddings)
    if status.workers:
        table = Table(title="workers", box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
        for column in ("worker", "state", "alive", "heartbeat", "done"):
            table.add_column(column, overflow="fold")
        for worker in status.workers:
            table.add_row(
                Text(visible(worker.id)),
                worker.state,
                "yes" if worker.alive else "no",
                f"{worker.heartbeat_age_seconds:.0f} s ago",
                str(worker.processed),
            )
        console.print(table)
    if status.failed_jobs:
        table = Table(
            title="failed jobs", box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False
        )
        for column in ("memory", "state", "tries", "error"):
            table.add_column(column, overflow="fold")
        for job in status.failed_jobs:
            table.add_row(
                Text(visible(job.memory_id)),
                job.state,
                str(job.attempts),
                Text(visible(job.error or "")),
            )
        console.print(table)
        if any(job.state == "failed" for job in status.failed_jobs):
            # Failed for good: nothing retries them unless asked (they are found by keyword).
            console.print(
                "failed for good: once the cause is fixed, `recalld worker --retry-failed`"
                " queues them again",
                highlight=False,
                markup=False,
            )


def show_import_report(console: Console, report: ImportReport, errors: Console) -> None:
    """The counts of an import on stdout; the refused lines or items it kept on stderr."""
    line = (
        f"{report.format}: created {report.created}, updated {report.updated},"
        f" unchanged {report.unchanged}, skipped {report.skipped}, errors {report.errors_total}"
    )
    console.print(escape(line), highlight=False)
    if report.details:
        details = ", ".join(f"{name} {count}" for name, count in report.details.items())
        console.print(escape(f"  {details}"), highlight=False)
    for error in report.errors:
        where = []
        if error.item is not None:
            where.append(f"item {error.item}")
        if error.line is not None:
            where.append(f"line {error.line}")
        errors.print(escape(f"{', '.join(where) or 'input'}: {error.error}"), highlight=False)
    if report.errors_total > len(report.errors):
        left = report.errors_total - len(report.errors)
        errors.print(f"... and {left} more refused (the first {len(report.errors)} are listed)")
