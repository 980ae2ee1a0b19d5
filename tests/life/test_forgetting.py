"""Forgotten stays forgotten: an archived or superseded memory keeps its file and stays off
the index, whatever repairs, writes, imports or put-backs run later; listings leave it out
unless asked for all, and then say why; and a purge — a person deleting what they pasted —
is theirs to run on a store that takes no direct writes."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from conftest import Cli, uvicorn_app, write_memory
from test_mcp import client

from kura.config import parse_config
from kura.files.memory_index import parse_index
from kura.life import lifecycle
from kura.serve.http import create_app
from kura.serve.pool import StorePool
from kura.store.store import Store, init_store

TODAY = dt.date.today().isoformat()


def fresh(tmp_path: Path, cli: Cli, *slugs: str, name: str = "s") -> Path:
    """A store with one remembered memory per slug (its description: 'about SLUG')."""
    root = tmp_path / name
    init_store(root, name=name)
    for slug in slugs:
        assert cli("-s", str(root), "remember", slug, f"about {slug}").code == 0
    return root


def named(root: Path) -> tuple[str, ...]:
    return parse_index((root / "MEMORY.md").read_text()).named()


def forget(root: Path) -> None:
    assert Cli()("-s", str(root), "forget", "ship", "--reason", "wrong day").code == 0


def supersede(root: Path) -> None:
    lifecycle.supersede(Store(root), "ship", "port")  # as the distiller records a revision


RETIRE: dict[str, Callable[[Path], None]] = {"archived": forget, "superseded": supersede}


# -- doctor --fix and the index ---------------------------------------------------------------


@pytest.mark.parametrize("how", RETIRE)
def test_a_retired_memory_is_no_island_and_no_dead_end(how: str, cli: Cli, tmp_path: Path) -> None:
    """History is not a graph problem: a forgotten or replaced memory nothing links to is
    not "an island" to fix with links (it was counted among a new store's islands)."""
    root = fresh(tmp_path, cli, "ship", "port", "dock")
    (root / "dock.md").write_text((root / "dock.md").read_text() + "\nsee [[ship]]\n")
    RETIRE[how](root)
    got = cli("-s", str(root), "doctor", "--islands", "--json")
    findings = [f for f in json.loads(got.out)["findings"] if f["check"] == "graph"]
    assert [(f["path"].rsplit("/", 1)[1], f["message"].split(":")[0]) for f in findings] == [
        ("port.md", "an island")
    ]


@pytest.mark.parametrize("how", RETIRE)
def test_doctor_fix_does_not_undo_a_forget(how: str, cli: Cli, tmp_path: Path) -> None:
    root = fresh(tmp_path, cli, "ship", "port")
    RETIRE[how](root)
    before = (root / "MEMORY.md").read_bytes()
    report = json.loads(cli("-s", str(root), "doctor", "--json").out)
    assert [f for f in report["findings"] if f["check"] == "index"] == []
    fixed = cli("-s", str(root), "doctor", "--fix")
    assert fixed.code == 0, fixed
    assert "fixed:" not in fixed.err
    assert (root / "MEMORY.md").read_bytes() == before
    assert named(root) == ("port",)


def test_a_line_left_naming_a_forgotten_memory_is_reported_and_fixed(cli: Cli, tmp_path: Path) -> None:
    """A git merge keeps a line one side removed and the other changed; the memory's file
    says archived. The index must not go on offering it as current."""
    root = fresh(tmp_path, cli, "ship", "port")
    kept = (root / "MEMORY.md").read_text()
    forget(root)
    memory = (root / "ship.md").read_bytes()
    (root / "MEMORY.md").write_text(kept)  # what the merge wrote
    found = cli("-s", str(root), "doctor")
    assert found.code == 1
    assert (
        f"  MEMORY.md:5: ship: archived on {TODAY} (wrong day), yet this line still offers it as "
        "current — run kura doctor --fix to remove the line, or take `archived` out of ship.md "
        "to bring it back  [index]\n"
    ) in found.out
    fixed = cli("-s", str(root), "doctor", "--fix")
    assert fixed.code == 0, fixed
    assert "fixed: removed - [about ship](ship.md) — about ship (archived)\n" in fixed.err
    assert named(root) == ("port",) and (root / "ship.md").read_bytes() == memory


def test_forget_again_takes_out_a_line_left_behind(cli: Cli, tmp_path: Path) -> None:
    root = fresh(tmp_path, cli, "ship", "port")
    kept = (root / "MEMORY.md").read_text()
    forget(root)
    (root / "MEMORY.md").write_text(kept)
    again = cli("-s", str(root), "forget", "ship")
    assert (again.code, again.out) == (0, "archived ship\n")
    assert named(root) == ("port",)
    assert Store(root).show("ship").note.meta["archived_reason"] == "wrong day"  # the first reason stays


def pulled(root: Path, tmp_path: Path, *slugs: str) -> None:
    """Another clone forgets ``slugs`` and git brings its files here (as a checkout writes them)."""
    other = tmp_path / "clone"
    shutil.copytree(root, other, ignore=shutil.ignore_patterns(".kura"))
    for slug in slugs:
        assert Cli()("-s", str(other), "forget", slug, "--reason", "moved on").code == 0
        shutil.copy(other / f"{slug}.md", root / f"{slug}.md")
    shutil.copy(other / "MEMORY.md", root / "MEMORY.md")


def test_a_write_after_a_pull_does_not_put_a_forgotten_line_back(cli: Cli, tmp_path: Path) -> None:
    root = fresh(tmp_path, cli, "ship", "port")
    pulled(root, tmp_path, "ship")
    done = cli("-s", str(root), "remember", "host", "about host")
    assert done.code == 0, done
    assert done.err == ""
    assert named(root) == ("port", "host")


def test_a_write_after_a_pull_that_forgot_many_is_not_refused(cli: Cli, tmp_path: Path) -> None:
    root = fresh(tmp_path, cli, "a", "b", "c", "d", "port")
    pulled(root, tmp_path, "a", "b", "c", "d")
    done = cli("-s", str(root), "remember", "host", "about host")
    assert done.code == 0, done
    assert named(root) == ("port", "host")


def test_an_editor_save_that_drops_a_line_is_still_put_back(cli: Cli, tmp_path: Path) -> None:
    """The put-back itself still works for a current memory."""
    root = fresh(tmp_path, cli, "ship", "port")
    text = (root / "MEMORY.md").read_text()
    (root / "MEMORY.md").write_text(text.replace("- [about ship](ship.md) — about ship\n", ""))
    done = cli("-s", str(root), "remember", "host", "about host")
    assert done.code == 0, done
    assert "put back the lines of ship" in done.err
    assert named(root) == ("port", "host", "ship")


def test_import_adds_no_line_for_a_retired_memory(cli: Cli, tmp_path: Path) -> None:
    source = fresh(tmp_path, cli, "ship", "port", "host", name="source")
    stale = (source / "MEMORY.md").read_text()
    forget(source)
    lifecycle.supersede(Store(source), "host", "port")
    (source / "MEMORY.md").write_text(stale.replace("- [about ship](ship.md) — about ship\n", ""))
    root = fresh(tmp_path, cli, name="target")
    done = cli("-s", str(root), "import", "kura", str(source))
    assert done.code == 0, done
    assert done.out == "imported 3, unchanged 0, conflicts 0 into 'target'\n"
    assert named(root) == ("port",)
    assert (root / "ship.md").read_bytes() == (source / "ship.md").read_bytes()


def test_remember_brings_a_forgotten_memory_back_whole(cli: Cli, tmp_path: Path) -> None:
    root = fresh(tmp_path, cli, "ship", "port")
    forget(root)
    done = cli("-s", str(root), "remember", "ship", "ships Wednesday 09:00")
    assert done.code == 0, done
    meta = Store(root).show("ship").note.meta
    assert "archived" not in meta and "archived_reason" not in meta
    assert named(root) == ("port", "ship")
    assert cli("-s", str(root), "doctor").code == 0


def test_remember_refuses_a_superseded_slug(cli: Cli, tmp_path: Path) -> None:
    root = fresh(tmp_path, cli, "ship", "port")
    supersede(root)
    before = {p.name: p.read_bytes() for p in root.glob("*.md")}
    done = cli("-s", str(root), "remember", "ship", "ships Wednesday 09:00")
    assert done.code == 1
    assert done.err == (
        "kura: error: s/ship: superseded by port; write to port instead, or take `superseded_by` out "
        "of ship.md to make it current again — nothing was written\n"
    )
    assert {p.name: p.read_bytes() for p in root.glob("*.md")} == before


def test_http_remember_brings_back_a_forgotten_memory_and_refuses_a_superseded_one(
    cli: Cli, tmp_path: Path
) -> None:
    root = fresh(tmp_path, cli, "host", "port", "ship")
    forget(root)
    lifecycle.supersede(Store(root), "host", "port")
    service = StorePool(parse_config({"stores": {"s": {"path": str(root)}}}))
    try:
        with uvicorn_app(create_app(service)) as url, httpx.Client(base_url=url, timeout=30) as http:
            back = http.post("/remember", json={"slug": "ship", "description": "ships Wednesday 09:00"})
            assert back.status_code == 200 and back.json()["index_changed"] is True
            refused = http.post("/remember", json={"slug": "host", "description": "the host moved"})
            assert refused.status_code == 422
            assert refused.json()["error"]["message"] == (
                "s/host: superseded by port; write to port instead, or take `superseded_by` out of "
                "host.md to make it current again — nothing was written"
            )
    finally:
        service.close()
    assert "archived" not in Store(root).show("ship").note.meta
    assert named(root) == ("port", "ship")


# -- listings ---------------------------------------------------------------------------------


def retired_store(tmp_path: Path, cli: Cli) -> Path:
    root = fresh(tmp_path, cli, "host", "port", "ship")
    forget(root)
    lifecycle.supersede(Store(root), "host", "port")
    return root


def test_list_leaves_retired_memories_out_unless_all(cli: Cli, tmp_path: Path) -> None:
    root = retired_store(tmp_path, cli)
    listed = cli("-s", str(root), "list")
    assert (listed.code, listed.out) == (0, "port  project    about port\n")
    assert listed.err == "kura: 2 archived or superseded memories not shown — kura list --all lists them\n"
    every = cli("-s", str(root), "list", "--all")
    assert (every.code, every.err) == (0, "")
    assert every.out == (
        "host  project    about host  [superseded by port]\n"
        "port  project    about port\n"
        f"ship  project    about ship  [archived {TODAY}: wrong day]\n"
    )
    assert [m["slug"] for m in json.loads(cli("-s", str(root), "list", "--json").out)] == ["port"]
    rows = json.loads(cli("-s", str(root), "list", "--all", "--json").out)
    assert rows == [
        {"slug": "host", "type": "project", "name": "about host", "description": "about host",
         "state": "superseded", "archived": None, "archived_reason": None, "superseded_by": "port"},
        {"slug": "port", "type": "project", "name": "about port", "description": "about port",
         "state": "current", "archived": None, "archived_reason": None, "superseded_by": None},
        {"slug": "ship", "type": "project", "name": "about ship", "description": "about ship",
         "state": "archived", "archived": TODAY, "archived_reason": "wrong day", "superseded_by": None},
    ]  # fmt: skip


def test_list_of_only_forgotten_memories_finds_nothing(cli: Cli, tmp_path: Path) -> None:
    root = fresh(tmp_path, cli, "ship")
    forget(root)
    listed = cli("-s", str(root), "list")
    assert (listed.code, listed.out) == (2, "")
    assert listed.err == "kura: 1 archived or superseded memory not shown — kura list --all lists them\n"


def test_http_memories_leaves_retired_out_unless_all(cli: Cli, tmp_path: Path) -> None:
    root = retired_store(tmp_path, cli)
    service = StorePool(parse_config({"stores": {"s": {"path": str(root)}}}))
    try:
        with uvicorn_app(create_app(service)) as url, httpx.Client(base_url=url, timeout=30) as http:
            assert [m["slug"] for m in http.get("/memories").json()] == ["port"]
            every = http.get("/memories", params={"all": "true"}).json()
            shown = {
                m["slug"]: (m["state"], m["archived"], m["archived_reason"], m["superseded_by"])
                for m in every
            }
            assert shown == {
                "host": ("superseded", None, None, "port"),
                "port": ("current", None, None, None),
                "ship": ("archived", TODAY, "wrong day", None),
            }
            assert [
                m["slug"] for m in http.get("/memories", params={"all": "1", "type": "user"}).json()
            ] == []
    finally:
        service.close()


def mcp_root(tmp_path: Path, cli: Cli) -> Path:
    retired_store(tmp_path, cli)
    (tmp_path / "kura.toml").write_text('[stores.s]\npath = "s"\n')
    return tmp_path


LISTED = "store 's': 1 memories (2 archived or superseded not shown; all=true lists them)\nport  project    about port"
EVERY = (
    "store 's': 3 memories\n"
    "host  project    about host  [superseded by port]\n"
    "port  project    about port\n"
    f"ship  project    about ship  [archived {TODAY}: wrong day]"
)


def test_mcp_list_leaves_retired_out_unless_all(cli: Cli, tmp_path: Path) -> None:
    with client(mcp_root(tmp_path, cli), "mcp") as mcp:
        assert mcp.tools()["kura_list"].input_schema["properties"]["all"] == {
            "type": "boolean",
            "description": "Also archived and superseded memories, marked (default false).",
        }
        assert mcp.ok("kura_list") == LISTED
        assert mcp.ok("kura_list", all=True) == EVERY
        assert mcp.ok("kura_list", all="true") == EVERY
        assert mcp.error("kura_list", all="maybe") == "kura_list: all must be true or false, got 'maybe'"


def test_mcp_list_through_kura_serve_leaves_retired_out_unless_all(cli: Cli, tmp_path: Path) -> None:
    root = mcp_root(tmp_path, cli)
    service = StorePool(parse_config({"stores": {"s": {"path": str(root / "s")}}}))
    try:
        with uvicorn_app(create_app(service)) as url, client(root, "mcp", KURA_URL=url) as proxy:
            assert proxy.ok("kura_list") == LISTED
            assert proxy.ok("kura_list", all=True) == EVERY
    finally:
        service.close()


# -- purge ------------------------------------------------------------------------------------


def policy_stores(tmp_path: Path) -> Path:
    for name in ("desk", "vault"):
        init_store(tmp_path / name, name=name)
        write_memory(tmp_path / name, "pasted", "reference", "the staging password is hunter2-staging")
        write_memory(tmp_path / name, "near", "project", "staging notes", body="See [[pasted]].")
        (tmp_path / name / "MEMORY.md").write_text(
            "# Memory index\n\n- [pasted](pasted.md) — the staging password\n- [near](near.md) — staging notes\n"
        )
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.desk]\npath = "{tmp_path / "desk"}"\nwrite_policy = "distiller-only"\n\n'
        f'[stores.vault]\npath = "{tmp_path / "vault"}"\nwrite_policy = "frozen"\n'
    )
    return config


