"""``/openapi.json`` as the server runs: who must send a token, the bounds of this
server's settings, what a ``meta`` object may hold, and the refusals that come from
layers no route declares: 429 for a token past its share of requests and 431 for a
request head too large (neither was listed), and ``Retry-After`` on the 503s that
send it (said in prose only)."""

from __future__ import annotations

import copy
from typing import Any

from fastapi import FastAPI

from recalld._schema import META_VALUE_NAME, NO_NUL_PATTERN, cap_count, meta_value_schema
from recalld.adapters.http_connections import head_limit
from recalld.adapters.http_models import cap_request_counts
from recalld.adapters.http_token_share import RETRY_SECONDS, TOKEN_REQUESTS
from recalld.config import Settings
from recalld.tokens import TokenRegistry

__all__ = ["describe_meta", "describe_transport_refusals", "truthful_openapi"]

_ERROR_BODY = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}


def truthful_openapi(
    app: FastAPI, settings: Settings, tokens: TokenRegistry, *, require_auth: bool
) -> None:
    """Make ``/openapi.json`` describe this server as it runs: ``Authorization`` optional
    while loopback callers are trusted (checked on every request, since a token may be
    created meanwhile), the ``limit`` bounds of ``settings``, and the refusals of the
    transport (:func:`describe_transport_refusals`)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        document = copy.deepcopy(generate())
        optional = not require_auth and not tokens.any_active()
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                if not isinstance(operation, dict):
                    continue
                security = operation.get("security")
                if optional and security and {} not in security:
                    operation["security"] = [{}, *security]
                for parameter in operation.get("parameters", []):
                    if parameter.get("name") == "limit" and "schema" in parameter:
                        cap_count(parameter["schema"], settings.max_limit)
                describe_transport_refusals(operation)
        schemas = document.get("components", {}).get("schemas", {})
        cap_request_counts(schemas, settings.max_limit)
        describe_meta(schemas)
        return document

    app.openapi = openapi  # type: ignore[method-assign]


def describe_meta(schemas: dict[str, Any]) -> None:
    """Say in every ``meta`` (and batbox ``metadata``) object's schema that no key or
    string in it holds a NUL, as the service checks (a JSON value nests: a component)."""
    if not schemas:
        return
    reference = f"#/components/schemas/{META_VALUE_NAME}"
    for schema in list(schemas.values()):
        for name in ("meta", "metadata"):
            described = schema.get("properties", {}).get(name)
            if not isinstance(described, dict):
                continue
            for option in (described, *described.get("anyOf", [])):
                if option.get("type") == "object":
                    option["propertyNames"] = {"pattern": NO_NUL_PATTERN}
                    option["additionalProperties"] = {"$ref": reference}
    schemas[META_VALUE_NAME] = meta_value_schema(reference)


def describe_transport_refusals(operation: dict[str, Any]) -> None:
    """Add to ``operation``'s responses what the layers before its route answer: 431 (a
    request head over the limit, any request), 429 (a token past its share, an operation
    that takes a token), and ``Retry-After`` on its 503."""
    responses = operation.setdefault("responses", {})
    responses.setdefault(
        "431",
        {
            "description": f"the request head (request line and headers) is larger than"
            f" {head_limit()} bytes: nothing was done, and the connection is closed",
            "content": _ERROR_BODY,
        },
    )
    if operation.get("security"):
        retry = {
            "description": f"how many seconds to wait before sending it again ({RETRY_SECONDS})",
            "schema": {"type": "integer"},
        }
        responses.setdefault(
            "429",
            {
                "description": f"too_many_requests: this token has {TOKEN_REQUESTS} requests"
                " running, the limit per token (the worker threads are shared by every"
                " client); nothing of this one ran: send it again after `Retry-After`",
                "headers": {"Retry-After": retry},
                "content": _ERROR_BODY,
            },
        )
    unavailable = responses.get("503")
    if isinstance(unavailable, dict):
        unavailable.setdefault("headers", {})["Retry-After"] = {
            "description": "how many seconds to wait before sending it again: sent with"
            " database_unavailable, database_busy and database_read_only",
            "schema": {"type": "integer"},
        }
