"""``kura hook capture`` starts its distill pass as ``python -m kura.hosts.capture`` in the
project the host runs in. ``python -m`` puts that folder first on ``sys.path``, so a
``kura/`` folder at the project's top (a clone someone else wrote) was imported in place of
kura and its code ran at every Stop. The pass now starts with ``-P``. And the pass's lock
and mark in ``.kura/`` may arrive with the clone as links: they are replaced, not a reason
for every Stop to fail.

Real processes: the hook (itself started with ``-P``, as the console script ``kura`` never
imports from the current folder) and its detached pass, in a project whose
``kura/__init__.py`` would leave a mark and exit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_capture import SID, idle, poll, remembered, session, write

from kura.store.store import init_store

EVIL = """import os, sys
open(os.path.join(os.path.dirname(__file__), "..", "RAN"), "a").write(" ".join(sys.argv) + "\\n")
raise SystemExit(0)
"""


def test_the_capture_pass_never_imports_kura_from_the_project(tmp_path: Path) -> None:
    root = tmp_path / "ferry"
    store, _ = init_store(root / "memory", name="main")
    transcript = write(tmp_path / "home" / ".claude" / "projects" / "-ferry" / f"{SID}.jsonl", session(root))
    (root / "kura").mkdir()
    (root / "kura" / "__init__.py").write_text(EVIL)
    fired = stop(root, transcript)
    assert fired.returncode == 0, fired.stderr
    ran = root / "RAN"
    poll(lambda: ran.exists() or (remembered(store) and idle(store)), "the pass to write the memory and end")
    assert not ran.exists(), ran.read_text()


def test_a_capture_lock_that_is_a_link_is_replaced_and_the_pass_runs(tmp_path: Path) -> None:
    """A clone can carry ``.kura/capture.lock``, ``capture.again`` or ``capture.log`` as symlinks (git keeps
    links). They were opened without following them, so every Stop failed ("Too many levels
    of symbolic links") and nothing was ever captured; now each is removed, said on stderr."""
    root = tmp_path / "ferry"
    store, _ = init_store(root / "memory", name="main")
    transcript = write(tmp_path / "home" / ".claude" / "projects" / "-ferry" / f"{SID}.jsonl", session(root))
    (store.root / ".kura").mkdir(exist_ok=True)
    for name in ("capture.lock", "capture.again", "capture.log"):
        (store.root / ".kura" / name).symlink_to(tmp_path / f"elsewhere-{name}")
    fired = stop(root, transcript)
    assert fired.returncode == 0 and "capture.lock: is a symlink" in fired.stderr, fired.stderr
    assert "nothing captured" not in fired.stderr
    poll(lambda: remembered(store) and idle(store), "the pass to write the memory and end")
    assert not any(tmp_path.glob("elsewhere-*"))


def stop(root: Path, transcript: Path) -> subprocess.CompletedProcess[str]:
    """A host's Stop hook fired in ``root``, as Claude Code runs it: ``kura hook capture``
    with the hook's JSON on stdin."""
    body = {
        "session_id": SID,
        "transcript_path": str(transcript),
        "cwd": str(root),
        "hook_event_name": "Stop",
    }
    return subprocess.run([sys.executable, "-P", "-m", "kura", "hook", "capture"], cwd=root, input=json.dumps(body),
                          capture_output=True, text=True, timeout=60)  # fmt: skip
