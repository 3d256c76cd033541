"""The memory browser and the offline API docs on the REST app, and the security headers.

- ``GET /`` — the browser (``recalld/web/static/index.html``); its assets under ``/ui/``
  (and ``/favicon.ico``, which browsers fetch on their own).
- ``GET /docs`` — Swagger UI from the copy vendored in the package (FastAPI's
  default page loads it from a CDN, so it was blank offline).

These pages and assets are public (they hold no data); every request they make
goes to the REST API with the user's bearer token, checked like any other.

:class:`SecurityHeaders` adds to every response ``X-Content-Type-Options:
nosniff``, ``Referrer-Policy: no-referrer``, ``X-Frame-Options: DENY`` and a
Content-Security-Policy: for the browser, scripts, styles and connections from
this origin only (no inline script or style, nothing remote, no framing, no
form submission); for ``/docs`` the same plus ``data:`` images (Swagger UI's
icons); for API responses ``default-src 'none'``.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import FileResponse
from starlette.datastructures import MutableHeaders
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recalld.web import STATIC_DIRECTORY

__all__ = [
    "API_POLICY",
    "BROWSER_PATHS",
    "DOCS_POLICY",
    "UI_POLICY",
    "UI_PREFIX",
    "SecurityHeaders",
    "is_public_asset",
    "mount_browser",
]

UI_PREFIX = "/ui"
DOCS_PATH = "/docs"
FAVICON_PATH = "/favicon.ico"
BROWSER_PATHS = frozenset({"/", DOCS_PATH, FAVICON_PATH})
SAFE_METHODS = frozenset({"GET", "HEAD"})

_UI_DIRECTIVES = (
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "font-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
)
UI_POLICY = "; ".join(_UI_DIRECTIVES)
DOCS_POLICY = UI_POLICY.replace("img-src 'self'", "img-src 'self' data:")
API_POLICY = "default-src 'none'; frame-ancestors 'none'"


def is_public_asset(method: str, path: str) -> bool:
    """Whether a request is for the browser's pages or assets (served without a token)."""
    if method not in SAFE_METHODS:
        return False
    return path in BROWSER_PATHS or path.startswith(UI_PREFIX + "/")


def _policy(path: str) -> str:
    if path == DOCS_PATH:
        return DOCS_POLICY
    if path in ("/", FAVICON_PATH) or path.startswith(UI_PREFIX + "/"):
        return UI_POLICY
    return API_POLICY


class SecurityHeaders:
    """Add the security headers to every HTTP response (those a route set itself stay)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        policy = _policy(path)
        # Assets change with each release: revalidate (ETag) instead of trusting a stale
        # copy. API answers hold memories, which forget must be able to erase: no cache
        # (the browser's on disk, a proxy's) may keep a copy of one.
        caching = "no-store" if policy == API_POLICY else "no-cache"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Content-Security-Policy", policy)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("X-Frame-Options", "DENY")
                headers.setdefault("Referrer-Policy", "no-referrer")
                headers.setdefault("Cache-Control", caching)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def mount_browser(app: FastAPI) -> None:
    """Serve the browser at ``/``, its assets under ``/ui/`` and Swagger UI at ``/docs``."""
    index = STATIC_DIRECTORY / "index.html"
    docs = STATIC_DIRECTORY / "docs.html"
    icon = STATIC_DIRECTORY / "favicon.svg"

    @app.get("/", include_in_schema=False)
    async def browser() -> FileResponse:
        """The memory browser."""
        return FileResponse(index, media_type="text/html")

    @app.get(DOCS_PATH, include_in_schema=False)
    async def api_docs() -> FileResponse:
        """Swagger UI over ``/openapi.json``, from the vendored assets."""
        return FileResponse(docs, media_type="text/html")

    @app.get(FAVICON_PATH, include_in_schema=False)
    async def favicon() -> FileResponse:
        """The icon browsers ask for on their own (an SVG)."""
        return FileResponse(icon, media_type="image/svg+xml")

    app.mount(UI_PREFIX, StaticFiles(directory=STATIC_DIRECTORY), name="ui")
