"""The knowledge dialect: the MCP reference memory server's nine tools, on recalld's graph.

Tool names and input schemas are those of ``@modelcontextprotocol/server-memory``
(``create_entities``, ``create_relations``, ``add_observations``,
``delete_entities``, ``delete_observations``, ``delete_relations``,
``read_graph``, ``search_nodes``, ``open_nodes``), so a client switches by
changing one command line; ``read_graph`` adds an optional ``limit`` and
``cursor`` (its answer says ``hasMore`` and gives ``nextCursor``). Results
have the reference's structured shapes (deletes add ``deleted`` and
``notFound`` beside ``success`` and ``message``). The semantics are
:mod:`recalld.knowledge`'s: observations are memories, found by every dialect.
The reference's resource ``memory://knowledge-graph`` is ``read_graph``'s first page,
watched for changes.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field

from recalld.adapters.dialects.base import Dialect, ResourceSpec, ToolSpec, state_of
from recalld.adapters.dialects.failures import ToolCall, ToolFailure, Wording
from recalld.knowledge import (
    AddedObservations,
    KnowledgeEntity,
    KnowledgeGraphPage,
    KnowledgeRelation,
    RemovalReport,
)
from recalld.service import MemoryService

__all__ = ["DIALECT"]


class EntityInput(BaseModel):
    """An entity to create."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(description="The entity's name (its identifier)")
    entity_type: str = Field(
        validation_alias="entityType",
        serialization_alias="entityType",
        description="What kind of thing it is, e.g. person, organization, event",
    )
    observations: list[str] = Field(description="Facts about the entity, one per string")


class RelationInput(BaseModel):
    """A directed relation between two entities."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    source: str = Field(
        validation_alias="from",
        serialization_alias="from",
        description="The entity the relation starts at",
    )
    target: str = Field(
        validation_alias="to", serialization_alias="to", description="The entity it points to"
    )
    relation_type: str = Field(
        validation_alias="relationType",
        serialization_alias="relationType",
        description="The relation in active voice, e.g. works_at",
    )


class ObservationsInput(BaseModel):
    """Observations to add to one entity."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    entity_name: str = Field(
        validation_alias="entityName",
        serialization_alias="entityName",
        description="The entity to add them to",
    )
    contents: list[str] = Field(description="The observations to add")


class DeletionInput(BaseModel):
    """Observations to delete from one entity."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    entity_name: str = Field(
        validation_alias="entityName",
        serialization_alias="entityName",
        description="The entity that holds them",
    )
    observations: list[str] = Field(description="The observations to delete, exactly as stored")


def _error(failure: ToolFailure, _call: ToolCall) -> CallToolResult:
    """The reference server's failure: the error's message as text, with the error flag."""
    return CallToolResult(content=[TextContent(type="text", text=failure.text())], is_error=True)


class EntitiesOut(BaseModel):
    """``create_entities``' answer: the entities created."""

    entities: list[KnowledgeEntity]


class RelationsOut(BaseModel):
    """``create_relations``' answer: the relations that were new."""

    relations: list[KnowledgeRelation]


class ResultsOut(BaseModel):
    """``add_observations``' answer: what was added to each entity."""

    results: list[AddedObservations]


class GraphOut(BaseModel):
    """``search_nodes``' and ``open_nodes``' answer: entities, relations touching them."""

    model_config = ConfigDict(populate_by_name=True)

    entities: list[KnowledgeEntity]
    relations: list[KnowledgeRelation]
    has_more: bool = Field(default=False, validation_alias="hasMore", serialization_alias="hasMore")


def _answer(structured: dict[str, Any], shown: Any) -> CallToolResult:
    """The reference server's answer: ``shown`` as JSON indented by two (its
    ``JSON.stringify(result, null, 2)``) and ``structured`` as the structured content."""
    text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False, indent=2)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def _items(key: str, items: list[Any]) -> CallToolResult:
    # The reference shows the created list itself as text, structured under ``key``.
    dumped = [item.model_dump(by_alias=True) for item in items]
    return _answer({key: dumped}, dumped)


def _graph(page: KnowledgeGraphPage, paged: bool) -> CallToolResult:
    result = page.model_dump(by_alias=True)
    if not paged:
        result.pop("nextCursor", None)
    return _answer(result, result)


def _removal(report: RemovalReport) -> CallToolResult:
    # The reference's text is the bare message; the details are structured content.
    return _answer(report.model_dump(by_alias=True), report.message)


def create_entities(
    ctx: Context,
    entities: Annotated[list[EntityInput], Field(description="The entities to create")],
) -> Annotated[CallToolResult, EntitiesOut]:
    created = state_of(ctx).service.knowledge.create_entities(
        [entity.model_dump(by_alias=True) for entity in entities]
    )
    return _items("entities", list(created))


def create_relations(
    ctx: Context,
    relations: Annotated[
        list[RelationInput], Field(description="The relations to create, in active voice")
    ],
) -> Annotated[CallToolResult, RelationsOut]:
    created = state_of(ctx).service.knowledge.create_relations(
        [relation.model_dump(by_alias=True) for relation in relations]
    )
    return _items("relations", list(created))


def add_observations(
    ctx: Context,
    observations: Annotated[
        list[ObservationsInput], Field(description="For each entity, the observations to add")
    ],
) -> Annotated[CallToolResult, ResultsOut]:
    results = state_of(ctx).service.knowledge.add_observations(
        [item.model_dump(by_alias=True) for item in observations]
    )
    return _items("results", list(results))


