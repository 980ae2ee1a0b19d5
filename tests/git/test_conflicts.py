"""A git merge conflict left in a store never reaches a prompt, and the pre-commit hook
checks what is staged, not what happens to be in the working tree."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SAMPLE, Cli
from test_hooks import HOOKS, KURA, git

MARKER = re.compile(r"^(<{7}|={7}|>{7})( |$)", re.M)
HUNK = (
    "<<<<<<< HEAD\n- [Ours](ours.md) — added on this machine\n=======\n"
    "- [Theirs](theirs.md) — added on that one\n>>>>>>> origin/main\n"
)


def kura(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kura", *args], capture_output=True, text=True, timeout=60)


@pytest.fixture
def woven(tmp_path: Path, sample_copy: Callable[[Path], Path]) -> Path:
    """A copy of the sample store with its map woven, then a merge conflict in MEMORY.md."""
    root = sample_copy(tmp_path / "store")
    assert kura("-s", str(root), "weave").returncode == 0
    lines = (root / "MEMORY.md").read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(8, HUNK)
    (root / "MEMORY.md").write_text("".join(lines), encoding="utf-8")
    return root


def test_prefill_serves_the_last_good_map_and_never_the_markers(woven: Path) -> None:
    good = (woven / ".kura" / "map.md").read_text(encoding="utf-8")
    done = kura("-s", str(woven), "prefill")
    assert done.returncode == 2, done
    assert MARKER.search(done.stdout) is None
    assert "MEMORY.md:9" in done.stdout and "merge conflict" in done.stdout  # said in the block's header
    assert good.strip() in done.stdout  # the last map woven before the conflict, whole
    assert done.stdout.rstrip().endswith("<<<END KURA-MAP>>>")
    assert "MEMORY.md:9" in done.stderr
    again = kura("-s", str(woven), "prefill")
    assert again.stdout == done.stdout  # nothing re-woven from the conflicted index meanwhile


def test_with_no_good_map_the_block_says_the_map_is_missing(woven: Path) -> None:
    shutil.rmtree(woven / ".kura")
    done = kura("-s", str(woven), "prefill")
    assert done.returncode == 1 and MARKER.search(done.stdout) is None
    assert "MISSING" in done.stdout and "merge conflict" in done.stdout
    assert not (woven / ".kura" / "map.md").exists()


def test_weave_refuses_a_conflicted_index_and_keeps_the_last_map(woven: Path) -> None:
    before = (woven / ".kura" / "map.md").read_bytes()
    done = kura("-s", str(woven), "weave", "--force")
    assert done.returncode == 1 and "MEMORY.md:9" in done.stderr and "Traceback" not in done.stderr
    assert (woven / ".kura" / "map.md").read_bytes() == before


def test_context_never_shows_the_markers(woven: Path, cli: Cli) -> None:
    done = cli("-s", str(woven), "context", "how do we deploy?")
    assert MARKER.search(done.out) is None, done


def test_doctor_names_each_conflicted_file_with_its_lines_and_fails(woven: Path) -> None:
    path = woven / "backup-schedule.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "<<<<<<< ours\nnightly\n=======\nhourly\n>>>>>>> theirs\n", encoding="utf-8")
    index = (woven / "MEMORY.md").read_text(encoding="utf-8")
    (woven / "MEMORY.md").write_text(index + HUNK, encoding="utf-8")  # a second conflict in the index
    done = kura("-s", str(woven), "doctor", "--strict")
    assert done.returncode == 1
    found = [line for line in done.stdout.splitlines() if "merge conflict" in line]
    last = len(index.splitlines()) + 1
    assert any("MEMORY.md:9:" in line and f"lines 9–13, {last}–{last + 4}" in line for line in found), found
    start = len(text.splitlines()) + 1
    assert any("backup-schedule.md" in line and f"lines {start}–{start + 4}" in line for line in found), found


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".kura"))
    git(root, "init", "-q")
    shutil.copy(HOOKS / "git" / "pre-commit", root / ".git" / "hooks" / "pre-commit")
    monkeypatch.setenv("KURA_BIN", KURA)
    git(root, "add", ".")
    assert git(root, "commit", "-qm", "the sample store").returncode == 0
    return root


BROKEN = "---\nname: b\ndescription: 'Chose X' fast\ntype: project\n---\n"


def test_the_pre_commit_hook_checks_what_is_staged_not_the_working_tree(repo: Path) -> None:
    (repo / "broken.md").write_text(BROKEN)
    git(repo, "add", "broken.md")
    (repo / "broken.md").unlink()  # gone from the working tree, still staged
    blocked = git(repo, "commit", "-qm", "sneaks in")
    assert blocked.returncode == 1 and "broken.md:3: frontmatter is not valid YAML" in blocked.stderr
    git(repo, "reset", "-q", "broken.md")


def test_a_good_staged_file_commits_whatever_the_working_tree_holds(repo: Path) -> None:
    note = repo / "staged-note.md"
    note.write_text(
        "---\nname: n\ndescription: a fine staged memory\ntype: project\n---\n\nFine; see [[backup-schedule]].\n"
    )
    index = (repo / "MEMORY.md").read_text(encoding="utf-8")
    (repo / "MEMORY.md").write_text(index + "- [n](staged-note.md) — a fine staged memory\n")
    git(repo, "add", "staged-note.md", "MEMORY.md")
    note.write_text(BROKEN)  # broken only in the working tree, after staging
    done = git(repo, "commit", "-qm", "a good memory")
    assert done.returncode == 0, done.stderr
    shown = git(repo, "show", "HEAD:staged-note.md").stdout
    assert "a fine staged memory" in shown


FENCED = "<<<<<<< HEAD\n```sh\n=======\n```bash\n>>>>>>> laptop\nmake test\n```\n"


@pytest.mark.parametrize("how", [["-a"], ["--", "backup-schedule.md"]], ids=["commit -a", "commit -- path"])
def test_the_hook_checks_the_index_git_commits_from(repo: Path, how: list[str]) -> None:
    """``commit -a`` and ``commit -- PATH`` hand the hook an index of their own."""
    memory = repo / "backup-schedule.md"
    memory.write_text(
        memory.read_text(encoding="utf-8") + "<<<<<<< HEAD\nnightly\n=======\nhourly\n>>>>>>> b\n"
    )
    blocked = git(repo, "commit", "-qm", "sneaks in", *how)
    assert (
        blocked.returncode == 1
        and "backup-schedule.md" in blocked.stderr
        and "merge conflict" in blocked.stderr
    )
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "the sample store"


def test_a_conflict_whose_sides_open_fences_is_still_a_conflict(woven: Path) -> None:
    """Both sides changed a fence's opening line: each side opens a fence of its own."""
    index = woven / "MEMORY.md"
    text = index.read_text(encoding="utf-8").replace(HUNK, "")
    index.write_text(text + FENCED, encoding="utf-8")
    done = kura("-s", str(woven), "prefill")
    assert done.returncode == 2 and MARKER.search(done.stdout) is None
    doctor = kura("-s", str(woven), "doctor")
    assert doctor.returncode == 1 and "merge conflict" in doctor.stdout