def test_purge_works_on_a_distiller_only_store(cli: Cli, tmp_path: Path) -> None:
    config = policy_stores(tmp_path)
    desk = tmp_path / "desk"
    (desk / "near.md").write_text(
        (desk / "near.md").read_text().replace("type: project\n", "type: project\ncontradicted_by: pasted\n")
    )
    done = cli("-c", str(config), "-s", "desk", "forget", "pasted", "--purge", "--yes")
    assert done.code == 0, done
    assert done.out.startswith("purging pasted removes:\n")
    assert not (desk / "pasted.md").exists()
    assert named(desk) == ("near",)
    assert "contradicted_by" not in Store(desk).show("near").note.meta
    assert not any(b"hunter2" in p.read_bytes() for p in desk.rglob("*") if p.is_file())
    # what comes in is still the distiller's alone
    refused = cli("-c", str(config), "-s", "desk", "remember", "other", "a direct write")
    assert refused.code == 1 and "is distiller-only: direct writes are refused" in refused.err


def test_purge_still_refused_on_a_frozen_store(cli: Cli, tmp_path: Path) -> None:
    config = policy_stores(tmp_path)
    vault = tmp_path / "vault"
    before = {p.name: p.read_bytes() for p in vault.glob("*.md")}
    done = cli("-c", str(config), "-s", "vault", "forget", "pasted", "--purge", "--yes")
    assert (done.code, done.out) == (1, "")  # refused before the closure is listed
    assert f"store 'vault' ({vault}) is frozen: nothing may write to it" in done.err
    assert {p.name: p.read_bytes() for p in vault.glob("*.md")} == before


