"""Over HTTP and MCP, a memory is read by the title or alias its links use, and a read says
which memory each ``[[link]]`` reaches (``linked``) — so an agent can follow
``[[Deploy Script]]`` the way doctor and recall's walk already do. Before, the read was a 404
and the links were given only as written. A real server on loopback and a real ``kura mcp``."""

from __future__ import annotations

from pathlib import Path

import httpx
from conftest import uvicorn_app
from test_mcp import Client

from kura.config import parse_config
from kura.serve.http import create_app
from kura.serve.pool import StorePool

DEPLOY = (
    "---\nname: Deploy Script\ndescription: scripts/deploy.sh ships the app\ntype: project\n---\n\nShip it.\n"
)
RELEASE = (
    "---\nname: Release steps\ndescription: a release goes out on Tuesdays\ntype: project\n---\n\n"
    "Run [[Deploy Script|the script]].\n"
)


def stores(tmp_path: Path) -> Path:
    root = tmp_path / "team"
    root.mkdir()
    (root / "deploy-sh.md").write_text(DEPLOY)
    (root / "release-steps.md").write_text(RELEASE)
    (tmp_path / "kura.toml").write_text('[stores.team]\npath = "team"\n')
    (tmp_path / "home").mkdir(exist_ok=True)
    return root


def test_http_reads_by_title_and_names_where_each_link_goes(tmp_path: Path) -> None:
    root = stores(tmp_path)
    service = StorePool(parse_config({"stores": {"team": {"path": str(root)}}}))
    try:
        with uvicorn_app(create_app(service)) as url, httpx.Client(base_url=url, timeout=30) as http:
            release = http.get("/memory/release-steps").json()
            assert release["links"] == ["Deploy Script"] and release["linked"] == ["deploy-sh"]
            by_title = http.get("/memory/Deploy Script")
            assert by_title.status_code == 200, by_title.text
            assert by_title.json()["slug"] == "deploy-sh" and by_title.json()["text"] == DEPLOY
            assert http.get("/memory/Nobody Titled So").status_code == 404
    finally:
        service.close()


def test_mcp_reads_by_title(tmp_path: Path) -> None:
    stores(tmp_path)
    client = Client(tmp_path, "mcp")
    try:
        assert client.ok("kura_read", slug="Deploy Script") == DEPLOY
        assert "no memory 'Nobody'" in client.error("kura_read", slug="Nobody")
    finally:
        client.close()
