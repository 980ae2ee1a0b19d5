"""The store lock (``kura.store.atomic.locked``) meets a state folder that came with a
clone: git keeps a folder with a file in it, so ``.kura/lock/`` or ``.kura/weave.lock/`` can
arrive as folders. Opening one as a lock fails (EISDIR), so every write and every weave in
that store failed for ever, each saying only "cannot take the store lock". A folder there is
moved aside to ``NAME.damaged`` (its files kept, said on stderr) and the work runs.

Real ``kura`` processes on a real store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_store

KURA = [sys.executable, "-m", "kura"]
PLANTED = "a file the clone brought\n"


def kura(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*KURA, "-c", str(config), "-s", "test", *args], capture_output=True, text=True,
                          env={**os.environ, "KURA_INDEX_BACKGROUND": "0"}, timeout=120)  # fmt: skip


def plant(state: Path, name: str) -> None:
    (state / name).mkdir(parents=True)
    (state / name / "keep.txt").write_text(PLANTED)


@pytest.mark.parametrize(
    ("lock", "args"),
    [("lock", ("remember", "ferry", "The ferry leaves at nine from pier four")),
     ("weave.lock", ("weave",)),
     ("observations.lock", ("observe", "the tide turned at six")),
     ("observed.lock", ("observe", "the tide turned at six"))],
)  # fmt: skip
def test_a_lock_that_is_a_folder_is_moved_aside_and_the_work_runs(
    tmp_path: Path, lock: str, args: tuple[str, ...]
) -> None:
    store = make_store(tmp_path / "store", [("deploy", "project", "Deploys go out blue-green", None)])
    config = tmp_path / "kura.toml"
    config.write_text(f'[stores.test]\npath = "{store.root}"\n')
    plant(store.root / ".kura", lock)
    done = kura(config, *args)
    assert done.returncode == 0, done.stderr
    assert f".kura/{lock}: is a folder, not a file; moved it to {lock}.damaged" in done.stderr
    assert (store.root / ".kura" / f"{lock}.damaged" / "keep.txt").read_text() == PLANTED
    assert (store.root / ".kura" / lock).is_file()
    again = kura(config, "weave")  # the lock is a file now: nothing more to say
    assert again.returncode in (0, 2) and again.stderr == "", again.stderr
