"""The small things a person or a script stumbles on at the command line, each through a
real ``kura`` process: an observation's task and next step in ``kura context``, ``-s``
given twice, ``kura weave --force``, and a reader that closes the pipe early."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_store

from kura.cli.exit import READER_GONE


def kura(
    *args: str, stdout: int | None = subprocess.PIPE, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """A real ``kura`` process (the autouse fixture has moved KURA_HOME and HOME to tmp)."""
    return subprocess.run(
        [sys.executable, "-m", "kura", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        input=input,
    )


@pytest.fixture
def store(tmp_path: Path) -> Path:
    memories = [(f"note-{i}", "project", f"note number {i} about the deploy", None) for i in range(30)]
    return make_store(tmp_path / "desk", memories).root


def test_context_shows_an_observations_task_and_next_step(store: Path) -> None:
    (store / "_observations.md").write_text(
        "# Observations\n\n## 2026-11-30\n- 🔴 the release is blocked on the VPN\n"
        "  - task: release 2.4\n  - next: ask ops for the VPN, then rerun deploy\n"
    )
    told = kura("-s", str(store), "context", "ship the release", "--no-model")
    assert told.returncode == 0, told.stderr
    assert (
        "- 2026-11-30 🔴 the release is blocked on the VPN\n"
        "  - task: release 2.4\n  - next: ask ops for the VPN, then rerun deploy\n"
    ) in told.stdout


@pytest.mark.parametrize("command", [["list"], ["list", "--type", "project"], ["show", "note-1"]])
def test_a_second_store_option_is_refused_not_silently_taken(
    store: Path, tmp_path: Path, command: list[str]
) -> None:
    other = make_store(tmp_path / "other", [("other-note", "user", "in the other store", None)]).root
    got = kura("-s", str(store), "--store", str(other), *command)
    assert got.returncode == 1 and got.stdout == ""
    assert got.stderr.startswith("kura: error: -s/--store was given 2 times (")
    assert "a command works on one store — run it once per store" in got.stderr
    assert kura("-s", str(store), *command).returncode == 0  # once is as before


def test_weave_force_says_it_wove_and_exits_0(store: Path) -> None:
    assert kura("-s", str(store), "weave").returncode == 0
    again = kura("-s", str(store), "weave")
    assert again.returncode == 2 and again.stdout.startswith("unchanged: desk map")
    saved = (store / ".kura" / "map.md").read_bytes()
    forced = kura("-s", str(store), "weave", "--force")
    assert forced.returncode == 0, forced
    assert forced.stdout.startswith(
        "rewove desk map (forced; it came out the same, so the saved map was left as it was), ~"
    )
    assert (store / ".kura" / "map.md").read_bytes() == saved


@pytest.mark.parametrize(
    "command",
    [
        ["list"],  # answered by the front door
        ["list", "--type", "project"],  # by typer, where click meets the broken pipe first
        ["list", "--json"],
        ["recall", "deploy", "--no-model"],  # the recall fast path
        ["show", "note-1"],
        ["doctor"],
    ],
)
def test_a_reader_that_left_ends_the_command_quietly_with_141(store: Path, command: list[str]) -> None:
    """The pipe's read end is closed before kura writes, as ``head -1`` leaves it after its
    line: the first write meets a broken pipe, whatever the pipe's buffer size."""
    read, write = os.pipe()
    os.close(read)
    try:
        got = kura("-s", str(store), *command, stdout=write)
    finally:
        os.close(write)
    assert (got.returncode, got.stderr) == (READER_GONE, "")


def test_a_host_hook_whose_reader_left_still_exits_0(store: Path) -> None:
    """A host hook promises exit 0: a host that stopped reading the map is no failure."""
    read, write = os.pipe()
    os.close(read)
    try:
        got = kura("-s", str(store), "hook", "session-start", stdout=write, input="{}")
    finally:
        os.close(write)
    assert (got.returncode, got.stderr) == (0, "")
