"""``kura recent``: what changed lately, from the files' dates and git — checked with real
files, a real git repository whose commits are backdated, and real ``kura`` processes."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

AT = "2026-11-30"  # judged as of this day (--at), so every date below is fixed


def kura(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kura", *args], capture_output=True, text=True, check=False)


def memory(root: Path, slug: str, description: str, *, kind: str = "project", **meta: str) -> Path:
    extra = "".join(f"{key}: {value}\n" for key, value in meta.items())
    path = root / f"{slug}.md"
    path.write_text(
        f"---\nname: {slug}\ndescription: {description}\ntype: {kind}\n{extra}---\n\n{description}\n"
    )
    return path


def commit(repo: Path, day: str, message: str) -> None:
    """Everything in the work tree committed, authored and committed at noon on ``day``."""
    when = f"{day}T12:00:00"
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def touch(path: Path, day: str) -> None:
    stamp = dt.datetime.fromisoformat(f"{day}T12:00:00").timestamp()
    os.utime(path, (stamp, stamp))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding the store in memory/ (a subfolder, as a project keeps it)."""
    top = tmp_path / "project"
    store = top / "memory"
    store.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=top, check=True)
    (store / "MEMORY.md").write_text("# Memory\n")
    memory(store, "old-fact", "set up long ago", created="2026-01-01")
    memory(store, "hand-edit", "edited by hand, no dates")
    memory(store, "replaced", "the old value", created="2026-01-01")
    memory(store, "in-progress", "being edited, not committed yet")
    memory(store, "gone", "forgotten this week", created="2026-01-01", archived="2026-11-24",
           archived_reason="no longer true")  # fmt: skip
    commit(top, "2026-02-01", "first")
    memory(store, "new-by-git", "added by a commit, no dates")
    commit(top, "2026-11-25", "add")
    memory(store, "hand-edit", "edited by hand again, still no dates")
    commit(top, "2026-11-27", "edit")
    memory(store, "written", "written by kura remember", created="2026-11-28")
    commit(top, "2026-11-28", "remember")
    memory(store, "replaced", "the old value", created="2026-01-01", valid_until="2026-11-29",
           superseded_by="written")  # fmt: skip
    commit(top, "2026-11-29", "supersede")
    touch(memory(store, "in-progress", "being edited now"), "2026-11-29")
    touch(memory(store, "fresh-untracked", "new, not yet added to git"), "2026-11-26")
    return store


def test_recent_lists_each_memory_once_by_its_newest_event_newest_first(repo: Path) -> None:
    got = kura("-s", str(repo), "recent", "--at", AT, "--json")
    assert got.returncode == 0, got.stderr
    found = json.loads(got.stdout)
    assert (found["since"], found["in_git"]) == ("2026-11-23", True)
    rows = [(i["day"], i["what"], i["slug"], i["source"], i["detail"], i["also"]) for i in found["items"]]
    assert rows == [
        ("2026-11-29", "superseded", "replaced", "frontmatter", "by written", ["changed"]),
        ("2026-11-29", "changed", "in-progress", "uncommitted", "", []),
        ("2026-11-28", "created", "written", "frontmatter", "", []),
        ("2026-11-27", "changed", "hand-edit", "git", "", []),
        ("2026-11-26", "created", "fresh-untracked", "untracked", "", []),
        ("2026-11-25", "created", "new-by-git", "git", "", []),
        ("2026-11-24", "forgotten", "gone", "frontmatter", "no longer true", []),
    ]  # old-fact: created and committed before the window


def test_recent_as_text_says_what_how_and_since_when(repo: Path) -> None:
    got = kura("-s", str(repo), "recent", "--at", AT, "--since", "3d")
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[0] == "store 'memory', 4 with activity since 2026-11-27, newest first:"
    assert lines[1] == (
        "2026-11-29  superseded  replaced     project    the old value  (frontmatter; by written; also changed)"
    )
    assert [line.split()[2] for line in lines[1:]] == ["replaced", "in-progress", "written", "hand-edit"]


def test_recent_filters_by_type_and_exits_2_when_nothing_happened(repo: Path) -> None:
    memory(repo, "ana", "Ana runs the deploys", kind="user", created="2026-11-20")
    assert kura("-s", str(repo), "recent", "--at", AT, "--type", "user").returncode == 2
    wide = kura("-s", str(repo), "recent", "--at", AT, "--type", "user", "--since", "2w", "--json")
    assert [i["slug"] for i in json.loads(wide.stdout)["items"]] == ["ana"]
    quiet = kura("-s", str(repo), "recent", "--at", "2026-06-01", "--since", "1w")
    assert quiet.returncode == 2
    assert (
        quiet.stdout
        == "nothing created, changed, superseded or forgotten in store 'memory' since 2026-05-25\n"
    )


