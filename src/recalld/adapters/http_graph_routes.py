"""REST routes of the knowledge graph (issue 12), read-only, under ``/v1/graph``.

- ``GET /v1/graph/entities?query&type&limit&cursor`` — entities by name, a page at a time;
- ``GET /v1/graph/entities/{name}`` — one entity with its aliases, observations,
  mentions and relations (404 when unknown);
- ``GET /v1/graph/observations?entity&limit&cursor`` — one entity's observations, a page
  at a time (the entity shows its first);
- ``GET /v1/graph/relations?entity&predicate&limit&cursor`` — relations;
- ``GET /v1/graph/neighbourhood?entity&depth`` — what is within ``depth`` hops;
- ``GET /v1/graph/mentions?memory`` — the entities one memory mentions.

Each works in the namespace of the ``X-Recalld-Namespace`` header, checked
against the caller's token like every ``/v1`` route.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from recalld._schema import NAME_PATTERN, NO_NUL_PATTERN, count_default
from recalld.adapters.http_models import StrictJSONRoute, error_responses
from recalld.adapters.http_paths import VERBATIM
from recalld.adapters.http_routes import COMMON_ERRORS, ReadNamespace, Service
from recalld.graph.models import (
    EntityDetail,
    EntityPage,
    MemoryEntities,
    Neighbourhood,
    ObservationPage,
    RelationPage,
)
from recalld.graph.types import ENTITY_NAME_MAX_CHARS, RELATION_PREDICATE_MAX_CHARS
from recalld.graph_browser import CURSOR_MAX_CHARS

__all__ = ["graph_router"]

graph_router = APIRouter(
    prefix="/v1/graph",
    tags=["knowledge graph"],
    route_class=StrictJSONRoute,
    responses=COMMON_ERRORS,
)
EntityName = Annotated[
    str, Path(min_length=1, max_length=ENTITY_NAME_MAX_CHARS, pattern=NAME_PATTERN)
]
Cursor = Annotated[
    str | None,
    Query(max_length=CURSOR_MAX_CHARS, description="next_cursor of the last page"),
]


@graph_router.get("/entities", response_model=EntityPage)
def list_entities(
    service: Service,
    namespace: ReadNamespace,
    query: Annotated[
        str | None,
        Query(
            max_length=200,
            description="a fragment of the name or type",
            # Published, not enforced here: the library refuses a NUL naming the field.
            json_schema_extra={"pattern": NO_NUL_PATTERN},
        ),
    ] = None,
    type: Annotated[str | None, Query(max_length=100, description="only this type")] = None,
    limit: Annotated[
        int | None,
        Query(
            ge=1,
            description="at most RECALLD_MAX_LIMIT (1000); 50, or the cap when lower, if left out",
            json_schema_extra=count_default(50),
        ),
    ] = None,
    cursor: Cursor = None,
) -> EntityPage:
    """Entities by name (their normalised key), with how many memories mention each."""
    return service.graph.entities(
        query=query, type=type, limit=limit, cursor=cursor, namespace=namespace
    )


# ``:verbatim`` (the rest of the path, newlines included): a name may hold a slash (a tag
# such as "work/urgent"), sent as %2F.
@graph_router.get(
    f"/entities/{{name:{VERBATIM}}}", response_model=EntityDetail, responses=error_responses(404)
)
def get_entity(name: EntityName, service: Service, namespace: ReadNamespace) -> EntityDetail:
    """One entity with its other spellings, observations, newest mentions and relations."""
    return service.graph.entity(name, namespace=namespace)


@graph_router.get("/observations", response_model=ObservationPage, responses=error_responses(404))
def list_observations(
    service: Service,
    namespace: ReadNamespace,
    entity: Annotated[
        str,
        Query(
            min_length=1,
            max_length=ENTITY_NAME_MAX_CHARS,
            pattern=NAME_PATTERN,
            description="the entity whose observations to list",
        ),
    ],
    limit: Annotated[
        int | None,
        Query(
            ge=1,
            description="at most RECALLD_MAX_LIMIT (1000); 100, or the cap when lower, if left out",
            json_schema_extra=count_default(100),
        ),
    ] = None,
    cursor: Cursor = None,
) -> ObservationPage:
    """One entity's observations, oldest first (its detail shows only the first of them;
    its ``observations_cursor`` continues here)."""
    return service.graph.observations(entity, limit=limit, cursor=cursor, namespace=namespace)


@graph_router.get("/relations", response_model=RelationPage, responses=error_responses(404))
def list_relations(
    service: Service,
    namespace: ReadNamespace,
    entity: Annotated[
        str | None,
        Query(
            max_length=ENTITY_NAME_MAX_CHARS,
            pattern=NAME_PATTERN,
            description="only relations touching it",
        ),
    ] = None,
    predicate: Annotated[
        str | None,
        Query(
            max_length=RELATION_PREDICATE_MAX_CHARS,
            pattern=NAME_PATTERN,
            description="only this predicate",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        Query(
            ge=1,
            description="at most RECALLD_MAX_LIMIT (1000); 100, or the cap when lower, if left out",
            json_schema_extra=count_default(100),
        ),
    ] = None,
    cursor: Cursor = None,
) -> RelationPage:
    """Relations in the order they were first found."""
    return service.graph.relations(
        entity=entity, predicate=predicate, limit=limit, cursor=cursor, namespace=namespace
    )


@graph_router.get("/neighbourhood", response_model=Neighbourhood, responses=error_responses(404))
def neighbourhood(
    service: Service,
    namespace: ReadNamespace,
    entity: Annotated[
        str, Query(min_length=1, max_length=ENTITY_NAME_MAX_CHARS, pattern=NAME_PATTERN)
    ],
    depth: Annotated[int, Query(ge=1, le=3, description="relation hops (1-3)")] = 1,
) -> Neighbourhood:
    """The entities and relations within ``depth`` hops, and the most co-mentioned entities."""
    return service.graph.neighbourhood(entity, depth=depth, namespace=namespace)


@graph_router.get("/mentions", response_model=MemoryEntities, responses=error_responses(404))
def memory_mentions(
    service: Service,
    namespace: ReadNamespace,
    memory: Annotated[str, Query(min_length=1, max_length=64, description="a memory id")],
) -> MemoryEntities:
    """The entities memory ``memory`` mentions, most mentioned first (404 if it is not here)."""
    return service.graph.entities_of_memory(memory, namespace=namespace)
