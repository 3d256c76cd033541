"""An OpenAI-compatible HTTP embedder (``POST {base_url}/embeddings``).

Works with any server that speaks the OpenAI embeddings shape (OpenAI, vLLM,
llama.cpp, Ollama's compatibility endpoint, text-embeddings-inference ...).
It uses only the standard library, so it adds no dependency. The API key comes
from the settings and is sent as a bearer token; it is never logged. Nor are
credentials written in the URL itself (``https://user:secret@host/v1``, or a key in
its query, ``?api-key=…``): every error, and so every log line and job error kept in
the database, shows the URL with its password and query values as ``***``. A user and
password in the URL are sent as Basic auth (not with an API key: one or the other).

What the server answers is checked before it becomes a vector: exactly one list of finite
numbers for each text, at ``index`` 0 to n - 1, of one length (a NaN or a missing index is
an :class:`~recalld.errors.EmbeddingError`, retried like an unreachable server, never a
vector stored). A redirect is not followed: urllib re-sent the request as a GET, with the
API key, to whatever host the ``Location`` named, and took that host's answer for the
texts' vectors. The timeout bounds the whole answer, not each read of it (a server
sending a byte every few seconds held a batch for as long as it liked), and an answer far
larger than the vectors asked for is cut off rather than read into memory. An endpoint
that gives no answer (unreachable, too slow, 429/502/503/504) is left alone for a while
(:mod:`recalld.embeddings.endpoint_rest`) rather than waited for by every embedding.
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, urljoin, urlsplit, urlunsplit

import numpy as np
import numpy.typing as npt

from recalld.config import MAX_EMBEDDER_DIMENSION
from recalld.embeddings.base import Vectors, normalize_rows
from recalld.embeddings.endpoint_rest import EndpointRest
from recalld.errors import EmbeddingError

__all__ = ["HTTPEmbedder"]

# The most bytes an answer may hold: a number written out takes about 20 (64 leaves room
# for a server that indents its JSON), each item some more for its index and keys.
ANSWER_BASE_BYTES = 1 << 20
ANSWER_ITEM_BYTES = 1024
ANSWER_NUMBER_BYTES = 64
# A read of the answer asks for this much at a time (each read returns what has arrived).
READ_CHUNK_BYTES = 1 << 16


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: urllib's own turned the POST into a GET to any host the
    ``Location`` named, with the ``Authorization`` header. The 3xx is then an
    :class:`urllib.error.HTTPError` like any other status."""

    def redirect_request(self, *arguments: Any, **options: Any) -> None:
        """No new request: the answer stands as the error it is."""
        return None


_OPENER = urllib.request.build_opener(_RefuseRedirects)

# Statuses that say the endpoint cannot answer now rather than that the request was wrong.
NO_ANSWER_STATUSES = frozenset({429, 502, 503, 504})


