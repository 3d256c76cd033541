"""The knowledge graph's shapes, as the MCP reference memory server has them
(:mod:`recalld.knowledge` writes and reads them; :mod:`recalld.knowledge_import` imports
the reference's ``memory.jsonl`` into them)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from recalld.model_import import RefusalLog

__all__ = [
    "AddedObservations",
    "KnowledgeEntity",
    "KnowledgeGraphPage",
    "KnowledgeImportReport",
    "KnowledgeRelation",
    "ObservationAddition",
    "ObservationDeletion",
    "RemovalReport",
]


class KnowledgeEntity(BaseModel):
    """An entity as the reference server shapes it."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str
    entity_type: str = Field(validation_alias="entityType", serialization_alias="entityType")
    observations: list[str] = Field(default_factory=list)


class KnowledgeRelation(BaseModel):
    """A relation as the reference server shapes it (``from``, ``to``, ``relationType``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    source: str = Field(validation_alias="from", serialization_alias="from")
    target: str = Field(validation_alias="to", serialization_alias="to")
    relation_type: str = Field(validation_alias="relationType", serialization_alias="relationType")


class ObservationAddition(BaseModel):
    """Observations to add to one entity."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    entity_name: str = Field(validation_alias="entityName", serialization_alias="entityName")
    contents: list[str]


class ObservationDeletion(BaseModel):
    """Observations to delete from one entity."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    entity_name: str = Field(validation_alias="entityName", serialization_alias="entityName")
    observations: list[str]


class AddedObservations(BaseModel):
    """What ``add_observations`` added to one entity."""

    model_config = ConfigDict(populate_by_name=True)

    entity_name: str = Field(validation_alias="entityName", serialization_alias="entityName")
    added_observations: list[str] = Field(
        validation_alias="addedObservations", serialization_alias="addedObservations"
    )


class KnowledgeGraphPage(BaseModel):
    """Entities and relations: those touching them (``search_nodes``, ``open_nodes``) or,
    on a page of ``read_graph``, those from them; paged reads say whether there is more."""

    model_config = ConfigDict(populate_by_name=True)

    entities: list[KnowledgeEntity]
    relations: list[KnowledgeRelation]
    next_cursor: str | None = Field(
        default=None, validation_alias="nextCursor", serialization_alias="nextCursor"
    )
    has_more: bool = Field(default=False, validation_alias="hasMore", serialization_alias="hasMore")


class RemovalReport(BaseModel):
    """What a delete did: the reference's ``success`` and ``message``, and the details."""

    model_config = ConfigDict(populate_by_name=True)

    success: bool = True
    message: str
    deleted: list[str] = Field(default_factory=list)
    not_found: list[str] = Field(
        default_factory=list, validation_alias="notFound", serialization_alias="notFound"
    )


class KnowledgeImportReport(RefusalLog):
    """What an import of a reference ``memory.jsonl`` did, line by line."""

    entities: int = 0
    observations: int = 0
    relations: int = 0
    unchanged: int = 0
