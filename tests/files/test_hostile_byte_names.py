"""A store holding a file whose name is not UTF-8 (a clone or an archive made elsewhere can
bring one: ``bad\\xff.md``): every reader skips it and doctor names it, as it does a name with
a control character, in a folder outside git and in a repository where the file is committed
and then edited. Real files with byte names, real git, real ``kura`` processes.

Before: ``kura weave`` (and everything that scans the catalog) stopped with "unexpected error:
UnicodeEncodeError" (the name went into SQLite); in git, ``weave`` and ``prefill`` stopped with
a UnicodeDecodeError reading ``git status``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_memory

BAD = b"bad\xff.md"
COMMANDS = [["weave", "--no-model"], ["prefill"], ["recent"], ["list"], ["recall", "deploy", "--no-model"]]


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=a", "-c", "user.email=a@b", *args],
        check=True, capture_output=True,
    )  # fmt: skip


@pytest.fixture(params=["folder", "git"])
def store(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "store"
    write_memory(root, "deploy", "project", "we deploy with the script")
    (root / "MEMORY.md").write_text("# Index\n\n- [deploy](deploy.md) — we deploy with the script\n")
    try:
        with open(os.path.join(os.fsencode(root), BAD), "wb") as out:
            out.write((root / "deploy.md").read_bytes())
    except OSError:
        pytest.skip("this file system takes no name that is not UTF-8")
    if request.param == "git":
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "first")
        with open(os.path.join(os.fsencode(root), BAD), "ab") as out:
            out.write(b"\nEdited since.\n")  # git status lists it
    return root


def _kura(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_name_that_is_not_utf8_stops_no_reader(store: Path, command: list[str]) -> None:
    done = _kura(store, *command)
    assert "unexpected error" not in done.stderr
    assert done.returncode in (0, 2), done.stderr
    assert "bad" not in done.stdout  # skipped, as every unreachable name is


def test_doctor_names_the_file(store: Path) -> None:
    done = _kura(store, "doctor")
    assert "unexpected error" not in done.stderr
    named = [line for line in (done.stdout + done.stderr).splitlines() if "bad\\udcff.md" in line]
    assert named and "not UTF-8" in named[0], done.stdout + done.stderr
