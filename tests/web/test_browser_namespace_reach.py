"""The memory browser against what its namespace, a double click or a large import did to
it: a namespace no HTTP header can name, an export outrun by a switch of namespace, a save
clicked twice, an import refused line by line. Headless Chromium against a real
`recalld serve` (keyword-only); adversarial pass b69.

One server with an admin token (``*:read+write``) and a token for two namespaces, one of
them named in Greek (the CLI, MCP and the library take any letters; a browser's header
carries Latin-1 only). Each test works in a namespace of its own.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tests.web.browser_support import (
    NAMESPACE_KEY,
    Browsed,
    api_client,
    browsed_server,
    create_token,
    element,
    open_page,
    remember,
    text_appears,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GREEK = "Ωmega"
LATIN = "reachable"


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsed]:
    with browsed_server(
        tmp_path_factory.mktemp("browser_namespace_reach"),
        ("mixed", {GREEK: "read+write", LATIN: "read+write"}),
    ) as found:
        yield found


def test_browser_a_namespace_no_header_can_name_is_listed_not_offered(browsed: Browsed) -> None:
    # "Ωmega" (made by the CLI) was offered by the switcher; chosen, every request failed
    # in the browser ("the recalld server did not answer"), and once kept in the tab even
    # GET /v1/session did: the page said it could not ask who you are, with no way out.
    with browsed.api(LATIN) as client:
        remember(client, content="a memory of the namespace the browser can reach")
    driver = browsed.driver
    open_page(driver, browsed.base_url, browsed.token, "browse", namespace=GREEK)
    text_appears(driver, "#browse-list", "the namespace the browser can reach")
    switcher = Select(element(driver, "#namespace"))
    assert switcher.first_selected_option.get_attribute("value") == LATIN
    greek = driver.find_element(By.CSS_SELECTOR, f"#namespace option[value='{GREEK}']")
    assert greek.get_attribute("disabled") is not None
    assert "not reachable from a browser" in greek.text
    assert driver.execute_script("return sessionStorage.getItem(arguments[0])", NAMESPACE_KEY) == (
        LATIN
    )


def test_browser_a_namespace_no_header_can_name_is_reached_as_the_token_default(
    browsed: Browsed,
) -> None:
    # A token whose only namespace is "Ωmega-…": the server's default for it, which a
    # request naming no namespace works in, so the browser names none.
    db = browsed.server.db
    assert isinstance(db, Path)
    namespace = f"{GREEK}-{uuid.uuid4().hex[:6]}"
    token = create_token(db, "greek only", {namespace: "read+write"})
    with api_client(browsed.base_url, token, namespace="") as client:
        remember(client, content="a memory only a Greek namespace holds")
    driver = browsed.driver
    open_page(driver, browsed.base_url, token, "browse")
    text_appears(driver, "#browse-list", "only a Greek namespace holds")
    switcher = Select(element(driver, "#namespace"))
    assert switcher.first_selected_option.get_attribute("value") == namespace
