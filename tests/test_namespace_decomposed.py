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


# Review of pass b68: every other door to a namespace says the same, and no list of
# namespaces (a token's, the server's --namespaces) holds a form a call cannot send.
NOTE = ": it holds a combining mark (decomposed Unicode, NFD); send its composed form (NFC)"


@pytest.mark.parametrize("field", ["user_id", "agent_id"])
def test_a_decomposed_mem0_id_is_refused_naming_the_composed_form(field: str) -> None:
    from recalld.scoping import requested_namespace

    with pytest.raises(ValidationError) as refused:
        requested_namespace(None, **{field: DECOMPOSED})
    assert refused.value.field == field
    assert refused.value.message.endswith(NOTE)
    assert requested_namespace(None, **{field: COMPOSED}) == f"{field[:-3]}:{COMPOSED}"


def test_a_decomposed_default_namespace_setting_says_so(tmp_path: Path) -> None:
    from recalld.config import Settings
    from recalld.config_errors import InvalidSettingsError

    with pytest.raises(InvalidSettingsError, match=r"NFD\); send its composed form"):
        Settings(db=tmp_path / "m.db", namespace=DECOMPOSED)
    assert Settings(db=tmp_path / "m.db", namespace=COMPOSED).namespace == COMPOSED


def test_token_scopes_hold_only_the_form_a_call_can_send() -> None:
    from recalld.tokens import Caller, parse_scope

    with pytest.raises(ValidationError) as refused:
        parse_scope(f"{DECOMPOSED}:read")
    assert refused.value.message.endswith(NOTE)
    name, access = parse_scope(f"{COMPOSED}:read")
    caller = Caller(token_id="t", scopes={name: access})
    assert caller.can(COMPOSED, write=False)
    assert not caller.can(DECOMPOSED, write=False)


@pytest.mark.anyio
async def test_a_served_namespace_is_reached_composed_and_refused_decomposed(
    tmp_path: Path,
) -> None:
    # The server serves "café" (--namespaces): the composed form reaches it, the decomposed
    # one is refused as malformed (naming the fix), not as a namespace the server does not
    # serve, and the store holds no second spelling of the wall.
    from mcp import Client

    from recalld.adapters.mcp_server import build_server
    from recalld.config import Settings
    from recalld.service import MemoryService

    settings = Settings(db=tmp_path / "m.db", embedder="none", graph_extractor="none")
    server = build_server(lambda: MemoryService.open(settings), ["native"], namespaces=[COMPOSED])
    async with Client(server) as client:
        await structured(client, "remember", {"content": "x", "namespace": COMPOSED})
        refused = await call(client, "list", {"namespace": DECOMPOSED})
        assert refused.is_error
        assert NOTE in text(refused)
        listed = await structured(client, "list", {"namespace": COMPOSED})
        assert len(listed["memories"]) == 1
        assert (await structured(client, "stats", {"namespace": COMPOSED}))["count"] == 1
