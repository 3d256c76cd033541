"""An OpenAI-compatible HTTP embedder (``POST {base_url}/embeddings``).

Works with any server that speaks the OpenAI embeddings shape (OpenAI, vLLM,
llama.cpp, Ollama's compatibility endpoint, text-embeddings-inference ...).
It uses only the standard library, so it adds no dependency. The API key comes
from the settings and is sent as a bearer token; it is never logged. Nor are
credentials written in the URL itself (``https://user:secret@host/v1``, or a key in
its query, ``?api-key=…``): every error, and so every log line and job error kept in
the database, shows the URL with its password and query values as ``***``.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

import numpy as np

from recalld.embeddings.base import Vectors, normalize_rows
from recalld.errors import EmbeddingError

__all__ = ["HTTPEmbedder"]


class HTTPEmbedder:
    """Embeddings from an OpenAI-compatible endpoint; rows are re-normalised locally."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimension: int | None = None,
        timeout_seconds: float = 60.0,
    ) -> None:
        self._url = _endpoint(base_url)
        self._shown = _redacted(self._url)
        self._model = model
        self._api_key = api_key
        self._dimension = dimension
        self._timeout_seconds = timeout_seconds

    @property
    def name(self) -> str:
        """The model name the endpoint was asked for."""
        return self._model

    @property
    def dimension(self) -> int:
        """The configured dimension, or the one the endpoint returns for a probe text."""
        if self._dimension is None:
            self._dimension = int(self._request(["dimension probe"]).shape[1])
        return self._dimension

    def _request(self, texts: Sequence[str]) -> Vectors:
        body = json.dumps({"model": self._model, "input": list(texts)}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_seconds) as response:
                payload: Any = json.loads(response.read())
        except urllib.error.HTTPError as error:
            detail = _scrubbed(error.read()[:300].decode(errors="replace"), self._url)
            raise EmbeddingError(f"{self._shown} answered {error.code}: {detail}") from error
        # HTTPException: a URL http.client cannot use (a port that is not a number) and a
        # body cut short (IncompleteRead) are neither OSError nor ValueError.
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as error:
            raise EmbeddingError(
                f"{self._shown} failed: {_scrubbed(str(error), self._url)}"
            ) from error
        try:
            items = sorted(payload["data"], key=lambda item: int(item["index"]))
            matrix = np.array([item["embedding"] for item in items], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as error:
            raise EmbeddingError(f"{self._shown} returned an unexpected body: {error}") from error
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise EmbeddingError(
                f"{self._shown} returned {matrix.shape[0] if matrix.ndim else 0} vectors"
                f" for {len(texts)} texts"
            )
        return matrix

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """One request per batch; the rows are L2-normalised here whatever the server does."""
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        matrix = self._request(texts)
        if self._dimension is None:
            self._dimension = int(matrix.shape[1])
        elif matrix.shape[1] != self._dimension:
            raise EmbeddingError(
                f"{self._model} returned {matrix.shape[1]} dimensions, expected {self._dimension}"
            )
        return normalize_rows(matrix)


def _endpoint(base_url: str) -> str:
    """``{base_url}/embeddings``, the path extended before any query (``?api-version=``),
    which must stay the query rather than swallow the path."""
    parts = urlsplit(base_url.strip())
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/embeddings"))


def _redacted(url: str) -> str:
    """``url`` with the password in its authority and every query value as ``***``."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        credentials, _, host = netloc.rpartition("@")
        user, separator, _ = credentials.partition(":")
        netloc = f"{user}:***@{host}" if separator else f"{user}@{host}"
    query = "&".join(f"{name}=***" for name, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _scrubbed(message: str, url: str) -> str:
    """``message`` (an error urllib raised for ``url``, or a server's answer) without the
    URL's secrets, decoded or as written (a server quoting the path it got: a key
    ``a%2Fb`` is ``a/b`` decoded)."""
    parts = urlsplit(url)
    secrets = [value for _, value in parse_qsl(parts.query) if value]
    secrets += [pair.partition("=")[2] for pair in parts.query.split("&") if "=" in pair]
    if parts.password:
        secrets += [parts.password, unquote(parts.password)]
    secrets = [secret for secret in secrets if secret]
    for secret in sorted(secrets, key=len, reverse=True):
        message = message.replace(secret, "***")
    return message
