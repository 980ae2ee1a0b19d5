"""Screenshots of the web pages for the README, taken from a real server in headless Chromium.

    python bench/screenshots.py [--out docs]

Copies sample-store/ to a temporary folder (the checkout's copy is never written), serves
it with ``kura serve``'s app on a free loopback port in this process, and saves, for each
page in SHOTS, a PNG at each window size into ``--out``. The browser is Debian's
``chromium`` (or ``$KURA_CHROMIUM``) driven by Playwright, as in the browser tests; nothing
is downloaded. Prints each file written, with the labels drawn and the window size.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}
# (route, window, file name)
SHOTS = [
    ("/ui/graph", DESKTOP, "graph.png"),
    ("/ui/graph", PHONE, "graph-phone.png"),
]
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


@contextmanager
def served(store: Path) -> Iterator[str]:
    import uvicorn

    from kura.config import parse_config
    from kura.serve.http import create_app
    from kura.serve.listener import Deadlines, listen, uvicorn_config
    from kura.serve.pool import StorePool

    pool = StorePool(parse_config({"stores": {"sample": {"path": str(store)}}}), readonly=True)
    sockets = listen("127.0.0.1", 0)
    server = uvicorn.Server(
        uvicorn_config(create_app(pool, watch=False), deadlines=Deadlines(), log_level="warning")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": sockets}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise SystemExit("the server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    binary = os.environ.get("KURA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        sys.exit("no Chromium binary: `apt-get install chromium` (or set KURA_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        store = Path(tmp) / "sample-store"
        shutil.copytree(ROOT / "sample-store", store, ignore=shutil.ignore_patterns(".kura"))
        browser = playwright.chromium.launch(executable_path=binary, args=ARGS)
        try:
            with served(store) as url:
                for route, window, name in SHOTS:
                    shoot(browser, url + route, window, args.out / name)
        finally:
            browser.close()


def shoot(browser: Any, url: str, window: dict[str, int], path: Path) -> None:
    context = browser.new_context(viewport=window)
    try:
        page = context.new_page()
        page.goto(url)
        page.screenshot(path=str(path))
        labels = page.eval_on_selector_all("#graph .node text", "ts => ts.length")
        print(f"wrote {path} ({window['width']}x{window['height']}, {labels} labels)")
    finally:
        context.close()


if __name__ == "__main__":
    main()
