"""The memory browser: static assets the REST API serves at ``/`` and under ``/ui/``.

Everything is in ``static/`` and ships inside the package (no CDN, no build
step): plain ES modules (``static/js``; one module per page, registered in
``static/js/pages.js``), one stylesheet, and a vendored copy of Swagger UI
for the offline ``/docs`` page (``static/vendor/swagger-ui``, see
``VENDORED.md`` there). The pages talk to the REST API only, with the same
bearer token and ``X-Recalld-Namespace`` header as any client.

This package holds no Python logic; :mod:`recalld.adapters.http_web` mounts it.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["STATIC_DIRECTORY"]

STATIC_DIRECTORY = Path(__file__).parent / "static"
"""Where the assets are (inside the installed package)."""