def test_outside_git_only_written_dates_count_never_a_copys_file_times(tmp_path: Path) -> None:
    store = tmp_path / "plain"
    store.mkdir()
    (store / "MEMORY.md").write_text("# Memory\n")
    memory(store, "dated", "remembered this week", updated="2026-11-29", created="2026-01-05")
    touch(memory(store, "copied", "no dates: its file time is the copy's"), "2026-11-29")
    got = kura("-s", str(store), "recent", "--at", AT)
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines() == [
        "store 'plain', 1 with activity since 2026-11-23 (from the files' dates; not in git), newest first:",
        "2026-11-29  changed     dated  project    remembered this week  (frontmatter)",
    ]


@pytest.mark.parametrize("since", ["yesterday", "7", "-3d", "2026-13-01"])
def test_a_window_kura_cannot_read_is_refused_with_the_forms_it_takes(repo: Path, since: str) -> None:
    got = kura("-s", str(repo), "recent", "--since", since)
    assert got.returncode == 1 and got.stdout == ""
    assert "expected a number of days or weeks (7d, 2w) or a date (YYYY-MM-DD)" in got.stderr


@pytest.fixture
def served(tmp_path: Path) -> Path:
    """A configured store in git, dated from today (servers judge as of today): one memory
    committed yesterday, one written two days ago, one from long ago."""
    today = dt.date.today()
    store = tmp_path / "desk"
    store.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=store, check=True)
    (store / "MEMORY.md").write_text("# Memory\n")
    memory(store, "long-ago", "set up long ago", created="2020-01-01")
    commit(store, "2020-01-02", "first")
    memory(store, "deploy-day", "we deploy on Tuesdays")
    commit(store, (today - dt.timedelta(days=1)).isoformat(), "add")
    memory(
        store, "ana", "Ana runs the deploys", kind="user", created=(today - dt.timedelta(days=2)).isoformat()
    )
    commit(store, (today - dt.timedelta(days=2)).isoformat(), "remember")
    (tmp_path / "kura.toml").write_text('[stores.desk]\npath = "desk"\n')
    (tmp_path / "home").mkdir(exist_ok=True)
    return tmp_path


def test_mcp_kura_recent_over_stdio(served: Path) -> None:
    from test_mcp import client

    with client(served, "mcp") as mcp:  # read-only: kura_recent reads
        tools = mcp.tools()
        assert (
            tools["kura_recent"].annotations is not None and tools["kura_recent"].annotations.read_only_hint
        )
        said = mcp.ok("kura_recent")
        week = mcp.ok("kura_recent", since="1w", type="user")
        refused = mcp.error("kura_recent", since="lately")
    lines = said.splitlines()
    assert lines[0].startswith("store 'desk', 2 with activity since ")
    assert [line.split()[1:3] for line in lines[1:]] == [["created", "deploy-day"], ["created", "ana"]]
    assert "(git)" in lines[1] and "(frontmatter)" in lines[2]
    assert [line.split()[2] for line in week.splitlines()[1:]] == ["ana"]
    assert "expected a number of days or weeks (7d, 2w) or a date (YYYY-MM-DD)" in refused


def test_http_recent_route(served: Path) -> None:
    import httpx
    from conftest import uvicorn_app

    from kura.config import load_config
    from kura.serve.http import create_app
    from kura.serve.pool import StorePool

    service = StorePool(load_config(str(served / "kura.toml")))
    with uvicorn_app(create_app(service, watch=False)) as url, httpx.Client(base_url=url, timeout=60) as http:
        found = http.get("/recent").json()
        typed = http.get("/recent", params={"type": "user", "since": "3d"}).json()
        empty = http.get("/recent", params={"since": "2019-01-01", "type": "reference"}).json()
        bad = http.get("/recent", params={"since": "lately"})
    service.close()
    assert [(i["slug"], i["what"], i["source"]) for i in found["items"]] == [
        ("deploy-day", "created", "git"),
        ("ana", "created", "frontmatter"),
    ]
    assert found["in_git"] is True and found["store"] == "desk"
    assert [i["slug"] for i in typed["items"]] == ["ana"]
    assert empty["items"] == []
    assert bad.status_code == 422 and "expected a number of days" in bad.json()["error"]["message"]


def test_a_rename_is_a_change_not_a_creation(repo: Path) -> None:
    top = repo.parent
    assert kura("-s", str(repo), "rename", "old-fact", "settled-fact").returncode == 0
    commit(top, "2026-11-30", "rename")
    got = json.loads(kura("-s", str(repo), "recent", "--at", AT, "--since", "1d", "--json").stdout)
    moved = next(i for i in got["items"] if i["slug"] == "settled-fact")
    assert (moved["what"], moved["day"], moved["source"], moved["detail"]) == (
        "changed", "2026-11-30", "git", "renamed from old-fact"
    )  # fmt: skip
