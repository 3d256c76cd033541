"""A namespace typed with combining marks is refused saying so (adversarial pass b68):
"cafe" + U+0301 was refused as "got 'café'", which looks exactly like the composed
"café" that is accepted, leaving the caller nothing to fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld import _validate as check
from recalld.errors import ValidationError
from tests.adapters.mcp_support import call, in_process, structured, text

DECOMPOSED = "cafe\u0301"
COMPOSED = "caf\u00e9"


def test_a_decomposed_namespace_is_refused_naming_the_composed_form() -> None:
    with pytest.raises(ValidationError) as refused:
        check.namespace(DECOMPOSED)
    assert refused.value.field == "namespace"
    assert refused.value.message.endswith(
        ": it holds a combining mark (decomposed Unicode, NFD); send its composed form (NFC)"
    )
    assert check.namespace(COMPOSED) == COMPOSED


def test_a_namespace_that_is_wrong_anyway_gets_no_composition_advice() -> None:
    with pytest.raises(ValidationError) as refused:
        check.namespace("a b\u0301")
    assert "NFC" not in refused.value.message


@pytest.mark.anyio
async def test_mcp_remember_in_a_decomposed_namespace_stores_nothing(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        refused = await call(client, "remember", {"content": "x", "namespace": DECOMPOSED})
        assert refused.is_error
        assert "send its composed form (NFC)" in text(refused)
        assert (await structured(client, "list", {}))["memories"] == []
