"""A command that only reads the store never takes its lock, so it must not load the lock's
library: ``filelock`` brings ``logging``, ``platform`` and more (~15 ms of every process).
Checked on real ``kura list`` and ``kura doctor`` processes with ``python -X importtime``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _loaded(env: dict[str, str], *args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kura", *args],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode in (0, 1, 2), done.stderr
    return {
        line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")
    }


@pytest.mark.parametrize("command", ["list", "doctor"])
def test_a_command_that_only_reads_loads_no_lock_library(tmp_path: Path, command: str) -> None:
    root = tmp_path / "store"
    root.mkdir()
    for i in range(5):
        (root / f"m{i}.md").write_text(
            f"---\nname: m{i}\ndescription: memory {i}\ntype: project\n---\n\nmemory {i}\n"
        )
    (root / "MEMORY.md").write_text("".join(f"- [m{i}](m{i}.md) — memory {i}\n" for i in range(5)))
    home = tmp_path / "reader-home"
    home.mkdir()
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "KURA_"))}
    env = {**keep, "HOME": str(home), "KURA_HOME": str(home / "kura")}
    loaded = _loaded(env, "-s", str(root), command)
    assert "kura.store.catalog" in loaded  # it read the store
    assert "filelock" not in loaded
