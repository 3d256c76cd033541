"""Regenerate docs/browser.png, the README's screenshot of the memory browser.

Starts `recalld serve` (with the default offline model) on a throwaway database
with a few invented memories, searches them in headless Chromium and saves the
page as a small palette PNG:

    .venv/bin/python scripts/browser_screenshot.py [OUTPUT]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))  # the test helpers start the server and the browser

from PIL import Image  # noqa: E402
from tests.adapters.http_support import ServerProcess  # noqa: E402
from tests.web.browser_support import api_client, chromium, element, wait_until_indexed  # noqa: E402

MEMORIES = [
    {
        "content": "The staging database lives in the Melbourne region",
        "title": "Staging region",
        "category": "fact",
        "tags": ["infra", "staging"],
        "salience": 0.8,
    },
    {
        "content": "Sam takes the espresso at the corner café on the square before the standup",
        "category": "preference",
        "tags": ["coffee", "sam"],
        "at": "2026-10-20T08:10:00+01:00",
    },
    {
        "content": "Coffee machine on floor 3 is broken; use the café across the street",
        "category": "hazard",
        "tags": ["office", "coffee"],
    },
    {
        "content": "Sam prefers green tea after lunch, never coffee after 3 pm",
        "category": "preference",
        "tags": ["sam"],
    },
]


def main(output: Path) -> None:
    """Seed, search, screenshot, compress."""
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        server = ServerProcess(directory / "demo.db", RECALLD_EMBEDDER="minilm").start()
        try:
            with api_client(server.base_url, token=None) as client:
                ids = [client.post("/v1/memories", json=memory).json()["id"] for memory in MEMORIES]
                wait_until_indexed(client, ids)
            with chromium(directory / "profile", directory) as driver:
                driver.set_window_size(1100, 760)
                driver.get(f"{server.base_url}/#/search")
                element(driver, "#search-query").send_keys("where does Sam get coffee?")
                element(driver, "#search-submit").click()
                element(driver, "#search-results .hit")
                raw = directory / "raw.png"
                driver.save_screenshot(str(raw))
        finally:
            server.stop()
        with Image.open(raw) as image:
            image.convert("RGB").quantize(colors=96).save(output, optimize=True)
    print(f"{output}: {output.stat().st_size} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPOSITORY / "docs" / "browser.png")
