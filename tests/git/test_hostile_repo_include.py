"""A store that comes with its repository's ``.git/`` (an archive can carry a FIFO as well as
a config) whose ``include.path`` names a FIFO: git opens it to read its config and waits for a
writer that never comes. kura's reading commands must answer all the same, in bounded time.

Before: ``kura recent``, ``kura history`` and ``kura sync`` never returned (their git had no time limit); the
weave's ages already gave up after 30 s. Real repository, real FIFO, real ``kura`` processes,
run side by side so the test waits about one limit (``kura.git.run.READ_SECONDS``), not one a
command.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write_memory

COMMANDS = [["recent"], ["history", "deploy"], ["weave", "--no-model"], ["sync"]]
DEADLINE = 120.0  # kura.git.run.READ_SECONDS (30) a git call, and each command gives up after its first


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=a", "-c", "user.email=a@b", *args],
        check=True, capture_output=True,
    )  # fmt: skip


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_config_that_includes_a_fifo_stops_no_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "store"
    write_memory(root, "deploy", "project", "we deploy with the script")
    (root / "MEMORY.md").write_text("# Index\n\n- [deploy](deploy.md) — we deploy with the script\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first")
    os.mkfifo(root / ".git" / "extra")
    _git(root, "config", "include.path", "extra")  # from here on every git here waits on the FIFO
    started = {
        command[0]: subprocess.Popen(
            [sys.executable, "-m", "kura", "-s", str(root), *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its git children are ended with it
        )
        for command in COMMANDS
    }
    deadline = time.monotonic() + DEADLINE
    try:
        for name, process in started.items():
            try:
                _, err = process.communicate(timeout=max(deadline - time.monotonic(), 1.0))
            except subprocess.TimeoutExpired:
                pytest.fail(f"kura {name} still waits on git after {DEADLINE:.0f} s")
            assert "unexpected error" not in err
            if name == "sync":  # it needs git to answer: it stops and says why
                assert process.returncode == 1 and "did not answer in 30 s" in err, err
            else:
                assert process.returncode in (0, 2), f"kura {name}: {err}"
    finally:
        for process in started.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # a git still waiting on the FIFO too
            process.wait()
