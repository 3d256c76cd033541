"""A real browser for the memory-browser tests: Debian's Chromium, headless, driven by Selenium.

The driver is ``/usr/bin/chromedriver`` given explicitly, so Selenium Manager
never downloads anything; ``scripts/system-deps.sh`` installs both packages.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
from PIL import Image, ImageStat
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver import Chrome
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from recalld.store.sqlite import SQLiteStore
from recalld.tokens import Access, TokenRegistry
from tests.adapters.http_support import ServerProcess

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
)
WAIT_SECONDS = 15.0
# How often a wait looks again: Selenium's default is every 0.5 s, so each wait whose
# condition was not already true cost up to half a second after it became true (test
# speed pass d67). A look is one round trip to chromedriver, a few milliseconds.
POLL_SECONDS = 0.05
# The viewer's zone differs from every memory's offset, so a converted time would show.
VIEWER_TIME_ZONE = "America/Sao_Paulo"
TOKEN_KEY = "recalld.token"
NAMESPACE_KEY = "recalld.namespace"

T = TypeVar("T")


@contextmanager
def chromium(profile: Path, downloads: Path) -> Iterator[Chrome]:
    """A headless Chromium with a fresh profile; downloads land in ``downloads``."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.add_experimental_option(
        "prefs",
        {"download.default_directory": str(downloads), "download.prompt_for_download": False},
    )
    driver = Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        driver.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
        )
        driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": VIEWER_TIME_ZONE})
        yield driver
    finally:
        driver.quit()


def wait_for(driver: Chrome, condition: Callable[[Chrome], T | None], what: str) -> T:
    """Wait (bounded) until ``condition`` returns something truthy; fail naming ``what``.

    An element replaced while the condition looks at it (the page re-rendered) is
    looked for again, not a failure.
    """
    try:
        result = WebDriverWait(
            driver,
            WAIT_SECONDS,
            poll_frequency=POLL_SECONDS,
            ignored_exceptions=[StaleElementReferenceException],
        ).until(condition)
    except TimeoutException:
        raise AssertionError(f"timed out waiting for {what}") from None
    assert result is not None
    return result


def element(driver: Chrome, selector: str) -> WebElement:
    """The visible element matching the CSS ``selector``, once it is there."""

    def found(current: Chrome) -> WebElement | None:
        for candidate in current.find_elements(By.CSS_SELECTOR, selector):
            if candidate.is_displayed():
                return candidate
        return None

    return wait_for(driver, found, selector)


def text_appears(driver: Chrome, selector: str, text: str) -> WebElement:
    """The element matching ``selector`` once its text contains ``text``."""

    def found(current: Chrome) -> WebElement | None:
        for candidate in current.find_elements(By.CSS_SELECTOR, selector):
            if text in candidate.text:
                return candidate
        return None

    return wait_for(driver, found, f"{text!r} in {selector}")


def open_page(driver: Chrome, base_url: str, token: str, page: str, namespace: str = "") -> None:
    """Sign in as ``token`` (in sessionStorage, as the login form does) and open ``#/page``."""
    driver.get(f"{base_url}/ui/favicon.svg")  # same origin, without running the app
    console_problems(driver)  # start the page's console log afresh
    driver.execute_script(
        "sessionStorage.clear();"
        "sessionStorage.setItem(arguments[0], arguments[1]);"
        "if (arguments[3]) sessionStorage.setItem(arguments[2], arguments[3]);",
        TOKEN_KEY,
        token,
        NAMESPACE_KEY,
        namespace,
    )
    driver.get(f"{base_url}/#/{page}")
    page_id = page.split("/", 1)[0]
    element(driver, f"#page-{page_id}")


def console_problems(driver: Chrome) -> list[str]:
    """Console errors since the last call (Content-Security-Policy violations among them)."""
    # Selenium leaves get_log unannotated; this is the shape chromedriver answers with.
    get_log: Callable[[str], list[dict[str, Any]]] = driver.get_log
    entries = get_log("browser")
    return [str(entry["message"]) for entry in entries if entry.get("level") == "SEVERE"]


