"""Path parameters that take the rest of the URL path, exactly as it was sent.

Starlette's ``{name:path}`` matches ``.*``, and ``.`` stops at a newline: a key
``a%0Ab`` matched no route (a bare 404 that named nothing), and a key ``ab%0A``
matched as ``ab`` (the regex's ``$`` also matches before a final newline), so a PUT
wrote, and a DELETE forgot, another key than the one sent. ``{name:verbatim}``
matches every character, so the value reaches the route whole and is checked there
like any other (a key with a newline: 422 naming ``key`` and the rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.convertors import Convertor, register_url_convertor
from starlette.routing import Mount

__all__ = ["VERBATIM", "route_label", "route_methods"]

VERBATIM = "verbatim"


class _VerbatimConvertor(Convertor[str]):
    """The rest of the path, newlines included (as ``path``, but every character)."""

    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


def route_label(template: str) -> str:
    """A route ``template`` as the metrics name it: ``{key:verbatim}`` keeps the spelling
    ``{key:path}`` it had before, so dashboards and alerts on those routes go on matching."""
    return template.replace(f":{VERBATIM}}}", ":path}")


# Starlette keeps its convertors in one table by name; registering the same name again
# replaces it with an equal convertor, so importing this module twice is harmless.
register_url_convertor(VERBATIM, _VerbatimConvertor())


def route_methods(routes: Sequence[Any]) -> list[tuple[Any, frozenset[str]]]:
    """(path regex, methods) of every route of the app (for ``Allow`` on a 405): the API's,
    ``/healthz``, ``/metrics``, ``/openapi.json``, the browser's pages and its ``/ui/``
    files (a mount of static files, which serve GET and HEAD); an ``Allow`` left empty
    there said that nothing at all may be asked of them."""
    found = []
    for route in routes:
        served = getattr(route, "methods", None)
        methods = frozenset({"GET", "HEAD"}) if isinstance(route, Mount) else served
        pattern = getattr(route, "path_regex", None)
        if methods and pattern is not None:
            found.append((pattern, frozenset(methods)))
    return found
