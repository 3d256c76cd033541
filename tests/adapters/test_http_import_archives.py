"""POST /v1/import of an archive (a chat export's zip as it was downloaded)."""

from __future__ import annotations

import gzip

import httpx


def test_http_import_of_an_archive_is_refused_naming_it(client: httpx.Client) -> None:
    # Adversarial pass e60: a gzipped export was imported line by line, each refused as
    # "not UTF-8 text"; the body is now refused whole, saying what it is.
    body = gzip.compress(b'{"content": "hello"}\n')
    response = client.post("/v1/import", content=body)
    assert response.status_code == 422
    assert "the upload is a gzip file, not the text inside it" in response.text
    assert "file" in response.text
    assert client.get("/v1/memories").json()["memories"] == []


def test_http_import_of_utf16_is_refused_once_naming_it(client: httpx.Client) -> None:
    # Adversarial pass a63: a UTF-16 body (a Windows editor's "Unicode") was split at its
    # 0x0a bytes and each piece refused: "line 2: is not JSON" for a file of two lines, a
    # third line that never was, and no word of the cause past the first.
    lines = '{"content": "héllo"}\n{"content": "second"}\n'
    for body in (lines.encode("utf-16"), b"\xfe\xff" + lines.encode("utf-16-be")):
        for query in ("", "?format=recalld", "?format=mcp-memory", "?format=mem0"):
            response = client.post(f"/v1/import{query}", content=body)
            assert response.status_code == 422, (query, response.text)
            error = response.json()["error"]
            assert error["field"] == "file"
            assert "the upload is UTF-16" in error["message"]
            assert "save it as UTF-8" in error["message"]
    assert client.get("/v1/memories").json()["memories"] == []


def test_http_import_of_utf32_or_unmarked_utf16_is_refused_naming_it(
    client: httpx.Client,
) -> None:
    # Review of pass a63: UTF-32 (either order) and UTF-16 without its mark were split at
    # their 0x0a bytes, each piece a bad line; UTF-32 LE was called UTF-16.
    lines = '{"content": "héllo"}\n{"content": "second"}\n'
    bodies = {
        b"\x00\x00\xfe\xff" + lines.encode("utf-32-be"): "the upload is UTF-32",
        b"\xff\xfe\x00\x00" + lines.encode("utf-32-le"): "the upload is UTF-32",
        lines.encode("utf-16-le"): "the upload is UTF-16 or UTF-32",
    }
    for body, cause in bodies.items():
        response = client.post("/v1/import?format=recalld", content=body)
        assert response.status_code == 422, response.text
        assert response.json()["error"]["field"] == "file"
        assert response.json()["error"]["message"].startswith(cause)
    assert client.get("/v1/memories").json()["memories"] == []


def test_http_import_lists_the_first_1000_refusals_and_counts_all(
    client: httpx.Client,
) -> None:
    # Review of pass b69: every refused line was listed in the answer, so 2 MB of junk
    # lines drew an 85 MB answer; it lists the first 1000 and counts the rest.
    body = b"not json\n" * 1500 + b'{"content": "kept"}\n'
    response = client.post("/v1/import?format=recalld", content=body)
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["created"] == 1
    assert report["errors_total"] == 1500
    assert len(report["errors"]) == 1000
    assert report["errors"][0]["line"] == 1
    assert report["errors"][-1]["line"] == 1000
