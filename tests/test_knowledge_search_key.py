"""``search_nodes`` matches names on their key without the key's trimming of the query's
punctuation (adversarial pass a62)."""

from __future__ import annotations

from recalld.graph.names import search_key
from recalld.service import MemoryService
from tests.knowledge_support import any_service as any_service  # the fixture

NAMES = ("Kenneth", ".NET", "Sam Jones", "Mary_Smith", "Yahoo!", "Elixir")


def _found(service: MemoryService, query: str) -> list[str]:
    return sorted(entity.name for entity in service.knowledge.search_nodes(query).entities)


def test_search_nodes_does_not_drop_the_querys_punctuation(any_service: MemoryService) -> None:
    any_service.knowledge.create_entities(
        [{"name": name, "entityType": "thing", "observations": []} for name in NAMES]
    )
    # The key of ".NET" is "net", of "'s" is "s", of "(x)" is "x": matched as keys they
    # found every name holding those letters, which the reference never returns.
    assert _found(any_service, ".NET") == [".NET"]
    assert _found(any_service, ".net") == [".NET"]
    assert _found(any_service, "'s") == []
    assert _found(any_service, "(x)") == []
    assert _found(any_service, "yahoo!") == ["Yahoo!"]
    # What the key is for still holds: "_" is a space, and any case.
    assert _found(any_service, "mary smith") == ["Mary_Smith"]
    assert _found(any_service, "SAM_JONES") == ["Sam Jones"]
    assert _found(any_service, "ken") == ["Kenneth"]


def test_the_search_key_folds_case_width_and_underscores_only() -> None:
    assert search_key("John_Smith") == "john smith"
    assert search_key("\uff2a\uff2f\uff28\uff2e\u00a0Smith") == "john smith"
    assert search_key("a  b") == "a  b"
    assert search_key(".NET") == ".net"
    assert search_key("Kate's") == "kate's"
    assert search_key(" spaced ") == " spaced "
