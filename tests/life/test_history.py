"""``kura history``: every version of a memory from a real git repository with backdated
commits (a person's, a sync's, the distiller's, an agent's, a rename, an edit not yet
committed), and outside git from what the file records; the supersede chain in both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kura.life.history import history
from kura.store.store import Store

HEAD = "---\nname: Deploy\ndescription: {d}\ntype: project\ncreated: 2026-01-02\n{extra}---\n\n{d}.\n"


def kura(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kura", *args], capture_output=True, text=True, check=False)


def write(path: Path, description: str, extra: str = "") -> None:
    path.write_text(HEAD.format(d=description, extra=extra))


def commit(repo: Path, when: str, message: str, author: str = "Ana") -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    for args in (
        ["add", "-A"],
        ["-c", f"user.name={author}", "-c", "user.email=a@x", "commit", "-qm", message],
    ):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project whose store is memory/, with five backdated commits and one edit not committed."""
    top = tmp_path / "project"
    store = top / "memory"
    store.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=top, check=True)
    (store / "MEMORY.md").write_text("# Memory\n\n- [Deploy](deploy.md) — deploys go out on Tuesday\n")
    write(store / "deploy.md", "deploys go out on Tuesday")
    commit(top, "2026-01-02T10:00:00", "note the deploy day")
    write(store / "deploy.md", "deploys go out on Tuesday at 10")
    commit(top, "2026-02-03T11:00:00", "kura sync: ~1 (deploy)", author="Bo")
    said = "witnesses:\n- kind: FIX\n  when: 2026-03-01\n  session: s-42\n  source: ferry/s-42.jsonl\n"
    write(store / "deploy.md", "deploys go out on Tuesday at 10", said)
    commit(top, "2026-03-04T12:00:00", "memory update")
    subprocess.run(["git", "mv", "memory/deploy.md", "memory/deploy-day.md"], cwd=top, check=True)
    commit(top, "2026-04-05T13:00:00", "rename the deploy note")
    agent = said + "- kind: MANUAL\n  when: 2026-05-01\n  source: MCP edit append\n"
    write(store / "deploy-day.md", "deploys go out on Wednesday at 10", agent)
    return store


def test_every_version_from_git_newest_first_with_who_wrote_it(repo: Path) -> None:
    found = history(Store(repo), "deploy-day")
    assert found.in_git and found.older == 0
    rows = [(v.what, v.who, v.by, v.source, v.when[:10], v.description) for v in found.versions]
    assert rows == [
        ("changed", "agent", "", "uncommitted", rows[0][4], "deploys go out on Wednesday at 10"),
        ("renamed", "person", "Ana", "git", "2026-04-05", "deploys go out on Tuesday at 10"),
        ("changed", "distiller", "Ana", "git", "2026-03-04", "deploys go out on Tuesday at 10"),
        ("changed", "sync", "Bo", "git", "2026-02-03", "deploys go out on Tuesday at 10"),
        ("created", "person", "Ana", "git", "2026-01-02", "deploys go out on Tuesday"),
    ]
    assert found.versions[-1].text == HEAD.format(d="deploys go out on Tuesday", extra="")
    assert found.versions[1].message == "rename the deploy note (renamed from memory/deploy.md)"
    assert found.versions[-1].path == "memory/deploy.md"


def test_the_command_prints_them_and_json_has_each_text(repo: Path) -> None:
    shown = kura("-s", str(repo), "history", "deploy-day")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "deploy-day in store 'memory': 5 version(s), from git"
    assert (
        lines[-2].startswith("2026-01-02 10:00 ")
        and "created     person (Ana) — note the deploy day" in lines[-2]
    )
    assert lines[-1] == "    description: deploys go out on Tuesday"
    data = json.loads(kura("-s", str(repo), "history", "deploy-day", "--json").stdout)
    assert [v["who"] for v in data["versions"]] == ["agent", "person", "distiller", "sync", "person"]
    full = kura("-s", str(repo), "history", "deploy-day", "--full").stdout
    assert "    | deploys go out on Tuesday." in full


