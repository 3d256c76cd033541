"""The OpenAI-compatible HTTP embedder, against a small fake server on the loopback."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from pydantic import SecretStr

from recalld.config import Settings
from recalld.embeddings import http as http_embedder
from recalld.embeddings.hashing import HashingEmbedder
from recalld.embeddings.http import HTTPEmbedder
from recalld.errors import EmbeddingError
from recalld.errors import ValidationError as RecalldValidationError


class FakeEmbeddingServer(ThreadingHTTPServer):
    """Answers POST /v1/embeddings like OpenAI, with hashing vectors (unnormalised)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.fail_with: int | None = None
        self.fail_body = b'{"error": "overloaded"}'
        self.answer_with: bytes | None = None  # a 200 with this body instead of vectors
        self.redirect_to: str | None = None  # a 302 to this location instead
        # A 500 announcing a large body, of which it sends a little and then holds on.
        self.hold_error: threading.Event | None = None
        self.hold_error_words = 100
        # The next POST is held until this is set, then closed without an answer (held:
        # set when it arrived).
        self.hold_post: threading.Event | None = None
        self.held = threading.Event()


class _Handler(BaseHTTPRequestHandler):
    server: FakeEmbeddingServer

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def do_GET(self) -> None:
        self.server.requests.append(
            {"path": self.path, "body": None, "authorization": self.headers.get("Authorization")}
        )
        self.send_response(404)
        self.end_headers()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(
            {"path": self.path, "body": body, "authorization": self.headers.get("Authorization")}
        )
        hold_post, self.server.hold_post = self.server.hold_post, None
        if hold_post is not None:
            self.server.held.set()
            hold_post.wait(30)
            self.close_connection = True
            return
        if self.server.hold_error is not None:
            self.send_response(500)
            self.send_header("Content-Length", str(1 << 30))
            self.end_headers()
            self.wfile.write(b"overloaded " * self.server.hold_error_words)
            self.wfile.flush()
            self.server.hold_error.wait(30)
            return
        if self.server.redirect_to is not None:
            self.send_response(302)
            self.send_header("Location", self.server.redirect_to)
            self.end_headers()
            return
        if self.server.answer_with is not None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(self.server.answer_with)))
            self.end_headers()
            self.wfile.write(self.server.answer_with)
            return
        if self.server.fail_with is not None:
            self.send_response(self.server.fail_with)
            self.end_headers()
            self.wfile.write(self.server.fail_body.replace(b"{path}", self.path.encode()))
            return
        vectors = HashingEmbedder(16).embed_batch(body["input"]) * 3.0
        data = [
            {"object": "embedding", "index": index, "embedding": vector.tolist()}
            for index, vector in reversed(list(enumerate(vectors)))
        ]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server() -> Iterator[FakeEmbeddingServer]:
    fake = FakeEmbeddingServer()
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.shutdown()
    fake.server_close()
    thread.join(5)


def _url(server: FakeEmbeddingServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/v1"


def test_http_embedder_posts_openai_shape_and_normalises(server: FakeEmbeddingServer) -> None:
    embedder = HTTPEmbedder(base_url=_url(server), model="text-embed-small", api_key="sk-test")
    vectors = embedder.embed_batch(["first text", "second text"])
    assert vectors.shape == (2, 16)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    # Rows come back in input order even though the server listed them reversed.
    expected = HashingEmbedder(16).embed_batch(["first text", "second text"])
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    request = server.requests[0]
    assert request["path"] == "/v1/embeddings"
    assert request["body"] == {"model": "text-embed-small", "input": ["first text", "second text"]}
    assert request["authorization"] == "Bearer sk-test"
    assert embedder.name == "text-embed-small"
    assert embedder.dimension == 16


def test_http_embedder_probes_its_dimension(server: FakeEmbeddingServer) -> None:
    embedder = HTTPEmbedder(base_url=_url(server), model="m")
    assert embedder.dimension == 16
    assert server.requests[0]["authorization"] is None


def test_http_embedder_turns_server_errors_into_embedding_errors(
    server: FakeEmbeddingServer,
) -> None:
    server.fail_with = 503
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16)
    with pytest.raises(EmbeddingError, match="503"):
        embedder.embed_batch(["x"])


def test_http_embedder_refuses_a_dimension_mismatch(server: FakeEmbeddingServer) -> None:
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=384)
    with pytest.raises(
        EmbeddingError, match=r"16 dimensions, expected 384 \(RECALLD_EMBEDDER_DIMENSION\)"
    ):
        embedder.embed_batch(["x"])


def test_http_embedder_keeps_the_query_after_the_path(server: FakeEmbeddingServer) -> None:
    embedder = HTTPEmbedder(base_url=f"{_url(server)}/?api-version=2024-02-01", model="m")
    assert embedder.dimension == 16
    assert server.requests[0]["path"] == "/v1/embeddings?api-version=2024-02-01"


