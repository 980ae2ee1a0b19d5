"""MCP ``kura_edit`` and ``kura_history`` over stdio: a real ``kura mcp`` process and the
official SDK's client session — each op, the refusals a model reads and can act on, a
read-only server that neither offers nor runs an edit, and a frozen store."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import uvicorn_app, write_memory
from test_mcp import client

from kura.config import load_config
from kura.serve.http import create_app
from kura.serve.pool import StorePool
from kura.store.store import Store, init_store

KEY = "AKIA" + "IOSFODNN7EXAMPLE"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for name in ("team", "vault"):
        init_store(tmp_path / name, name=name)
        write_memory(tmp_path / name, "deploy", "project", "deploys go out on Tuesday",
                     body="Deploys go out Tuesday.\n\n## Steps\n\n1. build\n")  # fmt: skip
        write_memory(tmp_path / name, "oncall", "project", "who is on call", body="Ask [[deploy]].")
        (tmp_path / name / "MEMORY.md").write_text(
            "# Index\n\n- [deploy](deploy.md) — deploys go out on Tuesday\n- [oncall](oncall.md) — who is on call\n"
        )
    (tmp_path / "kura.toml").write_text(
        '[stores.team]\npath = "team"\n\n[stores.vault]\npath = "vault"\nwrite_policy = "frozen"\n'
    )
    return tmp_path  # its home/ is the autouse fixture's


def test_every_op_through_kura_edit(root: Path) -> None:
    with client(root, "mcp", "--store", "team", "--writable") as mcp:
        schema = mcp.tools()["kura_edit"].input_schema
        assert schema["required"] == ["op", "slug"]
        assert schema["properties"]["op"]["enum"] == [
            "append", "prepend", "replace", "section", "rename", "forget", "purge"
        ]  # fmt: skip
        said = mcp.ok("kura_edit", op="append", slug="deploy", text="Not on holidays.")
        assert said == "appended to deploy in store 'team' (deploy.md)"
        assert mcp.ok("kura_edit", op="replace", name="deploy", find="Tuesday.", new="Wednesday.").endswith(
            ": replaced in body line 2"
        )
        assert "section replaced" in mcp.ok("kura_edit", op="section", slug="deploy", heading="Steps",
                                            text="1. build\n2. ship")  # fmt: skip
        assert mcp.ok("kura_edit", op="prepend", slug="deploy", text="Read first.").startswith(
            "prepended to deploy"
        )
        moved = mcp.ok("kura_edit", op="rename", slug="deploy", to="deploy-day")
        assert (
            moved
            == "renamed deploy to deploy-day (deploy-day.md)\nlinks and pointers to it rewritten in oncall"
        )
        history = mcp.ok("kura_history", slug="deploy-day")
        assert history.startswith("deploy-day in store 'team': ") and "agent (MCP edit append)" in history
        forgot = mcp.ok("kura_edit", op="forget", slug="oncall", reason="rota moved")
        assert forgot == "forgot oncall: archived (rota moved (MCP)); still on disk, off the index"
        assert "send confirm equal to the slug" in mcp.error("kura_edit", op="purge", slug="deploy-day")
        assert mcp.ok("kura_edit", op="purge", slug="deploy-day", confirm="deploy-day").startswith(
            "purged deploy-day"
        )
    assert not (root / "team" / "deploy-day.md").exists()
    assert Store(root / "team").show("oncall").note.body == "\nAsk [[deploy-day]].\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ({"op": "replace", "slug": "deploy", "find": "Tuesday", "text": "x"}, "occurs 2 times (the description, body line 2)"),
        ({"op": "replace", "slug": "deploy", "find": "Friday", "text": "x"}, "'Friday' is not in its description or body"),
        ({"op": "append", "slug": "deploy", "text": f"the key {KEY}"}, "looks like it holds a secret"),
        ({"op": "append", "slug": "nope", "text": "x"}, "no memory 'nope' in store 'team'"),
        ({"op": "twist", "slug": "deploy"}, "op must be one of append, prepend"),
        ({"op": "append", "slug": "deploy"}, "append needs text"),
    ],
)  # fmt: skip
def test_refusals_are_one_line_a_model_can_act_on(root: Path, args: dict[str, str], said: str) -> None:
    before = (root / "team" / "deploy.md").read_bytes()
    with client(root, "mcp", "--store", "team", "--writable") as mcp:
        text = mcp.error("kura_edit", **args)
    assert said in text and KEY not in text and str(root) not in text
    assert (root / "team" / "deploy.md").read_bytes() == before


def test_a_read_only_server_neither_offers_nor_runs_an_edit(root: Path) -> None:
    with client(root, "mcp", "--store", "team") as mcp:
        tools = mcp.tools()
        assert "kura_edit" not in tools and "kura_history" in tools
        text = mcp.error("kura_edit", op="append", slug="deploy", text="x")
        assert text.startswith("kura_edit is off: this MCP server is read-only")
        assert mcp.ok("kura_history", slug="deploy").startswith("deploy in store 'team'")
    with client(root, "mcp", "--store", "vault", "--writable") as frozen:
        assert "kura_edit" not in frozen.tools()
        assert "is frozen: nothing may write to it" in frozen.error("kura_edit", op="forget", slug="deploy")
    assert "archived" not in (root / "vault" / "deploy.md").read_text()


def test_a_proxy_edits_through_the_running_server(root: Path) -> None:
    """``kura mcp`` with ``KURA_URL``: the edit and the history go through ``POST /edit`` and
    ``GET /history/{slug}`` of a real ``kura serve`` app."""
    service = StorePool(load_config(str(root / "kura.toml")))
    try:
        with uvicorn_app(create_app(service, watch=False)) as url, client(root, "mcp", KURA_URL=url,
                                                                          KURA_READONLY="0") as mcp:  # fmt: skip
            assert mcp.ok(
                "kura_edit", op="append", slug="deploy", text="Via the server.", store="team"
            ).startswith("appended to deploy in store 'team'")
            assert "agent (HTTP edit append)" in mcp.ok("kura_history", slug="deploy", store="team")
            assert "is frozen" in mcp.error("kura_edit", op="append", slug="deploy", text="x", store="vault")
    finally:
        service.close()
    assert Store(root / "team").show("deploy").note.body.endswith("Via the server.\n")


def test_an_edit_waits_for_a_writer_holding_the_lock_and_keeps_its_save(root: Path) -> None:
    """A real second process holds the store lock and saves the file meanwhile; the MCP
    server's edit queues for the lock, then appends to that save."""
    team, go, held = root / "team", root / "go", root / "held"
    holder = subprocess.Popen([sys.executable, "-c", f"""
import pathlib, time
from kura.store.atomic import locked
team = pathlib.Path({str(team)!r})
with locked(team / ".kura" / "lock"):
    pathlib.Path({str(held)!r}).touch()
    while not pathlib.Path({str(go)!r}).exists():
        time.sleep(0.01)
    path = team / "deploy.md"
    path.write_text(path.read_text() + "\\nSaved by the editor.\\n")
"""])  # fmt: skip
    try:
        with client(root, "mcp", "--store", "team", "--writable") as mcp, ThreadPoolExecutor(1) as pool:
            _wait(held.exists)
            pending = pool.submit(mcp.ok, "kura_edit", op="append", slug="deploy", text="Added over MCP.")
            queue = team / ".kura" / "lock.queue"
            _wait(
                lambda: (
                    queue.is_dir() and len([p for p in queue.iterdir() if not p.name.startswith(".")]) >= 2
                )
            )
            assert not pending.done()
            go.touch()
            assert pending.result(timeout=120).startswith("appended to deploy")
    finally:
        go.touch()
        holder.wait(timeout=60)
    assert Store(team).show("deploy").note.body.endswith("Saved by the editor.\n\nAdded over MCP.\n")


def _wait(ready: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, "not seen in time"
        time.sleep(0.01)
