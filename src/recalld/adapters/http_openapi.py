"""``/openapi.json`` as the server runs: who must send a token, the bounds of this
server's settings, what a ``meta`` object may hold."""

from __future__ import annotations

import copy
from typing import Any

from fastapi import FastAPI

from recalld._schema import META_VALUE_NAME, NO_NUL_PATTERN, cap_count, meta_value_schema
from recalld.adapters.http_models import cap_request_counts
from recalld.config import Settings
from recalld.tokens import TokenRegistry

__all__ = ["describe_meta", "truthful_openapi"]


def truthful_openapi(
    app: FastAPI, settings: Settings, tokens: TokenRegistry, *, require_auth: bool
) -> None:
    """Make ``/openapi.json`` describe this server as it runs: ``Authorization`` optional
    while loopback callers are trusted (checked on every request, since a token may be
    created meanwhile), and the ``limit`` bounds of ``settings``."""
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
