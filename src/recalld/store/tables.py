"""The tables every store keeps, described neutrally, for copying a database between stores.

``recalld migrate`` (:mod:`recalld.moving`) reads each table from one store and
writes it into another through :class:`TableAccess`, which every store offers
as ``store.tables``. Values travel in engine types: instants as aware
datetimes, JSON as Python objects, booleans as ``bool``, vectors as float16
bytes, so each store converts only to and from its own column types.

Memories themselves are copied through the memory protocol (they get new
``seq`` numbers in the target); every column named here that refers to a
memory (``seq``), an entity or a relation is renumbered by the copier. A table
added by a later migration is one more :class:`Table` here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

__all__ = [
    "COPIED_TABLES",
    "GRAPH_LEDGERS",
    "Column",
    "ColumnKind",
    "GraphKind",
    "Table",
    "TableAccess",
    "table",
]

ColumnKind = Literal["text", "integer", "real", "boolean", "instant", "json", "blob", "vector"]
# The graph rows the migrate ledger (migration 27) records: kind -> (its table, the ledger).
GraphKind = Literal["entity", "relation"]
GRAPH_LEDGERS: dict[str, tuple[str, str]] = {
    "entity": ("graph_entities", "migrated_entity_rows"),
    "relation": ("graph_relations", "migrated_relation_rows"),
}


@dataclass(frozen=True)
class Column:
    """One column and the kind of value it holds."""

    name: str
    kind: ColumnKind


@dataclass(frozen=True)
class Table:
    """A table as copied: its columns, the key it is read in order of, and the columns
    that identify a row already copied (a second run skips those rows)."""

    name: str
    columns: tuple[Column, ...]
    order: tuple[str, ...]
    identity: tuple[str, ...]
    """Never NULL: they are compared with ``=``, so the table's key index finds them."""
    generated: str | None = None
    """A store-assigned id column: read, but never written (the target assigns its own)."""
    mutable: bool = False
    """Its rows change in place (a state, a count): a copy run again updates a present row
    that differs, rather than skipping it."""

    def column(self, name: str) -> Column:
        """The column called ``name``."""
        return next(column for column in self.columns if column.name == name)

    @property
    def written(self) -> tuple[Column, ...]:
        """The columns a copy writes (all but the generated id)."""
        return tuple(column for column in self.columns if column.name != self.generated)


def _columns(spec: str) -> tuple[Column, ...]:
    columns = []
    for part in spec.split():
        name, _, kind = part.partition(":")
        columns.append(Column(name, kind or "text"))  # type: ignore[arg-type]
    return tuple(columns)


def table(
    name: str,
    spec: str,
    *,
    order: Sequence[str],
    identity: Sequence[str],
    generated: str | None = None,
    mutable: bool = False,
) -> Table:
    """A :class:`Table` from a compact ``name:kind`` column list (kind defaults to text)."""
    return Table(name, _columns(spec), tuple(order), tuple(identity), generated, mutable)


# In copy order: what a row refers to is copied before it. The queue comes before the trigger
# history and the intentions (their last firing): a run again takes a firing the target's
# history knows, missing from its queue, for one the target delivered (recalld.moving), so
# an interrupted run must never leave a firing's history copied without its queued item.
COPIED_TABLES: tuple[Table, ...] = (
    table(
        "tokens",
        "id name token_hash scopes:json created_at:instant last_used_at:instant revoked_at:instant",
        order=["id"],
        identity=["id"],
    ),
    table(
        "memory_signals",
        "seq:integer channel features:blob",
        order=["seq", "channel"],
        identity=["seq", "channel"],
    ),
    table(
        "memory_biometrics",
        "seq:integer name value:real",
        order=["seq", "name"],
        identity=["seq", "name"],
    ),
    table(
        "vectors",
        "seq:integer model text_hash vector:vector",
        order=["seq", "model"],
        identity=["seq", "model"],
    ),
    table(
        "jobs",
        "id seq:integer kind model state attempts:integer run_after:instant lease_owner"
        " lease_until:instant last_error created_at:instant updated_at:instant"
        " completed_at:instant",
        order=["id"],
        identity=["id"],
        mutable=True,
    ),
    table(
        "core_memory",
        "namespace target entries:json version:integer updated_at:instant",
        order=["namespace", "target"],
        identity=["namespace", "target"],
    ),
    table(
        "pending_recollections",
        "id:integer namespace seq:integer score:real channels:json prompt_line"
        " fired_at:instant kind details:json",
        order=["id"],
        identity=["seq", "fired_at", "kind"],
        generated="id",
    ),
    table(
        "recollection_triggers",
        "seq:integer fired_at:instant score:real",
        order=["seq", "fired_at"],
        identity=["seq", "fired_at"],
    ),
    table(
        "intentions",
        "seq:integer namespace state repeat min_interval_seconds:real zone scheduled:boolean"
        " expires_at:instant next_due:instant last_fired_at:instant fire_count:integer"
        " created_at:instant updated_at:instant",
        order=["seq"],
        identity=["seq"],
        mutable=True,
    ),
    table(
        "intention_triggers",
        "seq:integer position:integer namespace type term low_lat:real high_lat:real"
        " low_lon:real high_lon:real spec:json",
        order=["seq", "position"],
        identity=["seq", "position"],
    ),
    table(
        "intention_streaks",
        "seq:integer position:integer count:integer last_at:instant",
        order=["seq", "position"],
        identity=["seq", "position"],
        mutable=True,
    ),
    table(
        "graph_entities",
        "id:integer namespace key name type declared:boolean created_at:instant updated_at:instant",
        order=["id"],
        identity=["namespace", "key"],
        generated="id",
    ),
    table(
        "graph_mentions",
        "entity_id:integer seq:integer surface type count:integer",
        order=["entity_id", "seq"],
        identity=["entity_id", "seq"],
    ),
    table(
        "graph_observations",
        "entity_id:integer seq:integer",
        order=["entity_id", "seq"],
        identity=["entity_id", "seq"],
    ),
    table(
        "graph_relations",
        "id:integer namespace subject_id:integer predicate object_id:integer"
        " declared:boolean created_at:instant",
        order=["id"],
        identity=["subject_id", "predicate", "object_id"],
        generated="id",
    ),
    table(
        "graph_relation_sources",
        "relation_id:integer seq:integer at:instant",
        order=["relation_id", "seq"],
        identity=["relation_id", "seq"],
    ),
    table(
        "graph_extracted",
        "seq:integer model text_hash extracted_at:instant",
        order=["seq"],
        identity=["seq"],
    ),
    # The entities the knowledge tools deleted (migration 30): a copy that left them out
    # would bring them back at the target's first rebuild.
    table(
        "graph_entity_tombstones",
        "namespace key_hash up_to_seq:integer",
        order=["namespace", "key_hash"],
        identity=["namespace", "key_hash"],
        mutable=True,
    ),
)


