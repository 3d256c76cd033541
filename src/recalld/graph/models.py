"""The graph as the library, the REST API, the CLI and the native MCP tools return it."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

__all__ = [
    "CoMention",
    "EntityDetail",
    "EntityPage",
    "EntityView",
    "MemoryEntities",
    "MentionView",
    "MentionedEntity",
    "Neighbourhood",
    "ObservationView",
    "RelationPage",
    "RelationView",
]


class EntityView(BaseModel):
    """One entity: its name as first written, its matching key, type and counts."""

    name: str
    key: str = Field(description="the normalised name two spellings are matched on")
    type: str
    declared: bool = Field(description="created through the knowledge tools (kept unmentioned)")
    mentions: int = Field(description="memories that mention it")
    observations: int = Field(description="observation memories attached to it")
    created_at: datetime
    updated_at: datetime


class RelationView(BaseModel):
    """A directed relation between two entities, the memories that state it and when."""

    subject: str
    predicate: str
    object: str
    declared: bool
    sources: int = Field(description="memories it was extracted from")
    at: datetime | None = Field(default=None, description="the latest source memory's time")


class MentionView(BaseModel):
    """A memory that mentions an entity."""

    memory_id: str
    surface: str = Field(description="how the memory spells the entity")
    count: int
    at: datetime | None = None
    prompt_line: str


class ObservationView(BaseModel):
    """An observation memory attached to an entity."""

    memory_id: str
    content: str


class CoMention(BaseModel):
    """An entity mentioned in the same memories as another, and in how many."""

    name: str
    type: str
    memories: int


class EntityDetail(BaseModel):
    """An entity with its aliases, observations, mentions and relations."""

    entity: EntityView
    aliases: list[str] = Field(description="other spellings found in its memories")
    observations: list[ObservationView]
    mentions: list[MentionView]
    relations: list[RelationView] = Field(
        description="its first relations, in creation order (at most graph_page_size)"
    )
    relations_cursor: str | None = Field(
        default=None,
        description="it has more relations than shown: pass this as cursor to the relations"
        " listing of this entity for the next ones",
    )
    observations_cursor: str | None = Field(
        default=None,
        description="it has more observations than shown: pass this as cursor to the"
        " observations listing of this entity for the next ones",
    )


class EntityPage(BaseModel):
    """One page of entities; pass ``next_cursor`` back for the next."""

    entities: list[EntityView]
    next_cursor: str | None = None


class ObservationPage(BaseModel):
    """One page of an entity's observations, oldest first; pass ``next_cursor`` back (with
    the same entity) for the next."""

    entity: str = Field(description="the entity's name")
    observations: list[ObservationView]
    next_cursor: str | None = None


class RelationPage(BaseModel):
    """One page of relations; pass ``next_cursor`` back for the next."""

    relations: list[RelationView]
    next_cursor: str | None = None


class Neighbourhood(BaseModel):
    """The entities and relations within ``depth`` relation hops of an entity."""

    entity: EntityView
    depth: int
    entities: list[EntityView]
    relations: list[RelationView]
    co_mentioned: list[CoMention] = Field(
        description="entities sharing memories with it, most shared first"
    )
    truncated: bool = Field(description="the neighbourhood was cut at the size limit")


class MentionedEntity(BaseModel):
    """An entity a memory mentions, how the memory spells it and how often."""

    entity: EntityView
    surface: str = Field(description="how the memory spells the entity")
    count: int


class MemoryEntities(BaseModel):
    """The entities one memory mentions, most mentioned first."""

    memory_id: str
    entities: list[MentionedEntity]
