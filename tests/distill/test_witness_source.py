"""A witness never records a home folder (issue 29, item 14): a shared store would leak
the path and the user name of every machine a session was read on. A real `kura distill
run` reads a Claude Code transcript where Claude keeps it (``~/.claude/projects/<the
project's folder, home encoded>/<session>.jsonl``), and the memory poured from it cites the
session and the journal relative to its root; an old witness's absolute source reads as before."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from test_distill_run import REMEMBER, SID, cc, jsonl, say

from kura.files.witness import read as read_witnesses
from kura.store.store import init_store
from kura.transcripts.journals import cite


def kura(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", *args],
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ),
    )


def test_a_poured_memory_cites_the_session_never_the_home_folder(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    projects = home / ".claude" / "projects"
    encoded = re.sub(r"[^A-Za-z0-9]", "-", str(home)) + "-ferry"
    jsonl(projects / encoded / f"{SID}.jsonl", [cc("user", REMEMBER, "u1"), say("Noted.", "a1")])
    store, _ = init_store(tmp_path / "store", name="test")
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\n\n[stores.test.distill.journals]\nclaude = ["{projects}"]\n'
    )
    ran = kura("-c", str(config), "-s", "test", "distill", "run")  # a direct store pours a request at once
    assert ran.returncode == 0, ran.stderr
    [memory] = [p for p in store.root.glob("*.md") if p.name != "MEMORY.md"]
    text = memory.read_text()
    assert str(home) not in text and str(tmp_path) not in text and "root" not in text.split("witnesses:")[1]
    assert f"source: ferry/{SID}.jsonl" in text
    assert SID[:8] in text  # the session is named


def test_an_old_absolute_source_reads_as_before() -> None:
    found, problems = read_witnesses(
        {"witnesses": [{"kind": "SAID", "when": "2026-09-02", "session": "6f1c2a8e",
          "source": "/home/ann/.claude/projects/-home-ann-ferry/6f1c2a8e.jsonl", "quote": "Remember it."}]}
    )  # fmt: skip
    assert not problems
    assert found[0].source == "/home/ann/.claude/projects/-home-ann-ferry/6f1c2a8e.jsonl"


def test_cite_takes_the_root_and_the_encoded_home_off(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    root = home / ".claude" / "projects"
    encoded = re.sub(r"[^A-Za-z0-9]", "-", str(home))
    assert cite(root / f"{encoded}-ferry" / "s.jsonl", root) == "ferry/s.jsonl"
    assert cite(root / "plain" / "s.jsonl", root) == "plain/s.jsonl"
    assert cite(tmp_path / "one.jsonl", tmp_path / "one.jsonl") == "one.jsonl"  # a root that is the file
    assert cite(Path("/elsewhere/x/s.jsonl"), root) == "s.jsonl"