class TableAccess(Protocol):
    """Whole-table reads and idempotent writes, for copying between stores."""

    def copy_lock(self, waiting: Callable[[], None]) -> AbstractContextManager[None]:
        """Hold this database's copy lock for the block: one copy into a database at a
        time, from any process or machine (two at once would insert the same rows, and
        the second would fail on the first's). When another copy holds it, ``waiting``
        is called once, then the block waits for it. The lock goes with its holder: a
        process that dies (or a connection that drops) releases it."""
        ...

    def count(self, table: Table) -> int:
        """How many rows the table holds."""
        ...

    def read(self, table: Table, after: Sequence[Any] | None, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` rows in ``table.order``, after the row whose order values are
        ``after`` (from the start when None)."""
        ...

    def write(self, table: Table, rows: Sequence[dict[str, Any]]) -> int:
        """Insert the rows (written columns only) in one transaction, skipping any whose
        ``identity`` values are already present; returns how many were inserted."""
        ...

    def overwrite(self, table: Table, rows: Sequence[dict[str, Any]]) -> int:
        """Give each present row (by ``identity``) the other written columns' values, in one
        transaction; returns how many rows were updated."""
        ...

    def migrated(self, origin: str) -> list[tuple[int, str, str]]:
        """(seq, namespace, id) of each memory a migrate from ``origin`` wrote here (the
        ledger of :meth:`StoreTransaction.mark_migrated`)."""
        ...

    def migrated_core(self, origin: str) -> set[tuple[str, str]]:
        """(namespace, target) of each core memory row a migrate from ``origin`` wrote here."""
        ...

    def mark_core(self, origin: str, rows: Sequence[tuple[str, str]]) -> None:
        """Record that a migrate from ``origin`` wrote these (namespace, target) rows."""
        ...

    def migrated_graph(self, origin: str, kind: GraphKind) -> set[int]:
        """The ids of the entities (``kind`` "entity") or relations ("relation") a migrate
        from ``origin`` wrote here (the graph's ledger, migration 27)."""
        ...

    def mark_graph(self, origin: str, kind: GraphKind, ids: Sequence[int]) -> None:
        """Record that a migrate from ``origin`` wrote these entities or relations."""
        ...

    def delete_graph(self, kind: GraphKind, ids: Sequence[int], reason: str, now: datetime) -> int:
        """Delete these entities (with their mentions, observation links and relations) or
        relations (with their sources), recording a pending scrub (``reason``) in the same
        transaction; returns how many went."""
        ...

    def drop_orphans(self, reason: str, now: datetime) -> int:
        """Delete the undeclared graph relations no memory is a source of, then the
        undeclared entities nothing refers to (no mention, observation or relation):
        what the orphan triggers delete when a mention or source goes (a copy that leaves
        a memory's mentions out leaves its entities so). A deletion records a pending
        scrub (``reason``) in the same transaction; returns how many rows went."""
        ...

    def analyze(self) -> None:
        """Refresh the query planner's statistics after a bulk write (``ANALYZE``).

        Without them, a freshly filled PostgreSQL database plans vector queries
        as a scan of every vector (40 ms at 20k memories instead of 1.5 ms) until
        autovacuum gets to it.
        """
        ...
