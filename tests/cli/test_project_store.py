"""Inside a project, the project's store; beside it, the person's own.

A person's kura.toml (``$KURA_HOME/kura.toml``) names their own store as the default; a git
project holds ``memory/`` with a MEMORY.md. Every command run anywhere inside the project
(a nested subfolder too) works on the project's store, whatever the personal default says;
``-s`` and ``$KURA_STORE`` still choose; outside any project the personal default is used as
before. The map shows the project's map and then the person's pinned rules; recall searches
both stores and names the store of each hit; a write lands in the project's store. All of
it through the real ``kura`` executable, with a real ``git init``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import make_store
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

KURA = str(Path(sys.executable).parent / "kura")
SERVICE = "its dashboards, runbooks and on-call rota live in the ops wiki under the service's own page"


@pytest.fixture
def world(isolated: Path) -> dict[str, Path]:
    """A person's store (default of the user-level kura.toml) and a git project with its own
    store, each with a rule and a fact."""
    home = Path(os.environ["KURA_HOME"])
    me = isolated / "me"
    make_store(me, [
        ("tabs-not-spaces", "feedback", "the person indents with tabs, never spaces", None),
        ("person-likes-tea", "user", "the person drinks green tea, never coffee", None),
        ("holiday-in-lisbon", "project", "the person spends August holidays in Lisbon", None),
    ])  # fmt: skip
    (home / "kura.toml").write_text(f'[stores.me]\npath = "{me}"\n', encoding="utf-8")
    project = isolated / "acme"
    make_store(project / "memory", [
        ("staging-cluster", "project", "the staging cluster lives in eu-west-3", None),
        ("deploy-on-fridays", "feedback", "no deploys to prod on Fridays after noon", None),
        *[(f"service-{n}", "reference", f"service {n} of the acme platform: {SERVICE}", None) for n in range(8)],
    ])  # fmt: skip
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    outside = isolated / "elsewhere"
    outside.mkdir()
    return {"me": me, "project": project, "deep": deep, "outside": outside}


def kura(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KURA, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, env={**os.environ, **env},
    )  # fmt: skip


def block_store(out: str) -> str:
    return out.split("\n", 1)[0]


@pytest.mark.parametrize("where", ["project", "deep"])
def test_prefill_picks_the_project_store_from_anywhere_in_the_project(
    world: dict[str, Path], where: str
) -> None:
    got = kura("prefill", cwd=world[where])
    assert got.returncode == 0, got.stderr
    assert block_store(got.stdout) == "<<<KURA-MAP store=acme>>>"
    assert "staging-cluster.md" in got.stdout


def test_the_person_s_pinned_rules_follow_the_project_s_map(world: dict[str, Path]) -> None:
    got = kura("prefill", "--json", cwd=world["deep"])
    block = json.loads(got.stdout)
    text = block["text"]
    project_end = text.index("<<<END KURA-MAP>>>")
    rules = text[project_end:]
    assert rules.startswith("<<<END KURA-MAP>>>\n<<<KURA-RULES store=me>>>\n")
    assert "tabs-not-spaces.md" in rules and "person-likes-tea.md" in rules
    assert "holiday-in-lisbon" not in text  # a project-type memory of the person's: recall finds it
    assert "tabs-not-spaces" not in text[:project_end]
    assert [(p["store"], p["scope"]) for p in block["parts"]] == [("acme", "project"), ("me", "person")]
    assert block["parts"][1]["rules"] == block["parts"][1]["shown"] == 2
    assert block["chars"] == len(text)


def test_under_a_ceiling_the_person_s_rules_go_before_any_project_line(world: dict[str, Path]) -> None:
    whole = json.loads(kura("prefill", "--json", cwd=world["deep"]).stdout)
    project_chars = whole["parts"][0]["chars"]
    for ceiling in (project_chars, project_chars + 40, whole["chars"] - 10, whole["chars"]):
        got = json.loads(kura("prefill", "--json", "--max-chars", str(ceiling), cwd=world["deep"]).stdout)
        assert got["chars"] <= ceiling
        assert got["text"].startswith(whole["text"][:project_chars])  # the project's map, whole
        shown = got["parts"][1]["shown"]
        assert shown == (2 if ceiling == whole["chars"] else 0 if ceiling < project_chars + 200 else 1)
        assert (shown == 2) == ("tabs-not-spaces.md" in got["text"] and "person-likes-tea.md" in got["text"])


def test_outside_any_project_the_personal_default_as_before(world: dict[str, Path]) -> None:
    got = kura("prefill", cwd=world["outside"])
    assert block_store(got.stdout) == "<<<KURA-MAP store=me>>>"
    assert "KURA-RULES" not in got.stdout  # the person's store is the map itself


@pytest.mark.parametrize("how", ["-s", "KURA_STORE"])
def test_s_and_kura_store_override_the_project_store(world: dict[str, Path], how: str) -> None:
    args, env = (["-s", "me"], {}) if how == "-s" else ([], {"KURA_STORE": "me"})
    got = kura(*args, "prefill", cwd=world["deep"], **env)
    assert block_store(got.stdout) == "<<<KURA-MAP store=me>>>"
    listed = kura(*args, "list", cwd=world["deep"], **env)
    assert "tabs-not-spaces" in listed.stdout and "staging-cluster" not in listed.stdout


def test_recall_searches_both_stores_and_names_the_store_of_each_hit(world: dict[str, Path]) -> None:
    got = kura("recall", "where does the staging cluster live", "--json", cwd=world["deep"])
    assert got.returncode == 0, got.stderr
    found = json.loads(got.stdout)
    stores = {p["slug"]: p["store"] for p in found["picked"]}
    assert stores["staging-cluster"] == "acme"
    assert found["stores"] == ["acme", "me"]
    tea = json.loads(
        kura("recall", "what does the person drink, tea or coffee", "--json", cwd=world["deep"]).stdout
    )
    assert {p["slug"]: p["store"] for p in tea["picked"]}["person-likes-tea"] == "me"
    assert "the person drinks green tea" in tea["context"]
    text = kura("recall", "what does the person drink, tea or coffee", cwd=world["deep"]).stdout
    assert "person-likes-tea [me]" in text.split("\n", 1)[0]


def test_context_tells_the_person_s_rules_and_memories_beside_the_project_s(world: dict[str, Path]) -> None:
    got = kura(
        "context",
        "the staging cluster and the person's August holidays in Lisbon",
        "--json",
        cwd=world["deep"],
    )
    told = json.loads(got.stdout)
    items = {(i["section"], i["source"]): i.get("store", "") for i in told["items"]}
    assert items[("rules", "tabs-not-spaces")] == "me"
    assert items[("rules", "deploy-on-fridays")] == ""  # the project's own rule
    assert items[("memory", "holiday-in-lisbon")] == "me"
    assert items[("memory", "staging-cluster")] == ""
    assert "(from store 'me')" in told["text"]
    assert told["text"].index("deploy-on-fridays") < told["text"].index("tabs-not-spaces")


def test_remember_writes_into_the_project_s_store(world: dict[str, Path]) -> None:
    got = kura(
        "remember", "ci-runner", "CI runs on the self-hosted runner", "--type", "project", cwd=world["deep"]
    )
    assert got.returncode == 0, got.stderr
    assert (world["project"] / "memory" / "ci-runner.md").is_file()
    assert not (world["me"] / "ci-runner.md").exists()
    assert "ci-runner.md" in (world["project"] / "memory" / "MEMORY.md").read_text()


def test_doctor_checks_the_project_s_store(world: dict[str, Path]) -> None:
    (world["project"] / "memory" / "orphan.md").write_text("---\nname: orphan\n---\nno index line\n")
    got = kura("doctor", cwd=world["deep"])
    assert "orphan" in got.stdout + got.stderr
    clean = kura("-s", "me", "doctor", cwd=world["deep"])
    assert "orphan" not in clean.stdout + clean.stderr


def test_stores_says_which_store_and_why(world: dict[str, Path]) -> None:
    got = json.loads(kura("stores", "--json", cwd=world["deep"]).stdout)
    project = world["project"]
    assert got["chosen"] == {
        "store": "acme",
        "path": str(project / "memory"),
        "why": f"project store: {project / 'memory'} (found from {world['deep']} up to the git root {project})",
    }
    assert got["beside"]["store"] == "me"
    assert {r["name"]: r["scope"] for r in got["stores"]} == {"me": "person", "acme": "project"}
    text = kura("stores", cwd=world["deep"]).stdout
    assert f"this folder uses 'acme': project store: {project / 'memory'}" in text
    assert (
        json.loads(kura("-s", "me", "stores", "--json", cwd=world["deep"]).stdout)["chosen"]["why"] == "-s me"
    )
    env = json.loads(kura("stores", "--json", cwd=world["deep"], KURA_STORE="me").stdout)
    assert env["chosen"]["why"] == "$KURA_STORE=me" and env["beside"] is None
    home = Path(os.environ["KURA_HOME"]) / "kura.toml"
    away = json.loads(kura("stores", "--json", cwd=world["outside"]).stdout)
    assert away["chosen"] == {"store": "me", "path": str(world["me"]), "why": f"the default in {home}"}


def mcp_calls(cwd: Path, *calls: tuple[str, dict[str, Any]], env: dict[str, str]) -> list[str]:
    """``kura mcp`` started in ``cwd`` as a host starts it, over a real SDK session: the
    text of each tool call's answer."""

    async def session() -> list[str]:
        params = StdioServerParameters(command=KURA, args=["mcp"], env=env, cwd=str(cwd))
        with tempfile.TemporaryFile("w+") as errlog:
            async with stdio_client(params, errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                answers = []
                for name, arguments in calls:
                    result = await client.call_tool(name, arguments)
                    assert not result.is_error, result.content
                    answers.append(result.content[0].text)  # type: ignore[union-attr]
                return answers

    return anyio.run(session)


def test_mcp_started_in_the_project_recalls_from_both_and_writes_to_the_project(
    world: dict[str, Path],
) -> None:
    env = {**os.environ, "KURA_READONLY": "0"}
    tea, _ = mcp_calls(
        world["deep"],
        ("kura_recall", {"question": "what does the person drink, tea or coffee"}),
        (
            "kura_remember",
            {"slug": "ci-runner", "description": "CI runs on the self-hosted runner", "type": "project"},
        ),
        env=env,
    )
    assert tea.startswith("recalled from stores 'acme' and 'me'")
    assert "person-likes-tea [me]" in tea.split("\n", 1)[0]
    assert "=== person-likes-tea [me] ===" in tea
    assert (world["project"] / "memory" / "ci-runner.md").is_file()
    assert not (world["me"] / "ci-runner.md").exists()


def test_a_hook_chooses_from_the_folder_it_is_handed(world: dict[str, Path]) -> None:
    from kura.cli.map import prefill_block

    assert Path.cwd() != world["deep"]  # the test runs in its own work folder, outside the project
    block = prefill_block(None, None, cwd=world["deep"])
    assert block.text.startswith("<<<KURA-MAP store=acme>>>") and "<<<KURA-RULES store=me>>>" in block.text
    assert prefill_block(None, None, cwd=world["outside"]).text.startswith("<<<KURA-MAP store=me>>>")


def test_kura_serve_s_default_in_a_project_is_the_project_s_store(world: dict[str, Path]) -> None:
    from kura.config import load_config
    from kura.serve.pool import StorePool

    pool = StorePool(load_config(cwd=world["deep"]))
    try:
        assert {row["name"]: row["default"] for row in pool.stores()} == {"me": False, "acme": True}
        found = pool.recall("what does the person drink, tea or coffee")
        assert found["stores"] == ["acme", "me"]
        assert {p["slug"]: p["store"] for p in found["picked"]}["person-likes-tea"] == "me"
        alone = pool.recall("what does the person drink, tea or coffee", selector="me")
        assert "stores" not in alone and alone["store"] == "me"
        told = pool.context("the staging cluster and the person's August holidays in Lisbon")
        assert any(i.get("store") == "me" for i in told["items"])
    finally:
        pool.close()


def test_serve_bound_to_a_folder_that_is_no_configured_store(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    other = world["outside"] / "memory"
    make_store(other, [("a-fact", "project", "a fact somewhere else", None)])
    got = kura("-s", str(other), "stores", "--json", cwd=world["deep"])
    assert json.loads(got.stdout)["chosen"]["why"] == f"-s {other}"
    from kura.cli.base import Globals
    from kura.cli.serve import _config

    monkeypatch.chdir(world["deep"])  # in the project: its store is no default of a server bound elsewhere
    config, bound = _config(Globals(None, str(other), "-s"))
    assert (bound, list(config.stores), config.default_store) == ("memory", ["memory"], "memory")


def test_a_person_s_map_woven_before_pinned_lines_were_recorded_is_woven_again(
    world: dict[str, Path],
) -> None:
    assert kura("-s", "me", "weave", "--no-model", cwd=world["deep"]).returncode == 0
    record = world["me"] / ".kura" / "map.json"
    meta = json.loads(record.read_text())
    del meta["pinned"]  # as an older kura wrote it
    record.write_text(json.dumps(meta))
    got = kura("prefill", cwd=world["deep"])
    assert "<<<KURA-RULES store=me>>>" in got.stdout and "tabs-not-spaces.md" in got.stdout
    assert isinstance(json.loads(record.read_text())["pinned"], list)
