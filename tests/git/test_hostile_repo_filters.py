"""A store that comes with its repository's ``.git/`` (an archive carries its config and
hooks) runs none of their programs when kura only reads git: not the clean or process filter
its attributes name (``git status`` reads a file with stale stat data through it), and not the
``post-index-change`` hook (``git status`` writes back the index it refreshed).

The programs write a marker file; each plant is first shown to run under a plain
``git status``, then kura's reading commands run as real processes and must not run it.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_memory
from test_hostile_repo_config import _git, commit_all, committed

READERS = [["weave", "--no-model"], ["prefill"], ["recent"]]


def _program(path: Path, marker: Path) -> str:
    path.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def _plant(root: Path, kind: str, program: str) -> None:
    """The repository's own config (or hooks folder) set to run ``program``."""
    if kind == "hook":
        hook = root / ".git" / "hooks" / "post-index-change"
        hook.write_text(Path(program).read_text())
        hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
        return
    name = {"clean": "tidy", "included": "tidy", "odd name": "a=b.c"}[kind]
    (root / ".gitattributes").write_text(f"*.md filter={name}\n")
    config = root / ".git" / ("extra.cfg" if kind == "included" else "config")
    with config.open("a") as out:
        out.write(f'[filter "{name}"]\n\tclean = {program}\n\trequired = true\n')
    if kind == "included":
        _git(root, "config", "include.path", "extra.cfg")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No git config but the repository's own: HOME in tmp, no system file."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def _store(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    root, marker = tmp_path / "store", tmp_path / "RAN"
    committed(root)
    (root / ".gitignore").write_text(".kura/\n")
    _plant(root, kind, _program(tmp_path / "run.sh", marker))
    return root, marker


def _stale(root: Path) -> None:
    """The memory's stat data no longer what the index holds (as after an archive is unpacked)."""
    memory = root / "deploy.md"
    later = memory.stat().st_mtime_ns + 2_000_000_000
    os.utime(memory, ns=(later, later))


KINDS = ["clean", "included", "hook", "odd name"]


@pytest.mark.parametrize("kind", KINDS)
def test_git_status_itself_runs_the_planted_program(tmp_path: Path, home: None, kind: str) -> None:
    root, marker = _store(tmp_path, kind)
    _stale(root)
    subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, check=False)
    assert marker.exists()


@pytest.mark.parametrize("command", READERS, ids=[c[0] for c in READERS])
@pytest.mark.parametrize("kind", KINDS)
def test_kura_reading_git_runs_no_filter_or_hook_of_the_repository(
    tmp_path: Path, home: None, kind: str, command: list[str]
) -> None:
    root, marker = _store(tmp_path, kind)
    _stale(root)
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), *command], capture_output=True, text=True, timeout=120
    )
    assert done.returncode in (0, 2), done.stderr
    assert not marker.exists(), f"kura {command[0]} ran the repository's {kind} program"


def test_an_edited_memory_is_still_seen_as_uncommitted(tmp_path: Path, home: None) -> None:
    """With the filter switched off, git status still tells an edited memory from a committed one."""
    root, marker = _store(tmp_path, "clean")
    (root / "deploy.md").write_text((root / "deploy.md").read_text() + "\nAnd then we check it.\n")
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), "recent", "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    changed = [
        item for item in json.loads(done.stdout)["items"] if "changed" in [item["what"], *item["also"]]
    ]
    assert [item["slug"] for item in changed] == ["deploy"], done.stdout
    assert not marker.exists()


def _with_submodule(tmp_path: Path) -> tuple[Path, Path]:
    """A store whose repository holds a submodule inside it, the submodule's own config naming
    a clean filter its attributes use (``.git/modules/sub/config``: an archive carries it)."""
    root, marker = tmp_path / "store", tmp_path / "RAN"
    sub = tmp_path / "sub"
    write_memory(sub, "inner", "project", "a memory kept in a submodule")
    (sub / ".gitattributes").write_text("*.md filter=inner\n")
    _git(sub, "init", "-q")
    commit_all(sub)
    write_memory(root, "deploy", "project", "we deploy with the script")
    (root / "MEMORY.md").write_text("# Index\n\n- [deploy](deploy.md) — we deploy with the script\n")
    (root / ".gitignore").write_text(".kura/\n")
    _git(root, "init", "-q")
    _git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    commit_all(root)
    _git(root / "sub", "config", "filter.inner.clean", _program(tmp_path / "run.sh", marker))
    memory = root / "sub" / "inner.md"
    later = memory.stat().st_mtime_ns + 2_000_000_000
    os.utime(memory, ns=(later, later))
    return root, marker


def test_git_status_runs_a_submodule_s_filter(tmp_path: Path, home: None) -> None:
    root, marker = _with_submodule(tmp_path)
    subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, check=False)
    assert marker.exists()


@pytest.mark.parametrize("command", READERS, ids=[c[0] for c in READERS])
def test_kura_reading_git_runs_no_filter_of_a_submodule(
    tmp_path: Path, home: None, command: list[str]
) -> None:
    root, marker = _with_submodule(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), *command], capture_output=True, text=True, timeout=120
    )
    assert done.returncode in (0, 2), done.stderr
    assert not marker.exists(), f"kura {command[0]} ran the submodule's clean filter"