def test_http_embedder_errors_never_show_credentials_in_its_url(
    server: FakeEmbeddingServer,
) -> None:
    host = server.server_address[0]
    server.fail_with = 503
    in_query = HTTPEmbedder(base_url=f"{_url(server)}?api-key=k3ysecret", model="m", dimension=16)
    with pytest.raises(EmbeddingError, match="503") as answered:
        in_query.embed_batch(["x"])
    assert "k3ysecret" not in str(answered.value)
    assert "api-key=***" in str(answered.value)
    unreachable = HTTPEmbedder(base_url=f"http://alice:pa55secret@{host!s}:none/v1", model="m")
    with pytest.raises(EmbeddingError) as failed:
        unreachable.embed_batch(["x"])
    assert "pa55secret" not in str(failed.value)
    assert "alice:***@" in str(failed.value)


def test_http_embedder_errors_never_quote_a_key_as_written_in_its_url(
    server: FakeEmbeddingServer,
) -> None:
    # A server that quotes the path it got gives the key percent-encoded, as written.
    server.fail_with = 404
    server.fail_body = b"no route for {path}"
    embedder = HTTPEmbedder(base_url=f"{_url(server)}?key=k3y%2Fsecret", model="m", dimension=16)
    with pytest.raises(EmbeddingError, match="404") as answered:
        embedder.embed_batch(["x"])
    assert "k3y" not in str(answered.value)
    assert "no route for /v1/embeddings?key=***" in str(answered.value)


def _answer(*embeddings: object, indexes: list[object] | None = None) -> bytes:
    """An OpenAI-shaped body (``NaN``/``Infinity`` written as JSON has them not)."""
    data = [
        {"object": "embedding", "index": index, "embedding": embedding}
        for index, embedding in zip(indexes or range(len(embeddings)), embeddings, strict=True)
    ]
    return json.dumps({"object": "list", "data": data}).encode()


@pytest.mark.parametrize(
    ("answer", "refusal"),
    [
        (_answer([0.5, float("nan")], [0.5, 0.5]), "NaN is not a JSON number"),
        (_answer([0.5, float("inf")], [0.5, 0.5]), "Infinity is not a JSON number"),
        (_answer([0.5, 1e300], [0.5, 0.5]), "too large for a float32 vector"),
        (_answer([0.5, 10**400], [0.5, 0.5]), r"\(index 0\) that is not a list of finite"),
        (_answer(["0.5", "0.5"], [0.5, 0.5]), r"\(index 0\) that is not a list of finite"),
        (_answer([True, False], [0.5, 0.5]), r"\(index 0\) that is not a list of finite"),
        (_answer([0.5, 0.5], None), r"\(index 1\) that is not a list of finite"),
        (_answer([0.5, 0.5], [0.5, 0.5], indexes=[0, 0]), "given once each"),
        (_answer([0.5, 0.5], [0.5, 0.5], indexes=[1, 2]), "given once each"),
        (_answer([0.5, 0.5], [0.5, 0.5], indexes=["0", "1"]), "given once each"),
        (_answer([0.5, 0.5], [0.5, 0.5, 0.5]), "embeddings of different lengths"),
        (b'{"data": {"0": [0.5, 0.5]}}', "no 'data' list"),
        (b"[]", "no 'data' list"),
        (b"[" * 100_000, "not JSON: maximum recursion depth"),
    ],
)
def test_http_embedder_refuses_an_answer_that_is_not_one_finite_vector_a_text(
    server: FakeEmbeddingServer, answer: bytes, refusal: str
) -> None:
    server.answer_with = answer
    embedder = HTTPEmbedder(base_url=_url(server), model="m")
    with pytest.raises(EmbeddingError, match=refusal):
        embedder.embed_batch(["first", "second"])


def test_http_embedder_follows_no_redirect(server: FakeEmbeddingServer) -> None:
    # Followed, the POST became a GET to the other host, with the key, and that host's
    # answer was taken for the texts' vectors.
    port = server.server_address[1]
    server.redirect_to = f"http://localhost:{port}/elsewhere/v1/embeddings?token=s3cret"
    embedder = HTTPEmbedder(base_url=_url(server), model="m", api_key="sk-test", dimension=16)
    with pytest.raises(EmbeddingError, match="does not follow") as refused:
        embedder.embed_batch(["x"])
    assert f"a redirect to http://localhost:{port}/elsewhere/v1/embeddings?token=***" in str(
        refused.value
    )
    assert [request["path"] for request in server.requests] == ["/v1/embeddings"]


