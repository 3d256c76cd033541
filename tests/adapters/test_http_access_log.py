"""The access log's masking: no query value but a harmless parameter's, and no token."""

from __future__ import annotations

import logging

from recalld.adapters.http_access_log import RedactSecrets, redact_target

TOKEN = "rcd_0123456789abcdef_Zm9vYmFyLWJhei1xdXV4LXNlY3JldC1wYXJ0"


def test_http_access_log_masks_every_query_value_but_the_harmless_ones() -> None:
    target = f"/v1/memories?limit=5&order=updated&bearer={TOKEN}&kind=diary&_=17"
    assert redact_target(target) == ("/v1/memories?limit=5&order=updated&bearer=***&kind=***&_=17")


def test_http_access_log_masks_a_bare_word_an_odd_name_and_a_token_anywhere() -> None:
    long_name = "x" * 33
    assert redact_target("/v1/stats?hunter2") == "/v1/stats?***"
    assert redact_target(f"/v1/stats?{long_name}=1&a%20b=2&=3") == "/v1/stats?***&***&***"
    assert redact_target("/v1/stats?&limit=3&") == "/v1/stats?&limit=3&"
    assert redact_target(f"/v1/memories?cursor={TOKEN}") == (
        "/v1/memories?cursor=rcd_0123456789abcdef_***"
    )
    assert redact_target(f"/v1/memories/{TOKEN}/turns") == (
        "/v1/memories/rcd_0123456789abcdef_***/turns"
    )
    assert redact_target("/v1/memories/rcd_not-a-whole-token") == "/v1/memories/rcd_***"
    assert redact_target("/v1/memories/01J9ZQ") == "/v1/memories/01J9ZQ"


def test_http_access_log_masks_a_token_behind_percent_escapes() -> None:
    # The digit of an escape before "rcd_" hid the token from the masking: the whole
    # secret was logged for "/v1/kv/Bearer%20rcd_…".
    secret = TOKEN.rsplit("_", 1)[1]
    escaped = TOKEN.replace("_", "%5F")
    for target in (
        f"/v1/kv/Bearer%20{TOKEN}",
        f"/v1/kv/token%3D{TOKEN}",
        f"/v1/kv/%2F{TOKEN}",
        f"/v1/memories?cursor=Bearer%20{TOKEN}",
        f"/v1/kv/{escaped}",
    ):
        logged = redact_target(target)
        assert secret not in logged, logged
        assert "Zm9v" not in logged, logged
        assert "rcd_0123456789abcdef_***" in logged, logged
    # Escapes without a token stay as they were sent.
    assert redact_target("/v1/kv/caf%C3%A9?limit=5") == "/v1/kv/caf%C3%A9?limit=5"
    # Two layers of escapes hide a token no better than one.
    assert redact_target(f"/v1/kv/Bearer%2520{TOKEN}") == (
        "/v1/kv/Bearer%20rcd_0123456789abcdef_***"
    )
    # A decoded line break would write a line of its own into the log: it stays escaped.
    forged = redact_target(f"/v1/kv/x%0D%0A%22DELETE%20/v1/all%22%20200%20{TOKEN}")
    assert "\r" not in forged
    assert "\n" not in forged
    assert forged == '/v1/kv/x%0D%0A"DELETE%20/v1/all"%20200%20rcd_0123456789abcdef_***'


def test_http_access_log_filter_rewrites_uvicorns_access_line() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", f"/v1/stats?auth={TOKEN}", "1.1", 401),
        None,
    )
    assert RedactSecrets().filter(record) is True
    assert record.getMessage() == '127.0.0.1:5000 - "GET /v1/stats?auth=*** HTTP/1.1" 401'
