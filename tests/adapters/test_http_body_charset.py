"""A JSON body that is not UTF-8 is refused saying UTF-8 is what is read.

A body sent with ``Content-Type: application/json; charset=latin-1`` was refused "is not
valid UTF-8": it named neither the charset the request declared nor what to send
instead. In-process (Starlette's test client on the app).
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from recalld.service import MemoryService


def test_http_a_latin1_body_is_refused_naming_the_charset_and_utf8(
    client: TestClient, service: MemoryService
) -> None:
    refused = client.post(
        "/v1/memories",
        content='{"content": "café"}'.encode("latin-1"),
        headers={"Content-Type": "application/json; charset=latin-1"},
    )
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == "body"
    assert "charset 'latin-1'" in error["message"]
    assert "UTF-8 only" in error["message"]
    assert service.stats().count == 0


def test_http_a_body_not_utf8_without_a_charset_says_what_is_read(client: TestClient) -> None:
    refused = client.post(
        "/v1/memories",
        content='{"content": "café"}'.encode("utf-16"),
        headers={"Content-Type": "application/json"},
    )
    assert refused.status_code == 422, refused.text
    message = refused.json()["error"]["message"]
    assert "read as UTF-8 only" in message
    assert "charset" not in message


def test_http_a_charset_on_a_utf8_body_is_still_read(client: TestClient) -> None:
    written = client.post(
        "/v1/memories",
        content='{"content": "café"}'.encode(),
        headers={"Content-Type": "application/json; charset=UTF-8"},
    )
    assert written.status_code == 200, written.text
