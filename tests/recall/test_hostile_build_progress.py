"""``.kura/index-build.json`` may come with a clone, crafted: ``kura stores`` and ``kura doctor``
read it as untrusted derived state. A time no build writes (a 400-digit integer, NaN, a
negative count) is damage, reported once, never an OverflowError; a failure reason carrying
terminal escapes and line breaks is shown as one clean line, so the file cannot rewrite the
terminal's title or fake lines of doctor's report.

Real files and real ``kura stores`` / ``kura doctor`` processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

GOOD = {
    "state": "failed",
    "pid": 1,
    "done": 1,
    "total": 2,
    "started": 1.0,
    "updated": 2.0,
    "reason": "disk full",
}
WRONG = {
    "a time of 400 digits": {"started": 10**400},
    "a count past 64 bits": {"done": 10**400},
    "a negative time": {"updated": -1},
}


def store(tmp_path: Path, progress: str) -> Path:
    root = tmp_path / "memory"
    (root / ".kura").mkdir(parents=True)
    (root / "deploy.md").write_text(
        "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nmake deploy\n"
    )
    (root / "MEMORY.md").write_text("- [Deploy](deploy.md) — how we deploy\n")
    (root / ".kura" / "index-build.json").write_text(progress)
    return root


def kura(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kura", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "KURA_INDEX_BACKGROUND": "0"}, timeout=180)  # fmt: skip


@pytest.mark.parametrize("case", WRONG, ids=list(WRONG))
def test_a_progress_file_with_numbers_no_build_writes_is_damage_not_a_crash(
    tmp_path: Path, case: str
) -> None:
    store(tmp_path, json.dumps({**GOOD, **WRONG[case]}))
    for args in (("stores",), ("stores", "--json"), ("doctor",)):
        done = kura(tmp_path, *args)
        assert "unexpected error" not in done.stderr, (args, done.stderr)
        assert done.returncode == 0, (args, done.stderr)
        assert "index-build.json: holds fields of the wrong type" in done.stderr
        assert "index build" not in done.stdout  # nothing reported from a damaged file


def test_the_failure_reason_reaches_the_terminal_as_one_clean_line(tmp_path: Path) -> None:
    said: dict[str, Any] = {**GOOD, "reason": "x\x1b]0;owned\x07\x1b[2J\nkura: all healthy\r"}
    store(tmp_path, json.dumps(said))
    stores, doctor = kura(tmp_path, "stores"), kura(tmp_path, "doctor")
    assert stores.returncode == 0 and doctor.returncode == 0, stores.stderr + doctor.stderr
    for out in (stores.stdout, doctor.stdout):
        line = next(line for line in out.splitlines() if "index build failed" in line)
        assert line.endswith("index build failed: x]0;owned[2J kura: all healthy"), line
        assert not any(c in out for c in "\x1b\x07\r")
        assert "\nkura: all healthy" not in out


def test_a_lock_that_is_a_link_is_replaced_and_the_build_runs(tmp_path: Path) -> None:
    """A clone can carry ``.kura/index-build.lock`` as a symlink (git keeps links). It was
    opened without following it, so no build could ever start while every recall said one
    was making the vectors; now the link is removed (said on stderr) and the build runs."""
    from kura.recall import index_job

    root = _big(tmp_path)
    (root / ".kura").mkdir(exist_ok=True)
    (root / ".kura" / "index-build.lock").symlink_to(tmp_path / "elsewhere")
    done = _recall_with_no_budget(tmp_path)
    assert "index-build.lock: is a symlink" in done.stderr
    assert index_job.running(root) or index_job.progress(root) is not None  # started before the recall ended
    deadline = time.monotonic() + 300
    while index_job.running(root):
        assert time.monotonic() < deadline, "the build still runs"
        time.sleep(0.1)
    said = index_job.progress(root)
    assert said is not None and (said.state, said.done) == ("done", 200)
    assert not (tmp_path / "elsewhere").exists()


def test_a_lock_that_is_a_folder_is_set_aside_and_the_build_runs(tmp_path: Path) -> None:
    """A clone can carry ``.kura/index-build.lock/`` as a folder (git keeps one with a file in
    it). The lock could not be opened, so no build ever started, and nothing said why: every
    recall of a big store stayed partial. Now the folder is moved aside (said on stderr, its
    file kept) and the build runs."""
    from kura.recall import index_job

    root = _big(tmp_path)
    planted = root / ".kura" / "index-build.lock"
    planted.mkdir(parents=True)
    (planted / "keep.txt").write_text("a file the clone brought\n")
    done = _recall_with_no_budget(tmp_path)
    assert "index-build.lock: is a folder, not a file" in done.stderr
    deadline = time.monotonic() + 300
    while index_job.running(root) or index_job.progress(root) is None:
        assert time.monotonic() < deadline, "no build ran"
        time.sleep(0.1)
    said = index_job.progress(root)
    assert said is not None and (said.state, said.done) == ("done", 200)
    kept = root / ".kura" / "index-build.lock.damaged" / "keep.txt"
    assert kept.read_text() == "a file the clone brought\n"


def _big(tmp_path: Path) -> Path:
    """A generated store of 200 memories, the one store of ``tmp_path/kura.toml``."""
    from test_index_build import generated

    root = tmp_path / "big"
    root.mkdir()
    generated(root, 200)
    (tmp_path / "kura.toml").write_text(f'[stores.big]\npath = "{root}"\n')
    return root


def _recall_with_no_budget(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """A real ``kura recall`` in ``tmp_path`` with no time to embed: it leaves the build behind."""
    done = subprocess.run(
        [sys.executable, "-m", "kura", "recall", "--json", "--no-model", "where is the backup tape kept"],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "KURA_INDEX_BUDGET": "0"}, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done
