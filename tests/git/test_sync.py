"""``kura sync`` with real git: a bare remote, two clones, the store at the top of the
repository or in a subfolder, and a stand-in for kura's MEMORY.md merge driver configured
exactly as ``kura git install`` configures the real one (a ``.gitattributes`` line and
``merge.kura-index.driver`` in each clone's own config)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli

from kura.store.store import init_store

# A union merge of MEMORY.md's lines: what either side added is kept (ours' order first),
# what either side removed is gone. It logs each call, so a test can see git used it.
DRIVER = """\
import sys
from pathlib import Path

def lines(path):
    return [l if l.endswith("\\n") else l + "\\n" for l in Path(path).read_text("utf-8").splitlines(True)]

base, ours, theirs = (lines(p) for p in sys.argv[1:4])
kept = [l for l in ours if l in theirs or l not in base]
kept += [l for l in theirs if l not in base and l not in ours]
Path(sys.argv[2]).write_text("".join(kept), "utf-8")
with open(sys.argv[4], "a") as log:
    log.write("merged\\n")
"""
LAYOUTS = {"root": "", "subfolder": "team/memory/"}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytest.fixture(autouse=True)
def hermetic_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """No system or inherited git settings (HOME is already a temp folder)."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key in [k for k in os.environ if k.startswith("GIT_") and k != "GIT_CONFIG_NOSYSTEM"]:
        monkeypatch.delenv(key)


