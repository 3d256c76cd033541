"""Path parameters that take the rest of the URL path, exactly as it was sent.

Starlette's ``{name:path}`` matches ``.*``, and ``.`` stops at a newline: a key
``a%0Ab`` matched no route (a bare 404 that named nothing), and a key ``ab%0A``
matched as ``ab`` (the regex's ``$`` also matches before a final newline), so a PUT
wrote, and a DELETE forgot, another key than the one sent. ``{name:verbatim}``
matches every character, so the value reaches the route whole and is checked there
like any other (a key with a newline: 422 naming ``key`` and the rule).
"""

from __future__ import annotations

from starlette.convertors import Convertor, register_url_convertor

__all__ = ["VERBATIM", "route_label"]

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
