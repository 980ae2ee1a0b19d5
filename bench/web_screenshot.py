"""Screenshot the web app's drafts page for the docs: a private copy of the sample store with
four drafts staged by the real draft writer (tests/web/staging.py), served by a real
``kura serve`` app on a loopback port, opened in Debian's Chromium at 1400×1000.

    python bench/web_screenshot.py [--out docs/web-drafts.png] [--phone docs/web-drafts-phone.png]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn

from kura.config import parse_config
from kura.serve.http import create_app
from kura.serve.listener import Deadlines, listen, uvicorn_config
from kura.serve.pool import StorePool

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests" / "web"))
from staging import stage_examples  # noqa: E402

CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking")


def chromium_binary() -> str | None:
    return os.environ.get("KURA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(HERE / "docs" / "web-drafts.png"))
    parser.add_argument("--phone", default="")
    args = parser.parse_args()
    binary = chromium_binary()
    if binary is None:
        sys.exit("no Chromium: apt-get install chromium (or set KURA_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sample"
        shutil.copytree(HERE / "sample-store", root, ignore=shutil.ignore_patterns(".kura"))
        stage_examples(root)
        pool = StorePool(parse_config({"stores": {"sample": {"path": str(root)}}}))
        sockets = listen("127.0.0.1", 0)
        server = uvicorn.Server(uvicorn_config(create_app(pool, watch=False), deadlines=Deadlines(),
                                               log_level="warning"))  # fmt: skip
        thread = threading.Thread(target=server.run, kwargs={"sockets": sockets}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        url = f"http://127.0.0.1:{sockets[0].getsockname()[1]}/ui/drafts"
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=binary, args=list(CHROMIUM_ARGS))
                shots = [(args.out, {"width": 1400, "height": 1000})]
                if args.phone:
                    shots.append((args.phone, {"width": 390, "height": 844}))
                for out, viewport in shots:
                    page = browser.new_context(viewport=viewport).new_page()
                    page.goto(url)
                    page.screenshot(path=out)
                    print(f"{out}: {viewport['width']}x{viewport['height']} of {url}")
                browser.close()
        finally:
            server.should_exit = True
            thread.join(timeout=10)
            pool.close()


if __name__ == "__main__":
    main()