class _NoAnswerError(Exception):
    """The endpoint gave no answer (its message says what happened, without its URL)."""


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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # As written (credentials and all): what errors are scrubbed of.
        self._written = _endpoint(base_url)
        self._shown = _redacted(self._written)
        self._url, self._authorization = _credentials(self._written)
        if api_key:
            if self._authorization is not None:
                raise EmbeddingError(
                    "embedder_url holds a user and password and embedder_api_key is set too:"
                    " give the endpoint's credentials in one of them"
                )
            self._authorization = f"Bearer {api_key}"
        # What the header carries (a key, or user:password in base64): never quoted back.
        self._sent_secrets = (
            () if self._authorization is None else (self._authorization.partition(" ")[2],)
        )
        self._model = model
        self._dimension = dimension
        self._timeout_seconds = timeout_seconds
        self._rest = EndpointRest(self._shown, clock)

    @property
    def name(self) -> str:
        """The model name the endpoint was asked for."""
        return self._model

    def available(self) -> bool:
        """False while the endpoint rests after failing (see :mod:`.endpoint_rest`)."""
        return self._rest.available()

    @property
    def dimension(self) -> int:
        """The configured dimension, or the one the endpoint returns for a probe text."""
        if self._dimension is None:
            self._dimension = int(self._request(["dimension probe"]).shape[1])
        return self._dimension

    def _request(self, texts: Sequence[str]) -> Vectors:
        body = json.dumps({"model": self._model, "input": list(texts)}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._authorization is not None:
            headers["Authorization"] = self._authorization
        request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        sent = self._rest.enter()
        try:
            answer = self._answer(request, len(texts))
        except _NoAnswerError as missing:
            raise self._rest.failed(str(missing), sent) from missing.__cause__
        except Exception:
            self._rest.answered()  # a refusal is an answer: the endpoint is there
            raise
        except BaseException:
            self._rest.abandoned(sent)  # interrupted (^C): no answer, and no failure
            raise
        self._rest.answered()
        try:
            payload: Any = json.loads(answer, parse_constant=_no_constant)
        except (ValueError, RecursionError) as error:  # RecursionError: nested too deep
            raise EmbeddingError(
                f"{self._shown} returned a body that is not JSON: {error}"
            ) from error
        return _vectors(payload, len(texts), self._shown)

    def _answer(self, request: urllib.request.Request, count: int) -> bytes:
        """The body of the endpoint's answer to ``request``; :class:`_NoAnswerError` when it
        gave none (unreachable, too slow, overloaded: see :mod:`.endpoint_rest`)."""
        deadline = time.monotonic() + self._timeout_seconds
        try:
            with _OPENER.open(request, timeout=self._timeout_seconds) as response:
                return self._read(response, deadline, count)
        except urllib.error.HTTPError as error:
            with error:  # its connection, closed now rather than when it is collected
                if 300 <= error.code < 400:
                    raise EmbeddingError(self._redirected(error)) from error
                try:
                    quoted = error.read(300).decode(errors="replace")
                except (OSError, http.client.HTTPException) as unread:
                    # A body that stops coming: a TimeoutError was no EmbeddingError.
                    quoted = f"(its body could not be read: {unread})"
                detail = _scrubbed(quoted, self._written, self._sent_secrets)
                if error.code in NO_ANSWER_STATUSES:
                    raise _NoAnswerError(f"answered {error.code}: {detail}") from error
                raise EmbeddingError(f"{self._shown} answered {error.code}: {detail}") from error
        # A URL http.client cannot use (a port that is not a number) is the setting's
        # fault, not the endpoint's: no rest would mend it.
        except (ValueError, http.client.InvalidURL) as error:
            raise EmbeddingError(
                f"{self._shown} failed: {_scrubbed(str(error), self._written, self._sent_secrets)}"
            ) from error
        # HTTPException: a body cut short (IncompleteRead) is neither OSError nor ValueError.
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            detail = _scrubbed(str(error), self._written, self._sent_secrets)
            raise _NoAnswerError(detail) from error

    def _read(self, response: Any, deadline: float, count: int) -> bytes:
        """The answer's body, read as it arrives until ``deadline``, and no larger than
        ``count`` vectors can take."""
        dimension = self._dimension or MAX_EMBEDDER_DIMENSION
        limit = ANSWER_BASE_BYTES + count * (ANSWER_ITEM_BYTES + ANSWER_NUMBER_BYTES * dimension)
        chunks: list[bytes] = []
        size = 0
        while chunk := response.read1(READ_CHUNK_BYTES):
            size += len(chunk)
            if size > limit:
                raise EmbeddingError(
                    f"{self._shown} answered with more than {limit} bytes for {count} texts;"
                    " the answer was cut off"
                )
            if time.monotonic() > deadline:
                raise _NoAnswerError(
                    f"it had not sent its whole answer after {self._timeout_seconds:g} s"
                    " (RECALLD_EMBEDDER_TIMEOUT_SECONDS)"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _redirected(self, error: urllib.error.HTTPError) -> str:
        """What a redirect says, and that it was not followed."""
        location = error.headers.get("Location") if error.headers is not None else None
        target = "elsewhere" if not location else _redacted(urljoin(self._url, location))
        return (
            f"{self._shown} answered {error.code}, a redirect to {target}; recalld does not"
            " follow an embedding endpoint's redirects (the texts and the API key would go"
            " wherever it points): set RECALLD_EMBEDDER_URL to the endpoint itself"
        )

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
                " (RECALLD_EMBEDDER_DIMENSION)"
            )
        return normalize_rows(matrix)


def _no_constant(name: str) -> float:
    """``NaN``, ``Infinity`` and ``-Infinity``, which Python's JSON reads and JSON has not."""
    raise ValueError(f"{name} is not a JSON number")


def _finite_number(value: Any) -> bool:
    """A JSON number a float holds (an integer of 400 digits overflowed ``isfinite``)."""
    if type(value) is int:
        return abs(value) <= sys.float_info.max
    return type(value) is float and math.isfinite(value)


def _vectors(payload: Any, count: int, shown: str) -> npt.NDArray[np.float32]:
    """The ``count`` vectors of an OpenAI-shaped answer, in the texts' order; anything
    else (an index missing or given twice, a value that is not a finite number, rows of
    different lengths) is an :class:`EmbeddingError` naming what was wrong."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise EmbeddingError(f"{shown} returned an unexpected body: no 'data' list")
    rows: list[Any] = [None] * count
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < count or rows[index] is not None:
            raise EmbeddingError(
                f"{shown} returned {len(data)} vectors for {count} texts, or an 'index' that"
                f" is not one of 0 to {count - 1} given once each"
            )
        embedding = item.get("embedding")
        if not isinstance(embedding, list) or not all(map(_finite_number, embedding)):
            raise EmbeddingError(
                f"{shown} returned an embedding (index {index}) that is not a list of finite"
                " numbers"
            )
        rows[index] = embedding
    if len(data) != count:
        raise EmbeddingError(f"{shown} returned {len(data)} vectors for {count} texts")
    if len({len(row) for row in rows}) > 1:
        raise EmbeddingError(f"{shown} returned embeddings of different lengths")
    with np.errstate(over="ignore"):  # refused just below, by name
        matrix = np.array(rows, dtype=np.float32).reshape(count, -1)
    if not np.isfinite(matrix).all():  # a finite float64 past float32's range
        raise EmbeddingError(f"{shown} returned a value too large for a float32 vector")
    return matrix


def _credentials(url: str) -> tuple[str, str | None]:
    """``url`` without the user and password in its authority, and the Basic
    ``Authorization`` they make (None without them). urllib sends no credentials written
    in a URL: it looked ``user:secret@host`` up as a host name (asking the DNS resolver
    for the password) and failed with "Name or service not known"."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    credentials, _, host = parts.netloc.rpartition("@")
    user, _, password = credentials.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
    return urlunsplit(parts._replace(netloc=host)), f"Basic {token}"


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


def _scrubbed(message: str, url: str, sent: Sequence[str] = ()) -> str:
    """``message`` (an error urllib raised for ``url``, or a server's answer) without the
    URL's secrets, decoded or as written (a server quoting the path it got: a key
    ``a%2Fb`` is ``a/b`` decoded), nor the ``sent`` ones (the ``Authorization`` header's
    key or Basic token, which a server may quote back in a 401)."""
    parts = urlsplit(url)
    secrets = list(sent)
    secrets += [value for _, value in parse_qsl(parts.query) if value]
    secrets += [pair.partition("=")[2] for pair in parts.query.split("&") if "=" in pair]
    if parts.password:
        secrets += [parts.password, unquote(parts.password)]
    secrets = [secret for secret in secrets if secret]
    for secret in sorted(secrets, key=len, reverse=True):
        message = message.replace(secret, "***")
    return message
