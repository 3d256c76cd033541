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
