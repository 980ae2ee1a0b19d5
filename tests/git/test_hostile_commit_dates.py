"""A commit's dates are whatever its author wrote, and git takes ``@99999999999999`` (the
year 3,170,843). A store cloned with such a commit in its history is read as a store whose
files have no git date: before, ``kura weave``, ``kura prefill`` (a prompt hook's map),
``kura recall --at`` and ``kura history`` died with "ValueError: year 3170843 is out of
range". Its author and subject are its author's words too: ``kura history`` shows them
without control characters, so a commit cannot retitle the terminal or clear it.

A real git repository, a real commit made with those dates, real ``kura`` processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FAR = "@99999999999999 +0000"
DEPLOY = "---\nname: Deploy\ndescription: how prod is deployed\ntype: project\n---\nRun make deploy-prod.\n"


def git(cwd: Path, *args: str, **env: str) -> None:
    subprocess.run(["git", "-c", "user.name=someone", "-c", "user.email=someone@example.com", *args], cwd=cwd,
                   check=True, capture_output=True, env={**os.environ, **env}, timeout=60)  # fmt: skip


@pytest.fixture
def cloned(tmp_path: Path) -> Path:
    """A repository whose one commit adds the store with dates no calendar holds."""
    store = tmp_path / "memory"
    store.mkdir()
    (store / "deploy.md").write_text(DEPLOY)
    (store / "MEMORY.md").write_text("- [Deploy](deploy.md) — how prod is deployed\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "memory")
    git(tmp_path, "commit", "-qm", "memories", GIT_AUTHOR_DATE=FAR, GIT_COMMITTER_DATE=FAR)
    return store


COMMANDS = {
    "weave": ("weave",),
    "prefill": ("prefill",),
    "recall --at": ("recall", "--no-model", "how is prod deployed", "--at", "2020-01-01"),
    "history": ("history", "deploy"),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_a_commit_dated_past_any_calendar_is_a_commit_with_no_date(cloned: Path, name: str) -> None:
    done = subprocess.run([sys.executable, "-m", "kura", "-s", str(cloned), *COMMANDS[name]], capture_output=True,
                          text=True, env={**os.environ, "KURA_INDEX_BACKGROUND": "0"}, timeout=180)  # fmt: skip
    assert "unexpected error" not in done.stderr and done.returncode == 0, done.stderr
    if name == "prefill":
        assert "[Deploy](deploy.md)" in done.stdout
    if name == "history":
        assert done.stdout.splitlines()[1].startswith("undated ") and "created" in done.stdout
    if name == "recall --at":  # no date of birth: it counts as having existed then
        assert "Run make deploy-prod." in done.stdout


def test_a_commit_author_s_control_characters_never_reach_the_terminal(cloned: Path) -> None:
    (cloned / "deploy.md").write_text(DEPLOY + "Then watch the dashboard.\n")
    git(cloned.parent, "add", "memory")
    git(cloned.parent, "-c", "user.name=evil\x1b]0;owned\x07\x1b[2J", "commit", "-qm", "tidy \x1b[31mred")
    done = subprocess.run([sys.executable, "-m", "kura", "-s", str(cloned), "history", "deploy"], capture_output=True,
                          text=True, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "(evil]0;owned[2J)" in done.stdout and not any(c in done.stdout for c in "\x1b\x07")
