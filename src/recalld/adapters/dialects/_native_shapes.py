"""What the native tools answer, as their published output schemas say (each an object
with at least these fields: compact results add what is set). ``_Open`` keeps its
name: it is the published schemas' ``$defs`` key."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = [
    "ConversationOut",
    "CoreOut",
    "EntitiesOut",
    "ExplanationOut",
    "HitOut",
    "LineOut",
    "MemoryOut",
    "NeighbourhoodOut",
    "PageOut",
    "RecallOut",
    "ReceiptOut",
    "StatsOut",
]


class _Open(BaseModel):
    """An object with at least these fields (compact results add what is set)."""

    model_config = ConfigDict(extra="allow")


class HitOut(_Open):
    id: str
    score: float
    prompt_line: str


class RecallOut(BaseModel):
    hits: list[HitOut]
    content_left_out: int | None = None


class MemoryOut(_Open):
    id: str
    content: str


class LineOut(_Open):
    id: str
    prompt_line: str


class PageOut(BaseModel):
    memories: list[LineOut]
    next_cursor: str | None = None
    content_left_out: int | None = None


class ReceiptOut(_Open):
    id: str
    status: str


class CoreOut(_Open):
    target: str | None = None


class ConversationOut(_Open):
    conversation: str


class ExplanationOut(_Open):
    memory_id: str
    stage: str
    reason: str


class EntitiesOut(BaseModel):
    entities: list[_Open]
    next_cursor: str | None = None


class NeighbourhoodOut(_Open):
    entity: _Open


class StatsOut(_Open):
    count: int