def test_purge_with_no_one_to_answer_says_to_pass_yes_and_removes_nothing(tmp_path: Path) -> None:
    """A purge run from a script (stdin not a terminal, nothing to read) cannot be confirmed:
    it says so and how, rather than a bare "aborted", and deletes nothing."""
    import subprocess
    import sys

    root = tmp_path / "s"
    init_store(root, name="s")
    write_memory(root, "pasted", "project", "a fact pasted by mistake")
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), "forget", "pasted", "--purge"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done
    assert "aborted" not in done.stderr, done.stderr
    assert "nothing was removed" in done.stderr and "--yes" in done.stderr, done.stderr
    assert (root / "pasted.md").exists()


def test_scratch_purge_of_no_such_item_says_so_before_asking(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = tmp_path / "s"
    init_store(root, name="s")
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), "scratch", "--purge", "deadbeef"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done
    assert "purge scratch item" not in done.stdout and "aborted" not in done.stderr, done
    assert "no scratch item 'deadbeef' in store 's'; `kura scratch` lists them" in done.stderr


def _purge(root: Path, slug: str) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), "forget", slug, "--purge", "--yes"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done
    return done.stdout


def test_purge_names_git_history_only_in_git_and_by_the_path_git_knows(tmp_path: Path) -> None:
    """Outside git there is no history to rewrite; in a repository whose store is memory/,
    the filter-repo line names memory/SLUG.md, the path git holds it under."""
    import subprocess

    plain = tmp_path / "plain"
    init_store(plain, name="plain")
    write_memory(plain, "pasted", "project", "a fact pasted by mistake")
    said = _purge(plain, "pasted")
    assert "git history" not in said and "filter-repo" not in said, said
    top = tmp_path / "repo"
    init_store(top / "memory", name="repo")
    write_memory(top / "memory", "pasted", "project", "a fact pasted by mistake")
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    said = _purge(top / "memory", "pasted")
    assert "git filter-repo --invert-paths --path memory/pasted.md (or BFG)" in said, said
