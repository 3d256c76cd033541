"""REST says what an empty cursor is, as MCP does (adversarial pass b68): `?cursor=` was
"is not a cursor this listing returned"; it is never read as the first page, as a script
sending the last page's missing next_cursor as "" would page again for ever."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_http_an_empty_cursor_is_refused_naming_the_first_page(client: TestClient) -> None:
    client.post("/v1/memories", json={"content": "one"})
    answer = client.get("/v1/memories", params={"cursor": ""})
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["field"] == "cursor"
    assert error["message"] == (
        "is empty: leave cursor out (or null) for the first page; a page that"
        " gives no next cursor is the last"
    )
