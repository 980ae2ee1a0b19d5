"""Age after a copy, names that look alike, and a doctor that speaks in proportion.

Each age case is a real store moved the way people move stores — ``cp -r``, ``git clone``,
a day of real edits — and woven by the real ``kura weave``; each name case goes through
the CLI, a real HTTP server on a loopback socket and a real ``kura mcp`` process."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
import unicodedata
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from anyio.from_thread import start_blocking_portal
from conftest import Cli, make_store, uvicorn_app, write_memory
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from kura.config import load_config
from kura.serve.http import create_app
from kura.serve.pool import StorePool

NFC = "café"
NFD = unicodedata.normalize("NFD", NFC)
LONG_TITLE = "The deploy window and who signs off on a Friday release"  # 55 characters


def days_ago(days: int) -> float:
    """Noon, ``days`` calendar days before today, as a timestamp."""
    noon = dt.datetime.combine(dt.date.today() - dt.timedelta(days=days), dt.time(12))
    return noon.timestamp()


def set_days(root: Path, ages: dict[str, int]) -> None:
    for slug, days in ages.items():
        os.utime(root / f"{slug}.md", (days_ago(days), days_ago(days)))


def undated(root: Path, count: int, prefix: str = "m") -> list[str]:
    """A store of ``count`` hand-written memories with no date written in them."""
    slugs = [f"{prefix}{i:02d}" for i in range(count)]
    make_store(root, [(s, "project", f"{s}: what we learned about the {s} service", None) for s in slugs])
    return slugs


def weave(cli: Cli, root: Path) -> dict[str, Any]:
    done = cli("-s", str(root), "weave", "--json")
    assert done.code in (0, 2), done  # 2: woven, and the same text as the map it had
    summary: dict[str, Any] = json.loads(done.out)
    return summary


def copy_note(count: int, day: dt.date) -> str:
    return (
        f"{count} memories have no date of their own and share one file date ({day.isoformat()}) "
        "with a fifth of the store or more, as a copy, restore or checkout leaves them: their age "
        "is unknown, so they are not counted as fresh — a date in the frontmatter (`updated: "
        "YYYY-MM-DD`, which kura remember writes) or a git commit gives a memory its age"
    )


def git(root: Path, *args: str, days: int = 0) -> None:
    stamp = dt.datetime.fromtimestamp(days_ago(days)).isoformat()
    env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root, env=env, check=True, capture_output=True,
    )  # fmt: skip


# -- age ----------------------------------------------------------------------------------------


def test_a_copied_small_store_does_not_read_as_all_fresh(cli: Cli, tmp_path: Path) -> None:
    slugs = undated(tmp_path / "orig", 8)
    set_days(tmp_path / "orig", {slug: 30 + 10 * i for i, slug in enumerate(slugs)})
    assert weave(cli, tmp_path / "orig")["layers"] == {"other": 2, "trigger": 8}
    subprocess.run(["cp", "-r", str(tmp_path / "orig"), str(tmp_path / "copy")], check=True)
    copied = weave(cli, tmp_path / "copy")
    assert copied["layers"] == {"other": 2, "trigger": 8}
    assert copied["notes"] == [copy_note(8, dt.date.today())]
    said = cli("-s", str(tmp_path / "copy"), "weave", "--force")
    assert said.err == f"kura: {copy_note(8, dt.date.today())}\n"


def test_a_copied_big_store_loses_its_fresh_window_not_its_history(cli: Cli, tmp_path: Path) -> None:
    slugs = undated(tmp_path / "orig", 60)
    set_days(tmp_path / "orig", {slug: 1 + i for i, slug in enumerate(slugs)})  # one a day, spread
    before = weave(cli, tmp_path / "orig")
    assert (before["layers"], before["notes"]) == ({"fresh": 13, "other": 2, "trigger": 47}, [])
    subprocess.run(["cp", "-r", str(tmp_path / "orig"), str(tmp_path / "copy")], check=True)
    copied = weave(cli, tmp_path / "copy")
    assert copied["layers"] == {"other": 2, "trigger": 60}
    assert copied["notes"] == [copy_note(60, dt.date.today())]


def test_a_busy_day_in_a_store_with_history_stays_fresh(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "s"
    slugs = undated(root, 30)
    set_days(root, {slug: 20 + i for i, slug in enumerate(slugs)})
    assert weave(cli, root)["layers"] == {"other": 2, "trigger": 30}
    for i in range(8):  # a day of real work: new memories, corrections, two edits by hand
        assert cli("-s", str(root), "remember", f"new{i}", f"what we found today, item {i}").code == 0
    for slug in slugs[:4]:
        assert cli("-s", str(root), "remember", slug, f"{slug}: corrected today").code == 0
    for slug in slugs[10:12]:
        path = root / f"{slug}.md"
        path.write_text(path.read_text() + "\nEdited by hand today.\n")
    busy = weave(cli, root)
    assert (busy["layers"], busy["notes"]) == ({"fresh": 14, "other": 2, "trigger": 24}, [])


def test_a_git_clone_is_dated_by_its_commits(cli: Cli, tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    undated(origin, 10)
    git(origin, "init", "-q")
    git(origin, "add", ".")
    git(origin, "commit", "-qm", "old memories", days=60)
    subprocess.run(["git", "clone", "-q", str(origin), str(tmp_path / "clone")], check=True)
    clone = tmp_path / "clone"
    cloned = weave(cli, clone)
    assert (cloned["layers"], cloned["notes"]) == ({"other": 2, "trigger": 10}, [])
    assert cli("-s", str(clone), "remember", "today", "learned in the clone today").code == 0
    write_memory(clone, "by-hand", "project", "written by hand in the clone today")
    assert cli("-s", str(clone), "doctor", "--fix").code == 0
    later = weave(cli, clone)
    assert (later["layers"], later["notes"]) == ({"fresh": 2, "other": 2, "trigger": 10}, [])


def test_a_small_new_store_is_fresh_when_written_through_kura(cli: Cli, tmp_path: Path) -> None:
    for i in range(3):
        assert cli("-s", str(tmp_path / "new"), "remember", f"n{i}", f"new fact number {i}").code == 0
    assert weave(cli, tmp_path / "new")["layers"] == {"fresh": 3, "other": 4}
    undated(tmp_path / "hand", 3)  # written by hand today, no dates, no git: a copy looks the same
    by_hand = weave(cli, tmp_path / "hand")
    assert by_hand["layers"] == {"other": 2, "trigger": 3}
    assert by_hand["notes"] == [copy_note(3, dt.date.today())]


def test_one_undated_memory_among_dated_copies_is_of_unknown_age(cli: Cli, tmp_path: Path) -> None:
    dated = [(f"d{i}", "project", f"dated fact number {i}", "2026-01-05") for i in range(4)]
    make_store(tmp_path / "orig", [*dated, ("loose", "project", "the one fact with no date", None)])
    set_days(tmp_path / "orig", {"loose": 90})
    subprocess.run(["cp", "-r", str(tmp_path / "orig"), str(tmp_path / "copy")], check=True)
    copied = weave(cli, tmp_path / "copy")
    assert copied["layers"].get("fresh", 0) == 0
    assert copied["notes"] == [
        f"1 memory has no date of its own and shares one file date ({dt.date.today().isoformat()}) "
        "with a fifth of the store or more, as a copy, restore or checkout leaves it: its age is "
        "unknown, so it is not counted as fresh — a date in the frontmatter (`updated: YYYY-MM-DD`, "
        "which kura remember writes) or a git commit gives a memory its age"
    ]


# -- names --------------------------------------------------------------------------------------


def test_remember_with_a_file_name_says_which_memory_it_wrote(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "s"
    done = cli("-s", str(root), "remember", "x.md", "the x fact")
    assert (done.code, done.out) == (0, f"created x ({root / 'x.md'})\n")
    assert done.err.endswith(
        "kura: 'x.md' was written as memory 'x' (file x.md): a slug names a memory without .md\n"
    )
    assert sorted(p.name for p in root.glob("*.md")) == ["MEMORY.md", "x.md"]
    plain = cli("-s", str(root), "remember", "x", "the x fact, again")
    assert (plain.code, plain.err) == (0, "")


def test_a_decomposed_name_is_the_same_memory(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "s"
    assert cli("-s", str(root), "remember", NFC, "coffee at the corner").code == 0
    again = cli("-s", str(root), "remember", NFD, "coffee at the corner, from 8:00")
    assert (again.code, again.out) == (0, f"updated {NFC} ({root / (NFC + '.md')})\n")
    assert again.err == (
        f"kura: '{NFD}' was written as memory '{NFC}' (file {NFC}.md): names are stored in composed "
        "Unicode (NFC), so a name that looks the same is the same memory\n"
    )
    assert sorted(p.name for p in root.glob("*.md")) == ["MEMORY.md", f"{NFC}.md"]
    shown = cli("-s", str(root), "show", NFD)
    assert shown.code == 0 and "coffee at the corner, from 8:00" in shown.out
    assert (root / "MEMORY.md").read_text().count(f"({NFC}.md)") == 1


def test_a_look_alike_file_on_disk_is_never_doubled(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "s"
    assert cli("-s", str(root), "remember", "other", "something else").code == 0
    write_memory(root, NFD, "project", "coffee, written by hand on a Mac")
    before = {p.name: p.read_bytes() for p in root.glob("*.md")}
    shown = cli("-s", str(root), "show", NFC)
    assert shown.code == 0 and "coffee, written by hand on a Mac" in shown.out
    refused = cli("-s", str(root), "remember", NFC, "coffee at the corner")
    assert refused.code == 1
    assert refused.err == (
        f"kura: error: s/{NFC}: {NFD}.md already holds this name spelled with other Unicode characters "
        "(it looks the same); nothing was written — rename that file to the composed (NFC) name, or edit it\n"
    )
    assert {p.name: p.read_bytes() for p in root.glob("*.md")} == before


def test_two_files_that_look_alike_each_keep_their_own_name(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "s"
    assert cli("-s", str(root), "remember", "other", "something else").code == 0
    write_memory(root, NFC, "project", "composed, by hand")
    write_memory(root, NFD, "project", "decomposed, by hand")
    assert "decomposed, by hand" in cli("-s", str(root), "show", NFD).out
    assert "composed, by hand" in cli("-s", str(root), "show", NFC).out
    assert "decomposed" not in cli("-s", str(root), "show", NFC).out


def test_a_look_alike_link_out_of_the_store_is_no_memory(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "s"
    assert cli("-s", str(root), "remember", "other", "something else").code == 0
    (tmp_path / "secret.md").write_text("---\nname: x\ndescription: FOREIGN\ntype: user\n---\nFOREIGN\n")
    os.symlink(tmp_path / "secret.md", root / f"{NFD}.md")
    shown = cli("-s", str(root), "show", NFC)
    assert (shown.code, shown.out) == (2, "")
    assert (
        shown.err
        == f"kura: error: no memory '{NFC}' in store 's' ({root}); `kura list` shows what there is\n"
    )
    refused = cli("-s", str(root), "remember", NFC, "written through the link?")
    assert refused.code == 1 and "already holds this name spelled with other" in refused.err
    assert (tmp_path / "secret.md").read_text().count("FOREIGN") == 2


def test_a_long_title_is_refused_not_dropped(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "s"
    refused = cli(
        "-s", str(root), "remember", "deploy-window", "deploys go out Tuesday", "--title", LONG_TITLE
    )
    assert refused.code == 1
    assert refused.err.endswith(
        "kura: error: s/deploy-window: the title is 55 characters; the index shows a title of at most 40 "
        "whole, never a cut one — shorten it (the description carries the rest); nothing was written\n"
    )
    assert not (root / "deploy-window.md").exists()
    fits = cli(
        "-s", str(root), "remember", "deploy-window", "deploys go out Tuesday", "--title", "Deploy window"
    )
    assert fits.code == 0
    assert "- [Deploy window](deploy-window.md) — deploys go out Tuesday" in (root / "MEMORY.md").read_text()


@pytest.fixture
def writable(tmp_path: Path) -> Path:
    """A kura.toml with one direct-allowed store, ``s``, holding café."""
    (tmp_path / "kura.toml").write_text(
        f'[stores.s]\npath = "{tmp_path / "s"}"\nwrite_policy = "direct-allowed"\n'
    )
    make_store(tmp_path / "s", [(NFC, "project", "coffee at the corner", "2026-01-05")])
    return tmp_path


def test_http_takes_a_decomposed_name_as_the_same_memory_and_refuses_a_long_title(writable: Path) -> None:
    service = StorePool(load_config(str(writable / "kura.toml")))
    try:
        with uvicorn_app(create_app(service)) as url, httpx.Client(base_url=url, timeout=30) as http:
            done = http.post("/remember", json={"slug": NFD, "description": "coffee, from 8:00"})
            assert done.status_code == 200 and done.json()["slug"] == NFC
            assert http.get(f"/memory/{NFD}").json()["description"] == "coffee, from 8:00"
            long = http.post("/remember", json={"slug": "w", "description": "d", "title": LONG_TITLE})
            assert long.status_code == 422
            assert "the title is 55 characters" in long.json()["error"]["message"]
    finally:
        service.close()
    assert sorted(p.name for p in (writable / "s").glob("*.md")) == ["MEMORY.md", f"{NFC}.md"]


@pytest.fixture
def mcp_session(writable: Path) -> Iterator[Any]:
    with ExitStack() as stack:
        portal = stack.enter_context(start_blocking_portal())
        env = {"KURA_CONFIG": str(writable / "kura.toml"), "KURA_HOME": str(writable / "home"),
               "HOME": str(writable / "home"), "KURA_READONLY": "0"}  # fmt: skip
        params = StdioServerParameters(command=sys.executable, args=["-m", "kura", "mcp"], env=env)
        errlog = stack.enter_context(open(writable / "mcp.err", "w+"))
        read, write = stack.enter_context(portal.wrap_async_context_manager(stdio_client(params, errlog)))
        session = stack.enter_context(portal.wrap_async_context_manager(ClientSession(read, write)))
        portal.call(session.initialize)

        def call(name: str, **arguments: Any) -> tuple[str, bool]:
            result = portal.call(session.call_tool, name, arguments)
            assert isinstance(result, types.CallToolResult)
            return result.content[0].text, result.is_error  # type: ignore[union-attr]

        yield call


def test_mcp_takes_a_decomposed_name_as_the_same_memory(mcp_session: Any, writable: Path) -> None:
    text, failed = mcp_session("kura_remember", slug=NFD, description="coffee, from 8:00")
    assert (text, failed) == (f"updated {NFC} in store 's' ({NFC}.md)", False)
    text, failed = mcp_session("kura_read", slug=NFD)
    assert not failed and "coffee, from 8:00" in text
    assert sorted(p.name for p in (writable / "s").glob("*.md")) == ["MEMORY.md", f"{NFC}.md"]


# -- doctor -------------------------------------------------------------------------------------


def islands_store(cli: Cli, root: Path) -> None:
    """A new store as a new user makes one: eight plain remembers and one linked pair."""
    for i in range(8):
        assert cli("-s", str(root), "remember", f"fact{i}", f"a plain fact, number {i}").code == 0
    assert cli("-s", str(root), "remember", "leaf", "the leaf fact").code == 0
    assert cli("-s", str(root), "remember", "hub", "the hub fact", "See [[leaf]].").code == 0


ISLAND = "an island: nothing links to it and it links nowhere — add [[links]] so recall can walk to it"


def test_doctor_counts_islands_in_one_line(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "s"
    islands_store(cli, root)
    head = (
        "s: 10 memories (project 10) — healthy\n"
        "  links: 1 resolved, 0 dead; islands 8, dead ends 1; 9 cluster(s), largest 2; hubs: leaf (1)\n"
    )
    dead_end = (
        "  s/leaf.md:1: a dead end: it links nowhere — add [[links]] to related memories  [graph, note]\n"
    )
    folded = (
        "  8 islands: nothing links to them and they link nowhere — add [[links]] so recall can walk "
        "to them; `kura doctor --islands` lists each  [graph, note]\n"
    )
    plain = cli("-s", str(root), "doctor")
    assert (plain.code, plain.out) == (0, head + folded + dead_end)
    listed = cli("-s", str(root), "doctor", "--islands")
    each = "".join(f"  s/fact{i}.md:1: {ISLAND}  [graph, note]\n" for i in range(8))
    assert (listed.code, listed.out) == (0, head + each + dead_end)
    strict = cli("-s", str(root), "doctor", "--strict")  # strict lists each; notes never fail it
    assert (strict.code, strict.out) == (0, head + each + dead_end)
    data = json.loads(cli("-s", str(root), "doctor", "--json").out)
    assert [f["path"] for f in data["findings"]] == [*(f"s/fact{i}.md" for i in range(8)), "s/leaf.md"]
    assert data["graph"]["islands"] == [f"fact{i}" for i in range(8)]


def test_doctor_over_mcp_counts_islands_too(tmp_path: Path) -> None:
    from kura.health.doctor import diagnose
    from kura.serve.mcp_text import doctor_text
    from kura.store.store import init_store

    store, _ = init_store(tmp_path / "s", name="s")
    for i in range(5):
        store.remember(f"fact{i}", f"a plain fact, number {i}")
    text = doctor_text(diagnose(store).to_dict())
    assert text == (
        "store 's': 5 memories (project 5) — healthy\n"
        "  5 islands: nothing links to them and they link nowhere — add [[links]] so recall can walk "
        "to them; `kura doctor --islands` lists each  [graph, note]"
    )


def test_spread_mtimes_are_believed_even_in_a_small_store(tmp_path: Path) -> None:
    from kura.map.age import ages
    from kura.store import catalog
    from kura.store.store import Store

    slugs = undated(tmp_path / "s", 5)
    now = time.time()
    for i, slug in enumerate(slugs):  # 30 hours apart: five calendar days, one memory each
        os.utime(tmp_path / "s" / f"{slug}.md", (now, now - i * 3600 * 30))
    store = Store(tmp_path / "s")
    db = catalog.connect(store)
    try:
        scan = catalog.scan(store, db)
        assert scan is not None
        got = ages(store.root, scan.entries, db)
    finally:
        db.close()
    assert [got[slug].source for slug in slugs] == ["mtime"] * 5
    assert got[slugs[0]].day == dt.date.fromtimestamp(now)