def test_a_conflict_example_inside_a_memorys_code_block_is_no_conflict(tmp_path: Path) -> None:
    root = tmp_path / "s"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".kura"))
    memory = root / "backup-schedule.md"
    memory.write_text(memory.read_text() + "\nWhat a conflict looks like:\n\n```\n" + HUNK + "```\n")
    doctor = kura("-s", str(root), "doctor")
    assert "merge conflict" not in doctor.stdout


def test_under_a_ceiling_a_conflicted_index_sends_the_last_maps_outline_never_both_sides(woven: Path) -> None:
    done = kura("-s", str(woven), "prefill", "--max-chars", "1200", "--json")
    block = json.loads(done.stdout)
    assert done.returncode == 2 and block["state"] == "conflicted" and block["chars"] <= 1200
    assert "merge conflict" in block["text"] and MARKER.search(block["text"]) is None
    assert "Ours" not in block["text"] and "Theirs" not in block["text"]  # neither side's new line
    assert "outline of the last map woven before it" in block["warning"]


def test_the_full_cli_warns_of_a_conflict_as_the_fast_path_does(woven: Path, cli: Cli) -> None:
    """``kura prefill --json`` (and any run the fast path hands on) goes through the typer
    command: the conflict is said on stderr there too, not only inside the block."""
    fast = kura("-s", str(woven), "prefill")
    full = cli("-s", str(woven), "prefill")
    assert (full.code, full.out) == (fast.returncode, fast.stdout)
    assert "MEMORY.md:9" in fast.stderr and "MEMORY.md:9" in full.err