def test_outside_git_the_file_tells_its_own_past_and_the_chain(tmp_path: Path) -> None:
    root = tmp_path / "st"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n")
    write(root / "heroku.md", "the app runs on Heroku",
          "superseded_by: fly\nvalid_until: 2026-06-01\nupdated: 2026-03-01\n"
          "witnesses:\n- kind: SAID\n  when: 2026-02-01\n  source: kura remember\n  quote: it runs on Heroku\n")  # fmt: skip
    write(root / "fly.md", "the app runs on Fly.io", "supersedes: [heroku]\n")
    found = history(Store(root), "heroku")
    assert not found.in_git
    rows = [(v.when, v.what, v.who, v.message) for v in found.versions]
    assert rows == [
        ("2026-06-01", "superseded", "", "by fly"),
        ("2026-03-01", "changed", "", ""),
        ("2026-02-01", "witnessed", "person", "SAID: it runs on Heroku"),
        ("2026-01-02", "created", "person", ""),
    ]
    chain = [(c.slug, c.state, c.until) for c in found.chain]
    assert chain == [("heroku", "superseded", "2026-06-01"), ("fly", "current", "")]
    assert [c.slug for c in history(Store(root), "fly").chain] == ["heroku", "fly"]
    shown = kura("-s", str(root), "history", "fly")
    assert shown.returncode == 0, shown.stderr
    assert "supersede chain, oldest first:\n  heroku: superseded, replaced 2026-06-01 — the app runs on Heroku\n" \
           "  fly (this one): current — the app runs on Fly.io\n" in shown.stdout  # fmt: skip


def test_outside_git_a_change_on_the_day_of_creation_is_listed_first(tmp_path: Path) -> None:
    """Newest first holds within one day too: a memory written and edited today shows the
    change above its creation, not below it."""
    root = tmp_path / "st"
    made = kura("-s", str(root), "remember", "cache", "the build cache lives in /var/cache/ferry")
    assert made.returncode == 0, made
    assert kura("-s", str(root), "edit", "cache", "--append", "Clear it with make clean.").returncode == 0
    shown = kura("-s", str(root), "history", "cache")
    assert shown.returncode == 0, shown
    rows = [line.split()[1] for line in shown.stdout.splitlines()[1:] if line[:1].isdigit()]
    assert rows == ["changed", "created"], shown.stdout


def test_no_such_memory_is_said(tmp_path: Path) -> None:
    (tmp_path / "st").mkdir()
    (tmp_path / "st" / "MEMORY.md").write_text("# Memory\n")
    done = kura("-s", str(tmp_path / "st"), "history", "nothing-here")
    assert done.returncode == 2 and "no memory 'nothing-here'" in done.stderr


def test_a_deleted_memory_keeps_its_history_and_a_purged_one_its_dates_only(repo: Path) -> None:
    top = repo.parent
    write(repo / "old-note.md", "the printer is on floor 3")
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    write(repo / "pasted.md", "the deploy key lives in the vault", f"x_note: key {key}\n")
    commit(top, "2026-05-02T09:00:00", "two notes")
    (repo / "old-note.md").unlink()
    commit(top, "2026-05-03T09:00:00", "printer moved")
    gone = history(Store(repo), "old-note")
    assert [(v.what, v.when[:10]) for v in gone.versions] == [
        ("deleted", "2026-05-03"),
        ("created", "2026-05-02"),
    ]
    assert gone.versions[1].description == "the printer is on floor 3"
    shown = history(Store(repo), "pasted").versions[0].text  # an old version's secret is never shown
    assert key not in shown and "[redacted" in shown
    done = kura("-s", str(repo), "forget", "pasted", "--purge", "--yes")
    assert done.returncode == 0, done.stderr
    commit(top, "2026-05-04T09:00:00", "purge")
    purged = history(Store(repo), "pasted")
    assert [v.what for v in purged.versions] == ["deleted", "created"]
    assert all(v.text == "" and v.description == "" for v in purged.versions)
    assert purged.versions[1].message == "two notes (purged: its text is not shown)"
    assert kura("-s", str(repo), "history", "../outside").returncode == 2