def test_http_embedder_cuts_off_an_answer_far_larger_than_its_vectors(
    server: FakeEmbeddingServer,
) -> None:
    server.answer_with = b'{"data": [], "padding": "' + b"x" * (2 << 20) + b'"}'
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16)
    with pytest.raises(EmbeddingError, match=r"more than \d+ bytes for 1 texts"):
        embedder.embed_batch(["x"])


def test_http_embedder_timeout_bounds_the_whole_answer(
    server: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The socket's timeout bounds each read: a server sending a byte every few seconds
    # was waited for as long as it kept sending. Here the clock has passed the deadline
    # by the time the first part of the answer arrives.
    readings = iter([0.0])
    monkeypatch.setattr(
        http_embedder, "time", SimpleNamespace(monotonic=lambda: next(readings, 61.0))
    )
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16)
    with pytest.raises(EmbeddingError, match=r"whole answer after 60 s"):
        embedder.embed_batch(["x"])


def test_http_embedder_sends_the_user_and_password_of_its_url_as_basic_auth(
    server: FakeEmbeddingServer,
) -> None:
    # urllib took "alice:pa55@host" for a host name: the password went to the DNS
    # resolver and every embedding failed with "Name or service not known".
    host, port = server.server_address[:2]
    embedder = HTTPEmbedder(base_url=f"http://alice:pa55%40word@{host!s}:{port}/v1", model="m")
    assert embedder.embed_batch(["x"]).shape == (1, 16)
    assert server.requests[0]["path"] == "/v1/embeddings"
    assert server.requests[0]["authorization"] == "Basic " + base64.b64encode(
        b"alice:pa55@word"
    ).decode("ascii")
    with pytest.raises(EmbeddingError, match="give the endpoint's credentials in one of them"):
        HTTPEmbedder(base_url=f"http://alice:pa55@{host!s}:{port}/v1", model="m", api_key="k")


def test_http_settings_refuse_a_key_beside_credentials_in_the_url(tmp_path: Path) -> None:
    with pytest.raises(RecalldValidationError, match="holds a user and password"):
        Settings(
            db=tmp_path / "m.db",
            embedder="http",
            embedder_model="m",
            embedder_url="http://alice:pa55@127.0.0.1:1/v1",
            embedder_api_key=SecretStr("sk-test"),
        )
    # Either alone is taken.
    Settings(db=tmp_path / "m.db", embedder_url="http://alice:pa55@127.0.0.1:1/v1")
    Settings(
        db=tmp_path / "m.db", embedder_url="http://127.0.0.1:1/v1", embedder_api_key=SecretStr("k")
    )


def test_http_embedder_reads_no_more_of_an_error_than_it_quotes(
    server: FakeEmbeddingServer,
) -> None:
    # The whole error body was read (a gigabyte announced, or one never ending) to quote
    # its first 300 characters.
    server.hold_error = threading.Event()
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16, timeout_seconds=20)
    try:
        with pytest.raises(EmbeddingError, match="answered 500: overloaded overloaded"):
            embedder.embed_batch(["x"])
    finally:
        server.hold_error.set()


def test_http_embedder_error_whose_body_stops_coming_is_an_embedding_error(
    server: FakeEmbeddingServer,
) -> None:
    # Reading it timed out with a TimeoutError, which recall takes for a bug and raises.
    server.hold_error = threading.Event()
    server.hold_error_words = 2
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16, timeout_seconds=0.5)
    try:
        with pytest.raises(EmbeddingError, match=r"answered 500: \(its body could not be read"):
            embedder.embed_batch(["x"])
    finally:
        server.hold_error.set()


def test_http_embedder_errors_never_quote_the_credentials_it_sent(
    server: FakeEmbeddingServer,
) -> None:
    # A 401 quoting the Authorization header it got (a proxy, a debugging server) put the
    # base64 of the URL's user:password, or the API key, in the job error that `recalld
    # status` shows and every log line repeats.
    host, port = server.server_address[:2]
    server.fail_with = 401
    basic = base64.b64encode(b"alice:pa55@word").decode("ascii")
    server.fail_body = f"bad credentials: Basic {basic}".encode()
    in_url = HTTPEmbedder(
        base_url=f"http://alice:pa55%40word@{host!s}:{port}/v1", model="m", dimension=16
    )
    with pytest.raises(EmbeddingError, match="401") as answered:
        in_url.embed_batch(["x"])
    assert basic not in str(answered.value)
    assert "Basic ***" in str(answered.value)
    server.fail_body = b"unknown key sk-s3cret-value"
    keyed = HTTPEmbedder(base_url=_url(server), model="m", dimension=16, api_key="sk-s3cret-value")
    with pytest.raises(EmbeddingError, match="401") as refused:
        keyed.embed_batch(["x"])
    assert "s3cret" not in str(refused.value)
