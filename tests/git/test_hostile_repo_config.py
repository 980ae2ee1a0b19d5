"""A store that comes with its repository's own config (an archive carries ``.git/config``,
a clone does not) runs none of the programs that config names when kura reads git.

``core.fsmonitor`` names a program ``git status`` runs to learn what changed; kura asks git
for every memory's age on each weave, and the prompt hook weaves before each prompt. The
programs here write a marker file: kura must never run them.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_memory


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def commit_all(root: Path) -> None:
    _git(root, "-c", "user.name=a", "-c", "user.email=a@b", "add", "-A")
    _git(root, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "first")


def committed(root: Path) -> None:
    """A store of one memory and its index, in a repository of one commit."""
    write_memory(root, "deploy", "project", "we deploy with the script")
    (root / "MEMORY.md").write_text("# Index\n\n- [deploy](deploy.md) — we deploy with the script\n")
    _git(root, "init", "-q")
    commit_all(root)


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    """A store in a repository whose config names an fsmonitor program; the marker it writes."""
    root, marker = tmp_path / "store", tmp_path / "RAN"
    committed(root)
    hook = tmp_path / "monitor.sh"
    hook.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    _git(root, "config", "core.fsmonitor", str(hook))
    write_memory(root, "backup", "reference", "the backup runs nightly")  # something for status to see
    return root, marker


def test_git_status_itself_runs_the_planted_program(planted: tuple[Path, Path]) -> None:
    """The premise: git, asked as a person would ask it, runs the program."""
    root, marker = planted
    subprocess.run(["git", "-C", str(root), "status", "--porcelain"], check=True, capture_output=True)
    assert marker.exists()


@pytest.mark.parametrize("command", [["weave", "--no-model"], ["prefill"], ["recent"], ["history", "deploy"]])
def test_kura_runs_no_program_the_repository_config_names(
    planted: tuple[Path, Path], command: list[str]
) -> None:
    root, marker = planted
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), *command],
        capture_output=True, text=True, timeout=120, env={**os.environ},
    )  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    assert not marker.exists(), f"kura {' '.join(command)} ran the repository's core.fsmonitor program"
