"""Which web page sent a request without a token, and whether loopback trust covers it.

A browser on this machine sends any page's forms, images and ``no-cors`` fetches to
127.0.0.1 too (cross-site request forgery). Loopback trust is for this server's own
memory browser, for pages of this machine (a local tool such as the MCP inspector)
and for clients that are not browsers; :func:`foreign_page` names a request that is
none of these, and the authentication middleware refuses it.

A page of *another* loopback origin (``http://localhost:9999``) can reach this server
only with a request the browser sends without asking first (a CORS "simple"
request: ``GET``, ``HEAD`` or ``POST`` with no body type or a text, form or
multipart one; an image or a ``no-cors`` fetch, which sends no ``Origin`` but
``Sec-Fetch-Site: same-site`` from another port of ``localhost``), because this
server answers no other origin's preflight unless ``RECALLD_CORS_ORIGINS`` names
it. Such a page never reads the answer, so a write sent that way is always a
blind forgery (an import of a ``text/plain`` body, a drain of the pending
recollections, also through ``GET /v1/recollections/pending``, which drains
unless told ``drain=false``): it is refused. Its reads stay allowed, as they are
harmless to a page that cannot read them.

The browser itself also posts, unasked, with body types of its own: a link's
``ping`` (``text/ping``, on a click) and a page's Content-Security-Policy
violation reports (``application/csp-report``, to any ``report-uri`` the page
names, with no click at all). So a ``POST`` counts as preflighted only with a
body type no page may send to another origin without asking, and which this API
reads: JSON (``application/json``) or JSON lines (``application/x-ndjson``);
any other is treated as sent unasked.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from starlette.datastructures import Headers

from recalld.adapters._network import host_name, is_loopback

__all__ = ["PREFLIGHTED_BODY_TYPES", "foreign_page"]

DRAINING_READ = "/v1/recollections/pending"
# What the ``drain`` flag's parser (pydantic, lax mode) reads as false.
FALSE_WORDS = frozenset({"0", "off", "f", "false", "n", "no"})
PREFLIGHTED_BODY_TYPES = frozenset({"application/json", "application/x-ndjson"})
"""The body types of a ``POST`` that reached here from another origin's page only
through a CORS preflight (which this server grants no origin it was not told of)."""


def _drains(path: str, query: bytes) -> bool:
    """Whether a read of ``path`` takes the pending recollections away (``drain`` not false)."""
    if path.rstrip("/") != DRAINING_READ:
        return False
    flags = [value for name, value in parse_qsl(query.decode("latin-1")) if name == "drain"]
    return not flags or flags[-1].strip().lower() not in FALSE_WORDS


def _is_simple_write(method: str, path: str, query: bytes, headers: Headers) -> bool:
    """Whether a browser sends this write to another origin without a preflight."""
    if method in ("GET", "HEAD"):
        return _drains(path, query)
    if method != "POST":
        return False
    content_type = headers.get("content-type")
    if content_type is None:
        return True
    essence = content_type.split(";", 1)[0].strip().lower()
    return essence not in PREFLIGHTED_BODY_TYPES


def foreign_page(
    method: str, path: str, query: bytes, headers: Headers, allowed: frozenset[str]
) -> str | None:
    """The web page that sent a browser's request, when loopback trust does not cover it.

    Its ``Origin`` when that is neither a loopback address nor an ``allowed`` origin
    (``RECALLD_CORS_ORIGINS``), or a loopback origin other than this server's own
    (``Host``) sending a write no preflight asked for; else, when there is no
    ``Origin``, ``Sec-Fetch-Site: cross-site``, or ``same-site`` for such a write.
    None for this server's memory browser, a local tool's page, an address the user
    typed, or a client that is not a browser (it sends neither header).
    """
    origin = headers.get("origin")
    if origin is None:
        site = headers.get("sec-fetch-site")
        if site == "cross-site":
            return "Sec-Fetch-Site: cross-site"
        if site == "same-site" and _is_simple_write(method, path, query, headers):
            return f"Sec-Fetch-Site: same-site, a {method} no preflight asked for"
        return None
    if origin.lower() in allowed:
        return None
    parsed = urlsplit(origin)
    if parsed.scheme not in ("http", "https") or not is_loopback(host_name(parsed.netloc)):
        return f"Origin: {origin}"
    own = parsed.netloc.lower() == headers.get("host", "").strip().lower()
    if not own and _is_simple_write(method, path, query, headers):
        return f"Origin: {origin}, a {method} no preflight asked for"
    return None
