"""``at`` on HTTP ``/recall`` and MCP ``kura_recall``: the store as it stood on a day, over a
real server on 127.0.0.1 and a real ``kura mcp`` process with an SDK client session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import uvicorn_app
from test_mcp import client

from kura.config import parse_config
from kura.serve.http import create_app
from kura.serve.pool import StorePool

MEMORIES = {
    "deploy-heroku": (
        "The app is deployed on Heroku",
        "created: 2024-01-05\nsuperseded_by: deploy-fly\nvalid_until: 2024-06-01\n",
    ),
    "deploy-fly": ("The app is deployed on Fly.io", "created: 2024-06-01\nsupersedes: [deploy-heroku]\n"),
}
QUESTION = "where is the app deployed"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("as-of-serve")
    store = base / "team"
    store.mkdir()
    lines = ["# Memory index", ""]
    for slug, (text, extra) in MEMORIES.items():
        head = f"---\nname: {slug}\ndescription: {text}\ntype: project\n{extra}---\n"
        (store / f"{slug}.md").write_text(f"{head}\n{text}.\n", encoding="utf-8")
        lines.append(f"- [{slug}]({slug}.md) — {text}")
    (store / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (base / "kura.toml").write_text('[stores.team]\npath = "team"\n')
    (base / "home").mkdir()
    return base


@pytest.fixture(scope="module")
def http(root: Path) -> Iterator[httpx.Client]:
    service = StorePool(parse_config({"stores": {"team": {"path": str(root / "team")}}}))
    try:
        with uvicorn_app(create_app(service)) as url, httpx.Client(base_url=url, timeout=120) as session:
            yield session
    finally:
        service.close()


def test_http_recall_at_answers_as_the_store_stood_then(http: httpx.Client) -> None:
    then = http.post("/recall", json={"question": QUESTION, "at": "2024-03-01"})
    assert then.status_code == 200, then.text
    body = then.json()
    assert body["at"] == "2024-03-01"
    assert [p["slug"] for p in body["picked"]] == ["deploy-heroku"]
    assert body["picked"][0]["status"] == "asserted"
    now = http.post("/recall", json={"question": QUESTION}).json()
    assert now["at"] is None and [p["slug"] for p in now["picked"]][:2] == ["deploy-fly", "deploy-heroku"]


@pytest.mark.parametrize("day", ["2024-02-30", "March 1st", "2999-01-01"])
def test_http_recall_refuses_a_bad_date_with_422(http: httpx.Client, day: str) -> None:
    refused = http.post("/recall", json={"question": QUESTION, "at": day})
    assert refused.status_code == 422, refused.text
    assert "YYYY-MM-DD" in refused.text or "after today" in refused.text


def test_mcp_recall_at_says_it_is_as_of_the_day_and_refuses_a_bad_one(root: Path) -> None:
    with client(root, "mcp") as mcp:
        assert "at" in mcp.tools()["kura_recall"].input_schema["properties"]
        text = mcp.ok("kura_recall", question=QUESTION, at="2024-03-01", hops=0)
        head = text.partition("\n\n")[0]
        assert head.startswith("recalled from store 'team' as of 2024-03-01") and head.endswith(
            ": deploy-heroku"
        )
        later = mcp.ok("kura_recall", question=QUESTION, at="2024-07-01", hops=0)
        assert later.partition("\n\n")[0].endswith(": deploy-fly")
        refused = mcp.error("kura_recall", question=QUESTION, at="yesterday")
        assert "YYYY-MM-DD" in refused
