"""The web page of a memory follows ``[[Title]]`` links as doctor does (issue 30): a link by
title or alias is listed under "Links out" as a link to the memory it names, and that
memory lists the linking one under "Links in". A real ``kura serve`` on a loopback port
(``tests/web/browsing.py``), read over HTTP."""

from __future__ import annotations

import re
from typing import Any

import httpx
from test_titles import DEPLOY, RELEASE, ROLLBACK


def test_a_memory_page_follows_links_by_title_and_alias(serve_sample: Any) -> None:
    with serve_sample() as (url, root):
        for slug, text in (("deploy-sh", DEPLOY), ("release-steps", RELEASE), ("rollback", ROLLBACK)):
            (root / f"{slug}.md").write_text(text, encoding="utf-8")
        release = httpx.get(f"{url}/ui/memory/release-steps", timeout=30)
        assert release.status_code == 200
        out = re.search(r"<h2>Links out</h2><ul>(.*?)</ul>", release.text, re.S)
        assert out is not None and 'href="/ui/memory/deploy-sh"' in out.group(1), release.text
        assert "no such memory" not in out.group(1)
        deploy = httpx.get(f"{url}/ui/memory/deploy-sh", timeout=30)
        into = re.search(r"<h2>Links in</h2><ul>(.*?)</ul>", deploy.text, re.S)
        assert into is not None, deploy.text
        assert re.findall(r'href="/ui/memory/([\w-]+)"', into.group(1)) == ["release-steps", "rollback"]
