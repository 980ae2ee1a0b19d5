"""What kura fsyncs: the person's files always, derived state never. The map, its record
(``map.json``), the sector map and the layer cache under ``.kura/`` are rebuilt when lost,
and each is checked when read (a digest in ``map.json``, or a parse), so the weave writes
them atomically without waiting for the disk (~1–10 ms each on a busy one); a memory and
MEMORY.md are still fsynced, file and folder. ``os.fsync`` is watched, not replaced: every
call still reaches the disk, and the test records which file each was on."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, make_store

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="names a descriptor via /proc")


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    seen: list[Path] = []
    real = os.fsync

    def watched(fd: int) -> None:
        seen.append(Path(os.readlink(f"/proc/self/fd/{fd}")))
        real(fd)

    monkeypatch.setattr(os, "fsync", watched)
    return seen


def _under(paths: list[Path], folder: Path) -> list[str]:
    return sorted(str(p) for p in paths if p == folder or folder in p.parents)


def test_a_weave_fsyncs_no_derived_state_and_a_remember_fsyncs_the_persons_files(
    tmp_path: Path, cli: Cli, synced: list[Path]
) -> None:
    memories = [(f"m{i}", "project", f"the staging deploy step {i}", None) for i in range(6)]
    store = make_store(tmp_path / "store", memories)
    state = store.root / ".kura"
    assert cli("-s", str(store.root), "weave", "--no-model").code == 0  # cold: writes everything
    assert {"map.md", "map.json", "layers.json", "sectors.md"} <= {p.name for p in state.iterdir()}
    edited = store.root / "m3.md"
    edited.write_text(edited.read_text() + "\nOne more line.\n")
    assert cli("-s", str(store.root), "weave", "--no-model").code in (0, 2)  # after one edit
    assert _under(synced, state) == []
    synced.clear()
    done = cli("-s", str(store.root), "remember", "tide", "High tide is at six in the harbour")
    assert done.code == 0, done.err
    names = [p.name for p in synced]
    assert any(name.startswith(".tide.md.") for name in names)  # the memory, before its rename
    assert any(name.startswith(".MEMORY.md.") for name in names)  # the index, before its rename
    assert store.root in synced  # and the folder after the renames