class Team:
    """A bare remote and clones of it, each with the stand-in driver configured."""

    def __init__(self, tmp_path: Path, prefix: str) -> None:
        self.tmp, self.prefix = tmp_path, prefix
        self.remote = tmp_path / "remote.git"
        self.driver = tmp_path / "driver.py"
        self.driver.write_text(DRIVER)
        self.log = tmp_path / "driver.log"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(self.remote))

    def configure(self, repo: Path, name: str) -> None:
        for key, value in (
            ("user.name", name), ("user.email", f"{name}@example.com"), ("init.defaultBranch", "main"),
            ("protocol.file.allow", "always"), ("commit.gpgsign", "false"),
            ("merge.kura-index.name", "kura MEMORY.md merge (test stand-in)"),
            ("merge.kura-index.driver", " ".join(shlex.quote(str(p)) for p in (sys.executable, self.driver))
             + f" %O %A %B {shlex.quote(str(self.log))}"),
        ):  # fmt: skip
            git(repo, "config", key, value)

    def seed(self, cli: Cli, *memories: tuple[str, str]) -> Path:
        """Clone A: the store, its memories and the .gitattributes line, pushed upstream."""
        repo = self.tmp / "a"
        git(self.tmp, "init", "-q", "-b", "main", str(repo))
        self.configure(repo, "a")
        store = self.store(repo)
        init_store(store, name="team")
        for slug, description in memories:
            assert cli("-s", str(store), "remember", slug, description).code == 0
        (repo / ".gitattributes").write_text(f"{self.prefix}MEMORY.md merge=kura-index\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "the team's store")
        git(repo, "remote", "add", "origin", str(self.remote))
        git(repo, "push", "-q", "-u", "origin", "main")
        return repo

    def clone(self, name: str) -> Path:
        repo = self.tmp / name
        git(self.tmp, "clone", "-q", str(self.remote), str(repo))
        self.configure(repo, name)
        return repo

    def store(self, repo: Path) -> Path:
        return repo / self.prefix if self.prefix else repo

    def merges(self) -> int:
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0


def snapshot(repo: Path) -> dict[str, Any]:
    """Everything sync promises to leave as it was: HEAD, the index, the status, the stash
    list and the bytes of every file in the work tree (the store's .kura/ included)."""
    files = {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and p.relative_to(repo).parts[0] != ".git"
    }
    return {
        "head": git(repo, "rev-parse", "HEAD"),
        "branch": git(repo, "symbolic-ref", "HEAD"),
        "index": git(repo, "ls-files", "--stage"),
        "status": git(repo, "status", "--porcelain=v2", "--untracked-files=all"),
        "stash": git(repo, "stash", "list", "--format=%H %gs"),
        "files": files,
    }


def sync(cli: Cli, store: Path, *more: str) -> Any:
    return cli("sync", "--store", str(store), *more)


def entries(index: str, slug: str) -> int:
    return len(re.findall(rf"^- \[[^\]]*\]\({re.escape(slug)}\.md\)", index, re.M))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_two_clones_sync_twice_round_and_hold_every_live_memory_once(
    cli: Cli, tmp_path: Path, layout: str
) -> None:
    team = Team(tmp_path, LAYOUTS[layout])
    a = team.seed(cli, ("shared-1", "the staging box is stage-1"), ("shared-2", "deploys need two reviews"),
                  ("old-1", "the wiki lives on confluence"), ("old-2", "standup is at 9:00"))  # fmt: skip
    b = team.clone("b")
    store_a, store_b = team.store(a), team.store(b)

    assert cli("-s", str(store_a), "remember", "a-new", "the VPN needs a token").code == 0
    assert (
        cli("-s", str(store_a), "remember", "shared-1", "the staging box is stage-2", "moved in May").code
        == 0
    )
    assert cli("-s", str(store_a), "forget", "old-1", "--reason", "moved to notion").code == 0
    first = sync(cli, store_a)
    assert first.code == 0, first
    assert git(a, "log", "-1", "--format=%B") == (
        "kura sync: +1 ~1 -1 (a-new, shared-1, old-1)\n\n+ a-new\n~ shared-1\n"
        "- old-1 (archived: moved to notion)\nother files: MEMORY.md\n\n"
    )
    assert first.out.splitlines()[:2] == [
        f"committed {git(a, 'rev-parse', '--short=7', 'HEAD').strip()} kura sync: +1 ~1 -1 (a-new, shared-1, old-1)",
        "pushed 1 commit to origin/main",
    ]

    assert cli("-s", str(store_b), "remember", "b-new", "the printer is on floor 3").code == 0
    assert cli("-s", str(store_b), "remember", "shared-2", "deploys need one review", "since June").code == 0
    assert cli("-s", str(store_b), "forget", "old-2").code == 0
    second = sync(cli, store_b)
    assert second.code == 0, second
    assert "pulled 1 commit from origin/main: +1 ~1 -1" in second.out
    assert "pushed 1 commit to origin/main" in second.out
    assert team.merges() == 1  # MEMORY.md changed on both sides: the driver merged it

    third = sync(cli, store_a)
    assert third.code == 0, third
    assert "pulled 1 commit from origin/main: +1 ~1 -1" in third.out
    assert (sync(cli, store_b).code, sync(cli, store_a).code) == (2, 2)

    index_a = (store_a / "MEMORY.md").read_text()
    assert (store_b / "MEMORY.md").read_text() == index_a
    for slug in ("shared-1", "shared-2", "a-new", "b-new"):
        assert entries(index_a, slug) == 1, (slug, index_a)
    assert entries(index_a, "old-1") == entries(index_a, "old-2") == 0
    assert not re.search(r"^(<{7}|={7}|>{7})", index_a, re.M)
    assert "stage-2" in index_a and "one review" in index_a
    for store in (store_a, store_b):
        assert (store / "shared-1.md").read_text() == (store_a / "shared-1.md").read_text()
        assert "moved in May" in (store / "shared-1.md").read_text()
        assert "archived: " in (store / "old-2.md").read_text()
        assert (store / ".kura" / "map.md").is_file()
        assert cli("-s", str(store), "weave", "--no-model").code == 2  # the map was already current
        shown = cli("-s", str(store), "prefill")
        assert shown.code == 0, shown
        for slug in ("shared-1", "shared-2", "a-new", "b-new"):
            assert f"({slug}.md)" in shown.out
        assert "(old-1.md)" not in shown.out and "(old-2.md)" not in shown.out
    for repo in (a, b):
        assert git(repo, "status", "--porcelain") == ""
        assert git(repo, "rev-parse", "HEAD") == git(team.remote, "rev-parse", "main")


def test_a_true_conflict_leaves_both_repositories_exactly_as_they_were(cli: Cli, tmp_path: Path) -> None:
    team = Team(tmp_path, LAYOUTS["subfolder"])
    a = team.seed(cli, ("deploy-day", "deploys go out Tuesday"), ("oncall", "oncall rota is weekly"))
    b = team.clone("b")
    store_a, store_b = team.store(a), team.store(b)
    cli("-s", str(store_a), "remember", "deploy-day", "deploys go out Tuesday", "Tuesday at 10:00 CET.")
    cli("-s", str(store_a), "remember", "from-a", "the VPN needs a token")
    assert sync(cli, store_a).code == 0

    cli("-s", str(store_b), "remember", "deploy-day", "deploys go out Tuesday", "Tuesday at 14:00 UTC.")
    cli("-s", str(store_b), "remember", "from-b", "the printer is on floor 3")
    (b / "README.md").write_text("notes outside the store\n")  # untracked
    (b / ".gitattributes").write_text((b / ".gitattributes").read_text() + "*.bin binary\n")  # modified
    (b / "plan.txt").write_text("staged\n")
    git(b, "add", "plan.txt")
    (b / "plan.txt").write_text("staged, then edited\n")
    (b / "scratch.txt").write_text("kept aside\n")
    git(b, "stash", "push", "-u", "-q", "-m", "the person's own stash", "--", "scratch.txt")
    before_a, before_b, remote = snapshot(a), snapshot(b), git(team.remote, "rev-parse", "main")

    failed = sync(cli, store_b)
    assert failed.code == 1, failed
    assert failed.out == ""
    assert "conflict in team/memory/deploy-day.md" in failed.err
    assert "nothing was changed here" in failed.err
    assert "`git pull --rebase --autostash`" in failed.err
    assert snapshot(b) == before_b
    assert snapshot(a) == before_a
    assert git(team.remote, "rev-parse", "main") == remote

    as_json = sync(cli, store_b, "--json")
    assert as_json.code == 1
    assert json.loads(as_json.out)["next"] == "git pull --rebase --autostash"
    assert snapshot(b) == before_b


def test_no_remote_refuses_and_changes_nothing(cli: Cli, tmp_path: Path) -> None:
    repo = tmp_path / "solo"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    Team(tmp_path, "").configure(repo, "solo")
    init_store(repo, name="solo")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "store")
    cli("-s", str(repo), "remember", "deploy-day", "deploys go out Tuesday")
    before = snapshot(repo)

    refused = sync(cli, repo)
    assert refused.code == 1
    assert refused.err == (
        f"kura: error: {repo}: no remote to sync with: add one with `git remote add origin URL` and push "
        "once with `git push -u origin main`\n"
    )
    assert snapshot(repo) == before

    git(repo, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    unpushed = sync(cli, repo)
    assert unpushed.code == 1
    assert unpushed.err == (
        f"kura: error: {repo}: branch main has no upstream to sync with: push it once with "
        "`git push -u origin main`\n"
    )
    assert snapshot(repo) == before


def test_outside_a_repository_on_a_detached_head_or_mid_merge_it_refuses(cli: Cli, tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    init_store(loose, name="loose")
    outside = sync(cli, loose)
    assert outside.code == 1
    assert f"{loose} is not in a git repository" in outside.err and f"`git -C {loose} init`" in outside.err

    team = Team(tmp_path, "")
    a = team.seed(cli, ("deploy-day", "deploys go out Tuesday"))
    git(a, "checkout", "-q", "--detach")
    detached = sync(cli, a)
    assert detached.code == 1 and "HEAD is detached" in detached.err and "`git switch main`" in detached.err

    git(a, "checkout", "-q", "main")
    git(a, "checkout", "-q", "-b", "other")
    (a / "plan.txt").write_text("other\n")
    git(a, "add", "plan.txt")
    git(a, "commit", "-q", "-m", "other")
    git(a, "checkout", "-q", "main")
    (a / "plan.txt").write_text("main\n")
    git(a, "add", "plan.txt")
    git(a, "commit", "-q", "-m", "main")
    subprocess.run(["git", "merge", "-q", "other"], cwd=a, capture_output=True, check=False)
    before = snapshot(a)
    merging = sync(cli, a)
    assert merging.code == 1
    assert "a merge is in progress; finish it (`git merge --continue`) or abort it" in merging.err
    assert snapshot(a) == before


def test_nothing_to_do_exits_2_and_touches_nothing(cli: Cli, tmp_path: Path) -> None:
    team = Team(tmp_path, LAYOUTS["subfolder"])
    a = team.seed(cli, ("deploy-day", "deploys go out Tuesday"))
    (a / "notes.txt").write_text("mine\n")
    before = snapshot(a)
    idle = sync(cli, team.store(a), "--json")
    assert idle.code == 2
    reported = json.loads(idle.out)
    assert (reported["moved"], reported["committed"], reported["pulled"]["commits"]) == (False, None, 0)
    assert reported["head"] == before["head"].strip()
    assert snapshot(a) == before


def test_files_outside_the_store_are_never_committed_and_stay_as_they_were(cli: Cli, tmp_path: Path) -> None:
    team = Team(tmp_path, LAYOUTS["subfolder"])
    a = team.seed(cli, ("deploy-day", "deploys go out Tuesday"))
    (a / "app.py").write_text("print('v1')\n")
    (a / "plan.txt").write_text("plan v1\n")
    git(a, "add", "app.py", "plan.txt")
    git(a, "commit", "-q", "-m", "the project's own files")
    git(a, "push", "-q")
    b = team.clone("b")
    cli("-s", str(team.store(b)), "remember", "from-b", "the printer is on floor 3")
    assert sync(cli, team.store(b)).code == 0

    store = team.store(a)
    cli("-s", str(store), "remember", "oncall", "oncall rota is weekly")
    (a / "app.py").write_text("print('v2, not ready')\n")  # modified, unstaged
    (a / "plan.txt").write_text("plan v2\n")
    git(a, "add", "plan.txt")  # staged
    (a / "draft.txt").write_text("untracked\n")
    outside = {name: (a / name).read_bytes() for name in ("app.py", "plan.txt", "draft.txt")}
    status = [line for line in git(a, "status", "--porcelain=v2").splitlines() if "team/" not in line]

    done = sync(cli, store, "--json")
    assert done.code == 0, done
    report = json.loads(done.out)
    assert report["committed"]["added"] == ["oncall"] and report["committed"]["other"] == ["MEMORY.md"]
    assert report["pulled"]["commits"] == 1 and report["pulled"]["added"] == ["from-b"]
    assert report["pushed"]["commits"] == 1
    assert (
        report["head"] == git(a, "rev-parse", "HEAD").strip() == git(team.remote, "rev-parse", "main").strip()
    )
    assert git(a, "show", "--name-only", "--format=", "HEAD").split() == [
        "team/memory/MEMORY.md",
        "team/memory/oncall.md",
    ]
    assert {name: (a / name).read_bytes() for name in outside} == outside
    assert [line for line in git(a, "status", "--porcelain=v2").splitlines() if "team/" not in line] == status
    assert git(a, "stash", "list") == ""
    assert git(team.remote, "show", "main:app.py") == "print('v1')\n"


def test_a_push_refused_because_the_remote_moved_again_undoes_the_pull_too(cli: Cli, tmp_path: Path) -> None:
    team = Team(tmp_path, "")
    a = team.seed(cli, ("deploy-day", "deploys go out Tuesday"))
    b = team.clone("b")
    cli("-s", str(b), "remember", "from-b", "the printer is on floor 3")
    assert sync(cli, b).code == 0
    c = team.clone("c")
    # Between A's fetch and A's push, C pushes: A's pre-push hook makes it happen once.
    (c / "late.txt").write_text("pushed meanwhile\n")
    git(c, "add", "late.txt")
    git(c, "commit", "-q", "-m", "late")
    hook = a / ".git" / "hooks" / "pre-push"
    hook.write_text(
        "#!/bin/sh\nunset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE\n"
        f"[ -e {shlex.quote(str(tmp_path / 'raced'))} ] && exit 0\n"
        f"touch {shlex.quote(str(tmp_path / 'raced'))}\n"
        f"git -C {shlex.quote(str(c))} push -q origin main >/dev/null 2>&1\nexit 0\n"
    )
    hook.chmod(0o755)
    cli("-s", str(a), "remember", "from-a", "the VPN needs a token")
    (a / "notes.txt").write_text("untracked, outside the store's memories\n")
    (a / ".gitattributes").write_text((a / ".gitattributes").read_text() + "*.bin binary\n")
    before = snapshot(a)

    refused = sync(cli, a)
    assert refused.code == 1, refused
    assert (tmp_path / "raced").exists()
    assert "origin/main moved while kura synced" in refused.err
    assert refused.err.rstrip().endswith("nothing was changed here — run `kura sync` again")
    assert snapshot(a) == before  # sync's commit, the pulled commit and the set-aside change: all undone

    again = sync(cli, a)
    assert again.code == 0, again
    assert "pulled 2 commits from origin/main" in again.out
    assert git(a, "rev-parse", "HEAD") == git(team.remote, "rev-parse", "main")
    assert (a / ".gitattributes").read_text().endswith("*.bin binary\n")


def test_a_conflict_left_in_a_memory_is_never_committed(cli: Cli, tmp_path: Path) -> None:
    team = Team(tmp_path, "")
    a = team.seed(cli, ("deploy-day", "deploys go out Tuesday"))
    path = a / "deploy-day.md"
    path.write_text(path.read_text() + "<<<<<<< HEAD\nTuesday\n=======\nWednesday\n>>>>>>> theirs\n")
    before = snapshot(a)
    refused = sync(cli, a)
    assert refused.code == 1
    assert "deploy-day.md:" in refused.err and "a git merge conflict left in the file" in refused.err
    assert snapshot(a) == before


def test_without_git_it_says_so(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "s"
    init_store(store, name="s")
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    missing = sync(cli, store)
    assert missing.code == 1
    assert missing.err.startswith("kura: error: git is not installed (no `git` on PATH)")


def test_a_commit_a_hook_refuses_changes_nothing(cli: Cli, tmp_path: Path) -> None:
    team = Team(tmp_path, LAYOUTS["subfolder"])
    a = team.seed(cli, ("deploy-day", "deploys go out Tuesday"))
    hook = a / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'kura pre-commit: fix the findings above' >&2\nexit 1\n")
    hook.chmod(0o755)
    cli("-s", str(team.store(a)), "remember", "oncall", "oncall rota is weekly")
    before = snapshot(a)
    refused = sync(cli, team.store(a))
    assert refused.code == 1
    assert "git commit refused the store's changes (kura pre-commit: fix the findings above)" in refused.err
    assert snapshot(a) == before


def test_the_first_sync_into_an_empty_remote_makes_its_branch(cli: Cli, tmp_path: Path) -> None:
    team = Team(tmp_path, "")
    laptop = team.clone("laptop")  # a clone of the empty remote: a branch with no commit yet
    assert cli("-s", str(laptop), "remember", "deploy-day", "deploys go out Tuesday").code == 0
    first = sync(cli, laptop)
    assert first.code == 0, first
    assert first.out.splitlines()[1] == "pushed 1 commit to origin/main"
    assert git(team.remote, "show", "main:deploy-day.md") == (laptop / "deploy-day.md").read_text()


def test_the_message_names_what_moved_and_its_subject_stays_short() -> None:
    from kura.git.changes import Changes, message

    many = Changes(
        added=tuple(f"release-checklist-{n}" for n in range(6)),
        forgotten=("old-wiki",),
        other=("MEMORY.md",),
        why=(("old-wiki", "superseded by new-wiki"),),
    )
    text = message(many)
    subject, blank, *body = text.splitlines()
    assert subject == "kura sync: +6 -1 (release-checklist-0, release-checklist-1, …)"
    assert len(subject) <= 72 and blank == ""
    assert body == [
        *(f"+ release-checklist-{n}" for n in range(6)),
        "- old-wiki (superseded by new-wiki)",
        "other files: MEMORY.md",
    ]
    assert (
        message(Changes(other=("MEMORY.md", ".gitignore"))).splitlines()[0]
        == "kura sync: MEMORY.md, .gitignore"
    )


def test_the_command_a_conflict_names_lets_the_person_merge_by_hand(cli: Cli, tmp_path: Path) -> None:
    team = Team(tmp_path, "")
    a = team.seed(cli, ("deploy-day", "deploys go out Tuesday"))
    b = team.clone("b")
    cli("-s", str(a), "remember", "deploy-day", "deploys go out Tuesday", "Tuesday at 10:00 CET.")
    assert sync(cli, a).code == 0
    cli("-s", str(b), "remember", "deploy-day", "deploys go out Tuesday", "Tuesday at 14:00 UTC.")
    cli("-s", str(b), "remember", "from-b", "the printer is on floor 3")
    failed = sync(cli, b, "--json")
    assert failed.code == 1
    assert json.loads(failed.out)["next"] == "git pull --rebase --autostash"

    subprocess.run(["git", "pull", "-q", "--rebase", "--autostash"], cwd=b, capture_output=True, check=False)
    conflicted = (b / "deploy-day.md").read_text()
    assert (
        "<<<<<<< " in conflicted
        and "Tuesday at 10:00 CET." in conflicted
        and "Tuesday at 14:00 UTC." in conflicted
    )
    stopped = sync(cli, b)
    assert stopped.code == 1 and "unresolved conflicts in deploy-day.md" in stopped.err
    resolved = re.sub(
        r"<<<<<<< [^\n]*\n.*?>>>>>>> [^\n]*\n", "Tuesday at 10:00 CET (14:00 UTC).\n", conflicted, flags=re.S
    )
    (b / "deploy-day.md").write_text(resolved)
    git(b, "add", "deploy-day.md")
    git(b, "stash", "drop", "-q")  # git kept a copy of the changes it put back
    merged = sync(cli, b)
    assert merged.code == 0, merged
    assert git(team.remote, "show", "main:deploy-day.md") == resolved
    assert entries(git(team.remote, "show", "main:MEMORY.md"), "from-b") == 1


def test_a_change_outside_the_store_that_collides_with_what_came_in_is_put_back(
    cli: Cli, tmp_path: Path
) -> None:
    team = Team(tmp_path, LAYOUTS["subfolder"])
    a = team.seed(cli, ("deploy-day", "deploys go out Tuesday"))
    (a / "app.py").write_text("print('v1')\n")
    git(a, "add", "app.py")
    git(a, "commit", "-q", "-m", "app")
    git(a, "push", "-q")
    b = team.clone("b")
    (b / "app.py").write_text("print('v2 from b')\n")
    git(b, "commit", "-q", "-am", "app v2")
    git(b, "push", "-q")
    cli("-s", str(team.store(a)), "remember", "oncall", "oncall rota is weekly")
    (a / "app.py").write_text("print('v2 from a, unsaved work')\n")
    before = snapshot(a)

    refused = sync(cli, team.store(a))
    assert refused.code == 1, refused
    assert "your uncommitted changes outside the store (app.py) conflict with what came in" in refused.err
    assert snapshot(a) == before


class RealTeam(Team):
    """The same team with kura's own driver, set up by ``kura git install`` in each clone."""

    def __init__(self, tmp_path: Path, prefix: str, cli: Cli) -> None:
        super().__init__(tmp_path, prefix)
        self.cli = cli

    def configure(self, repo: Path, name: str) -> None:
        for key, value in (("user.name", name), ("user.email", f"{name}@example.com"),
                           ("protocol.file.allow", "always"), ("commit.gpgsign", "false")):  # fmt: skip
            git(repo, "config", key, value)
        store = self.store(repo)
        store.mkdir(parents=True, exist_ok=True)
        if not (store / "MEMORY.md").exists():
            init_store(store, name="team")
        assert self.cli("-s", str(store), "git", "install").code in (0, 2)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_with_kuras_own_driver_two_clones_end_with_one_index(cli: Cli, tmp_path: Path, layout: str) -> None:
    team = RealTeam(tmp_path, LAYOUTS[layout], cli)
    a = team.seed(cli, ("shared", "the shared memory"), ("old", "a memory to forget"))
    b = team.clone("b")
    store_a, store_b = team.store(a), team.store(b)
    assert cli("-s", str(store_a), "remember", "from-a", "written on machine a").code == 0
    assert cli("-s", str(store_a), "remember", "shared", "the shared memory, edited on a").code == 0
    assert cli("-s", str(store_b), "remember", "from-b", "written on machine b").code == 0
    assert cli("-s", str(store_b), "forget", "old", "--reason", "moved on").code == 0
    assert sync(cli, store_a).code == 0
    assert sync(cli, store_b).code == 0
    assert sync(cli, store_a).code == 0
    index_a = (store_a / "MEMORY.md").read_text(encoding="utf-8")
    assert index_a == (store_b / "MEMORY.md").read_text(encoding="utf-8")
    assert [entries(index_a, s) for s in ("shared", "from-a", "from-b", "old")] == [1, 1, 1, 0]
    assert "<<<<<<<" not in index_a and ">>>>>>>" not in index_a
    shown = cli("-s", str(store_b), "prefill").out
    assert "written on machine a" in shown and "the shared memory, edited on a" in shown


def test_with_kuras_own_driver_a_true_prose_conflict_leaves_both_repositories_as_they_were(
    cli: Cli, tmp_path: Path
) -> None:
    team = RealTeam(tmp_path, LAYOUTS["root"], cli)
    a = team.seed(cli, ("shared", "the shared memory"))
    b = team.clone("b")
    for repo, words in ((a, "Ask Mika before removing a line."), (b, "Ask Noor before removing a line.")):
        index = repo / "MEMORY.md"
        index.write_text(
            index.read_text(encoding="utf-8").replace("# Memory index", f"# Memory index\n\n{words}")
        )
    assert sync(cli, a).code == 0
    before_a, before_b, remote = snapshot(a), snapshot(b), git(team.remote, "rev-parse", "main")
    failed = sync(cli, b)
    assert failed.code == 1 and "MEMORY.md" in failed.err, failed
    after_b = snapshot(b)  # the store lock sync took is derived state (gitignored), not the repository's
    after_b["files"] = {k: v for k, v in after_b["files"].items() if k != ".kura/lock"}
    assert after_b == before_b and snapshot(a) == before_a
    assert git(team.remote, "rev-parse", "main") == remote


def test_an_entry_both_machines_changed_the_same_day_keeps_the_later_commit_and_says_so(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = RealTeam(tmp_path, LAYOUTS["root"], cli)
    a = team.seed(cli, ("shared", "the shared memory"))
    b = team.clone("b")
    for repo, who in ((a, "a"), (b, "b")):  # each person rewords the index line by hand, the same day
        index = repo / "MEMORY.md"
        index.write_text(index.read_text(encoding="utf-8").replace(
            "— the shared memory", f"— the shared memory, as {who} says"), encoding="utf-8")  # fmt: skip
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-12-01T10:00:00+00:00")
    assert sync(cli, a).code == 0
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-12-01T10:05:00+00:00")  # b commits its edit later
    done = sync(cli, b)
    assert done.code == 0, done
    assert "merged: MEMORY.md: shared: its line was changed on both sides" in done.err
    assert "the shared memory, as b says" in (b / "MEMORY.md").read_text(encoding="utf-8")
    said = re.search(r"^committed ([0-9a-f]{7}) ", done.out, re.M)
    assert said is not None and said.group(1) in git(b, "log", "--format=%h", "-3")


PAUSE_HOOK = """#!/bin/sh
touch "{flag}.waiting"
while [ ! -e "{flag}.go" ]; do sleep 0.05; done
exit {code}
"""


def _paused(repo: Path, hook: str, flag: Path, code: int = 0) -> None:
    path = repo / ".git" / "hooks" / hook
    path.write_text(PAUSE_HOOK.format(flag=flag, code=code))
    path.chmod(0o755)


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 30
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def _kura_sync(store: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "kura", "sync", "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_a_sync_stopped_by_sigterm_undoes_its_commit(cli: Cli, tmp_path: Path) -> None:
    team = RealTeam(tmp_path, LAYOUTS["root"], cli)
    a = team.seed(cli, ("shared", "the shared memory"))
    assert cli("-s", str(a), "remember", "new-one", "written before the sync").code == 0
    before = snapshot(a)
    flag = tmp_path / "commit"
    _paused(a, "pre-commit", flag)
    proc = _kura_sync(a)
    _wait_for(flag.with_suffix(".waiting"))
    proc.send_signal(signal.SIGTERM)  # to kura alone, as systemd or `timeout` would
    (flag.with_suffix(".go")).touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "stopped by SIGTERM" in err, (out, err)
    after = snapshot(a)
    after["files"] = {k: v for k, v in after["files"].items() if not k.startswith(".kura/")}
    before["files"] = {k: v for k, v in before["files"].items() if not k.startswith(".kura/")}
    assert after == before


def test_a_failed_sync_keeps_what_a_person_saved_while_it_ran(cli: Cli, tmp_path: Path) -> None:
    team = RealTeam(tmp_path, LAYOUTS["subfolder"], cli)
    a = team.seed(cli, ("shared", "the shared memory"))
    (a / "app.py").write_text("code v1\n")
    git(a, "add", "app.py")
    git(a, "commit", "-q", "-m", "app")
    git(a, "push", "-q")
    b = team.clone("b")
    assert cli("-s", str(team.store(b)), "remember", "from-b", "b's memory").code == 0
    assert sync(cli, team.store(b)).code == 0  # upstream moves: a's sync will rebase
    assert cli("-s", str(team.store(a)), "remember", "from-a", "a's memory").code == 0
    flag = tmp_path / "push"
    _paused(a, "pre-push", flag, code=1)  # the push is refused, after a while
    proc = _kura_sync(team.store(a))
    _wait_for(flag.with_suffix(".waiting"))
    (a / "app.py").write_text("code v2, saved while kura synced\n")
    (flag.with_suffix(".go")).touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, (out, err)
    assert (a / "app.py").read_text() == "code v2, saved while kura synced\n"
    assert git(a, "log", "-1", "--format=%s").strip() == "app"


def test_a_memory_renamed_on_one_side_and_edited_on_the_other_is_said(cli: Cli, tmp_path: Path) -> None:
    team = RealTeam(tmp_path, LAYOUTS["root"], cli)
    a = team.seed(cli, ("deploy-day", "deploys go out Tuesday"))
    b = team.clone("b")
    git(a, "mv", "deploy-day.md", "deploys.md")
    index = a / "MEMORY.md"
    index.write_text(
        index.read_text(encoding="utf-8").replace("(deploy-day.md)", "(deploys.md)"), encoding="utf-8"
    )
    assert sync(cli, a).code == 0
    assert cli("-s", str(b), "remember", "deploy-day", "deploys go out Wednesday").code == 0
    done = sync(cli, b)
    assert done.code == 0, done
    assert "names deploy-day, which no memory file is" in done.err and "kura doctor --fix" in done.err


def test_a_persons_own_stash_is_never_popped_by_sync(cli: Cli, tmp_path: Path) -> None:
    """Something dirty that `git stash` does not take (a submodule's own changes): sync must
    not take the person's older stash for its own."""
    team = RealTeam(tmp_path, LAYOUTS["subfolder"], cli)
    a = team.seed(cli, ("shared", "the shared memory"))
    lib = tmp_path / "lib"
    git(tmp_path, "init", "-q", "-b", "main", str(lib))
    git(lib, "config", "user.name", "l")
    git(lib, "config", "user.email", "l@example.com")
    (lib / "lib.txt").write_text("v1\n")
    git(lib, "add", "lib.txt")
    git(lib, "commit", "-q", "-m", "lib")
    b = team.clone("b")
    git(b, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub")
    git(b, "commit", "-q", "-m", "a submodule")
    git(b, "push", "-q")
    (b / "notes.txt").write_text("the person's own work in progress\n")
    git(b, "add", "notes.txt")
    git(b, "stash", "push", "-q", "-m", "USER'S OWN STASH")
    (b / "sub" / "lib.txt").write_text("v2, changed inside the submodule\n")
    assert cli("-s", str(team.store(a)), "remember", "from-a", "a's memory").code == 0
    assert sync(cli, team.store(a)).code == 0  # upstream moves: b's sync rebases and sets things aside
    assert cli("-s", str(team.store(b)), "remember", "from-b", "b's memory").code == 0
    assert sync(cli, team.store(b)).code == 0
    assert "USER'S OWN STASH" in git(b, "stash", "list")
    assert not (b / "notes.txt").exists()


def test_with_pull_rebase_merges_a_local_merge_is_kept(cli: Cli, tmp_path: Path) -> None:
    team = RealTeam(tmp_path, LAYOUTS["subfolder"], cli)
    a = team.seed(cli, ("shared", "the shared memory"))
    b = team.clone("b")
    git(b, "config", "pull.rebase", "merges")
    git(b, "switch", "-q", "-c", "feat")
    (b / "feature.txt").write_text("a feature\n")
    git(b, "add", "feature.txt")
    git(b, "commit", "-q", "-m", "a feature")
    git(b, "switch", "-q", "main")
    git(b, "merge", "-q", "--no-ff", "-m", "merge feat", "feat")
    assert cli("-s", str(team.store(a)), "remember", "from-a", "a's memory").code == 0
    assert sync(cli, team.store(a)).code == 0
    assert cli("-s", str(team.store(b)), "remember", "from-b", "b's memory").code == 0
    assert sync(cli, team.store(b)).code == 0
    assert "merge feat" in git(b, "log", "--merges", "--format=%s")


# -- a remote that committed .kura/ (issue 29, item 9) ------------------------------------------


def kura_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", *args], capture_output=True, text=True, env=dict(os.environ)
    )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_remote_that_committed_the_state_folder_does_not_break_sync(
    cli: Cli, tmp_path: Path, layout: str
) -> None:
    team = Team(tmp_path, LAYOUTS[layout])
    a = team.seed(cli, ("deploy-day", "deploys go out on tuesday"))
    assert kura_process("-s", str(team.store(a)), "weave").returncode in (0, 2)
    state = f"{team.prefix}.kura"
    git(a, "add", "-f", state)
    git(a, "commit", "-q", "-m", "commit the derived state too")
    git(a, "push", "-q")
    b = team.clone("b")
    planted = git(b, "ls-files", "--", state).split()
    assert planted  # the clone tracks the remote's .kura/
    assert kura_process("-s", str(team.store(b)), "remember", "lunch", "lunch is at noon").returncode == 0
    done = kura_process("sync", "--store", str(team.store(b)))
    assert done.returncode == 0, done.stderr
    assert f"untracked {len(planted)} file(s) of derived state under .kura/" in done.stderr
    assert git(b, "ls-files", "--", state) == ""
    assert all((b / path).exists() for path in planted)  # untracked, never deleted here
    assert git(b, "status", "--porcelain", "--", team.prefix or ".") == ""
    assert git(b, "ls-tree", "-r", "--name-only", "origin/main", "--", state) == ""
    assert f"{team.prefix}lunch.md" in git(b, "ls-tree", "-r", "--name-only", "origin/main")
    again = kura_process("sync", "--store", str(team.store(b)))
    assert again.returncode == 2, again.stderr  # nothing left to do, and nothing said twice
    assert "untracked" not in again.stderr
