"""The README's first example runs as written and prints what the README shows: a store
made, a memory remembered, corrected, and shown with nothing of the old fact left."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def blocks_after(tag: str) -> tuple[str, str]:
    """The code block after ``<!-- ci:TAG -->`` and the next code block after it (what the
    README says the commands print)."""
    text = README.read_text(encoding="utf-8")
    rest = text[text.index(f"<!-- ci:{tag} -->") :]
    found = re.findall(r"^```[a-z]*\n(.*?)^```$", rest, flags=re.S | re.M)
    return found[0], found[1]


def test_the_first_example_shows_the_corrected_memory(isolated: Path) -> None:
    commands, shown = blocks_after("first-store")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    got = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", commands],
        cwd=isolated / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 0, got.stderr
    today = dt.date.today().isoformat()
    expected = re.sub(r"\d{4}-\d\d-\d\d", today, shown)
    assert got.stdout.endswith(expected), got.stdout
    assert "Tuesday" not in got.stdout.split("---\n", 1)[1]
    assert (isolated / "home" / "kura" / "main" / "deploy-day.md").read_text() == expected