def pixel_spread(path: Path) -> tuple[float, int]:
    """The grey-level standard deviation and the count of distinct colours of an image."""
    with Image.open(path) as image:
        grey = image.convert("L")
        spread = float(ImageStat.Stat(grey).stddev[0])
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20) or []
    return spread, len(colours)


def api_client(base_url: str, token: str | None, namespace: str = "default") -> httpx.Client:
    """A REST client acting as ``token`` (None: a trusted loopback caller) in ``namespace``."""
    headers = {"X-Recalld-Namespace": namespace}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.Client(base_url=base_url, headers=headers, timeout=30)


def wait_until_indexed(client: httpx.Client, memory_ids: list[str]) -> None:
    """Poll (bounded) until the server's worker has embedded every memory in ``memory_ids``."""
    deadline = time.monotonic() + WAIT_SECONDS
    pending = set(memory_ids)
    while pending and time.monotonic() < deadline:
        for memory_id in list(pending):
            response = client.get(f"/v1/memories/{memory_id}")
            assert response.status_code == 200, response.text
            if response.json()["index_state"] == "indexed":
                pending.discard(memory_id)
        if pending:
            time.sleep(0.05)  # the worker is another thread of the server: no event to wait on
    assert not pending, f"not indexed in time: {sorted(pending)}"


def create_token(db: Path, name: str, scopes: dict[str, Access]) -> str:
    """A new API token of the database file ``db`` (before its server starts)."""
    store = SQLiteStore(db)
    try:
        return TokenRegistry(store).create(name, scopes).token
    finally:
        store.close()


def ok(response: httpx.Response) -> Any:
    """The JSON of a successful answer (the test fails on any other)."""
    assert response.status_code < 300, response.text
    return response.json()


def remember(client: httpx.Client, **fields: Any) -> str:
    """Store a memory through the API; its id."""
    return str(ok(client.post("/v1/memories", json=fields))["id"])


def unique_namespace(prefix: str) -> str:
    """A namespace of the test's own (the module's server is shared)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def count_is(driver: Chrome, selector: str, count: int) -> None:
    """Wait until the page shows exactly ``count`` elements matching ``selector``."""
    wait_for(
        driver,
        lambda current: len(current.find_elements(By.CSS_SELECTOR, selector)) == count,
        f"{count} of {selector}",
    )


def drawn(driver: Chrome, page: str) -> WebElement:
    """The page ``#page-<page>`` once its rendering is over (``aria-busy`` gone): what it
    loads while drawn is on screen, without a sleep."""
    page_id = page.split("/", 1)[0]
    return wait_for(
        driver,
        lambda current: next(
            iter(current.find_elements(By.CSS_SELECTOR, f"#page-{page_id}:not([aria-busy])")),
            None,
        ),
        f"#page-{page_id} drawn",
    )


def settle(driver: Chrome, milliseconds: int = 400) -> None:
    """Let the page handle what is in flight (answers, timers) before looking."""
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; setTimeout(done, arguments[0]);",
        milliseconds,
    )


@dataclass
class Browsed:
    """A running ``recalld serve``, its admin token (``*:read+write``), a second token
    (what its module asks for) and a headless Chromium whose downloads land in
    ``downloads``."""

    server: ServerProcess
    admin: str
    token: str
    driver: Chrome
    downloads: Path

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def api(self, namespace: str = "default") -> httpx.Client:
        """A REST client acting as the admin in ``namespace``."""
        return api_client(self.base_url, self.admin, namespace)


@contextmanager
def browsed_server(
    directory: Path, second: tuple[str, dict[str, Access]], **environment: str
) -> Iterator[Browsed]:
    """A server on a new database in ``directory`` (``environment``: its settings), with
    an admin token and the ``second`` token (name, scopes), and a browser on it."""
    db = directory / "browser.db"
    admin = create_token(db, "admin", {"*": "read+write"})
    token = create_token(db, *second)
    server = ServerProcess(db, log_path=None, arguments=(), **environment).start()
    downloads = directory / "downloads"
    downloads.mkdir()
    try:
        with chromium(directory / "profile", downloads) as driver:
            yield Browsed(server, admin, token, driver, downloads)
    finally:
        server.stop()
