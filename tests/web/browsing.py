"""Browser fixtures (loaded by tests/conftest.py as a plugin): a real headless Chromium for the web pages, driven by Playwright (``playwright`` from the
test extra; the browser is Debian's ``chromium``, never one downloaded at run time).

Without a Chromium binary the browser tests skip and say how to install one, unless
``KURA_BROWSER_TESTS=required`` (``.ci/run`` sets it after installing Chromium), where a
missing browser fails the run instead.

``pages(url)`` opens a fresh browser context and page on ``url``'s origin; every request the
page makes is recorded, and at teardown a request that left that origin fails the test.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from conftest import uvicorn_app

from kura.config import parse_config
from kura.serve.http import create_app
from kura.serve.pool import StorePool

# Started as root on a machine with no outside network: no sandbox, no GPU, and none of
# Chromium's own background connections (they are refused here and slow every start).
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
)
DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}


def chromium_binary() -> str | None:
    """``$KURA_CHROMIUM``, else ``chromium`` or ``chromium-browser`` on PATH."""
    return os.environ.get("KURA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


# One browser per test module, not per session: Playwright's sync API keeps its event loop
# marked running in this thread while it is started, and a later test elsewhere that calls
# asyncio.run() would fail ("cannot be called from a running event loop").
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    binary = chromium_binary()
    if binary is None:
        message = (
            "no Chromium binary: `apt-get install chromium` (or set KURA_CHROMIUM) to run the browser tests"
        )
        if os.environ.get("KURA_BROWSER_TESTS") == "required":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=binary, args=list(CHROMIUM_ARGS))
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Opened:
    """A page and every URL it asked for."""

    page: Any
    origin: str
    requests: list[str] = field(default_factory=list)

    def foreign(self) -> list[str]:
        """Requests that left the server's origin (data: and about: URLs stay in the page)."""
        return [url for url in self.requests if not _same_origin(url, self.origin)]


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _same_origin(url: str, origin: str) -> bool:
    return url.split(":", 1)[0] in ("data", "about", "blob") or _origin(url) == origin


@pytest.fixture
def pages(browser: Any) -> Iterator[Callable[..., Opened]]:
    """``pages(url, viewport=DESKTOP, headers=None)``: a new context and page, loaded at ``url``."""
    contexts: list[Any] = []
    opened: list[Opened] = []

    def open_page(
        url: str, viewport: dict[str, int] | None = None, headers: dict[str, str] | None = None
    ) -> Opened:
        context = browser.new_context(viewport=viewport or DESKTOP, extra_http_headers=headers or {})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        result = Opened(page, _origin(url))
        page.on("request", lambda request: result.requests.append(request.url))
        opened.append(result)
        page.goto(url)
        return result

    try:
        yield open_page
    finally:
        for context in contexts:
            context.close()
    for result in opened:
        assert result.foreign() == [], f"the page asked for another origin: {result.foreign()}"


@pytest.fixture
def serve_sample(sample_copy: Callable[[Path], Path], tmp_path: Path) -> Callable[..., Any]:
    """``with serve_sample(token=None, readonly=False, policy="direct-allowed") as (url, root):``
    a real kura server on a free loopback port over a private copy of the sample store (named
    ``sample``, with that write policy)."""

    @contextmanager
    def serve(
        *, token: str | None = None, readonly: bool = False, policy: str = "direct-allowed"
    ) -> Iterator[tuple[str, Path]]:
        root = sample_copy(tmp_path / "sample")
        config = parse_config({"stores": {"sample": {"path": str(root), "write_policy": policy}}})
        pool = StorePool(config, readonly=readonly)
        try:
            with uvicorn_app(create_app(pool, token=token, watch=False)) as url:
                yield url, root
        finally:
            pool.close()

    return serve