def delete_entities(
    ctx: Context,
    entityNames: Annotated[list[str], Field(description="Names of the entities to delete")],  # noqa: N803 - the reference's argument name
) -> Annotated[CallToolResult, RemovalReport]:
    return _removal(state_of(ctx).service.knowledge.delete_entities(entityNames))


def delete_observations(
    ctx: Context,
    deletions: Annotated[
        list[DeletionInput], Field(description="For each entity, the observations to delete")
    ],
) -> Annotated[CallToolResult, RemovalReport]:
    report = state_of(ctx).service.knowledge.delete_observations(
        [item.model_dump(by_alias=True) for item in deletions]
    )
    return _removal(report)


def delete_relations(
    ctx: Context,
    relations: Annotated[list[RelationInput], Field(description="The relations to delete")],
) -> Annotated[CallToolResult, RemovalReport]:
    report = state_of(ctx).service.knowledge.delete_relations(
        [relation.model_dump(by_alias=True) for relation in relations]
    )
    return _removal(report)


def read_graph(
    ctx: Context,
    limit: Annotated[
        int | None, Field(ge=1, le=1000, description="Entities per page (default 100)")
    ] = None,
    cursor: Annotated[
        str | None, Field(description="nextCursor of the previous page, to read on")
    ] = None,
) -> Annotated[CallToolResult, KnowledgeGraphPage]:
    page = state_of(ctx).service.knowledge.read_graph(limit=limit, cursor=cursor)
    return _graph(page, paged=True)


def search_nodes(
    ctx: Context,
    query: Annotated[
        str, Field(description="Text to find in entity names, types and observations")
    ],
) -> Annotated[CallToolResult, GraphOut]:
    return _graph(state_of(ctx).service.knowledge.search_nodes(query), paged=False)


def open_nodes(
    ctx: Context,
    names: Annotated[list[str], Field(description="Names of the entities to fetch")],
) -> Annotated[CallToolResult, GraphOut]:
    return _graph(state_of(ctx).service.knowledge.open_nodes(names), paged=False)


GRAPH_URI = "memory://knowledge-graph"


def _graph_text(service: MemoryService) -> str:
    # The reference's text (its graph as JSON indented by two), of read_graph's first page:
    # the whole graph of a large store is megabytes, and nextCursor reads on.
    page = service.knowledge.read_graph().model_dump(by_alias=True)
    return json.dumps(page, ensure_ascii=False, indent=2)


def _graph_version(service: MemoryService) -> int:
    return service.knowledge.version()


GRAPH_RESOURCE = ResourceSpec(
    uri=GRAPH_URI,
    name="knowledge-graph",
    title="Knowledge Graph",
    description=(
        "The knowledge graph as read_graph returns it without arguments: its first page of "
        "entities with their observations and the relations from them (hasMore and "
        "nextCursor say when read_graph has more). Subscribe to be told when it changes, "
        "from this or any other process."
    ),
    read=_graph_text,
    version=_graph_version,
    mime_type="application/json",
)


DIALECT = Dialect(
    name="knowledge",
    wording=Wording(shape=_error),
    resources=(GRAPH_RESOURCE,),
    tools=(
        ToolSpec(
            "create_entities",
            create_entities,
            "Add entities (people, organisations, events, ...) to the knowledge graph, each with "
            "a type and its observations. Names already in the graph are skipped. Returns the "
            "entities created. Observations become memories, found by every recall.",
            title="Create Entities",
        ),
        ToolSpec(
            "create_relations",
            create_relations,
            "Connect existing entities with directed relations, phrased in active voice "
            "(works_at, lives_in). Returns the relations that were new.",
            title="Create Relations",
        ),
        ToolSpec(
            "add_observations",
            add_observations,
            "Add observations (one fact each) to existing entities. Returns what was added to "
            "each entity; observations it already had are not added twice.",
            title="Add Observations",
        ),
        ToolSpec(
            "delete_entities",
            delete_entities,
            "Delete entities together with their observations and relations. Names that are "
            "not in the graph are listed in the answer.",
            destructive=True,
            idempotent=True,
            title="Delete Entities",
        ),
        ToolSpec(
            "delete_observations",
            delete_observations,
            "Delete given observations from entities. Anything not found is listed in the answer.",
            destructive=True,
            idempotent=True,
            title="Delete Observations",
        ),
        ToolSpec(
            "delete_relations",
            delete_relations,
            "Delete given relations. Relations not found are listed in the answer.",
            destructive=True,
            idempotent=True,
            title="Delete Relations",
        ),
        ToolSpec(
            "read_graph",
            read_graph,
            "Read the knowledge graph one page at a time: entities by name with their "
            "observations, and the relations from them. When hasMore is true, pass nextCursor "
            "back as cursor for the next page.",
            read_only=True,
            title="Read Graph",
        ),
        ToolSpec(
            "search_nodes",
            search_nodes,
            "Find entities whose name, type or observations contain the query (in any case), "
            "with every relation that starts or ends at one of them.",
            read_only=True,
            title="Search Nodes",
        ),
        ToolSpec(
            "open_nodes",
            open_nodes,
            "Fetch entities by name with their observations and every relation that starts "
            "or ends at one of them; unknown names are skipped.",
            read_only=True,
            title="Open Nodes",
        ),
    ),
)
