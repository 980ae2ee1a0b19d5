"""A relevance floor (``kura.recall.floor``) kept in a search index that came with a clone:
the calibration in the index's ``kv`` is untrusted input, read by a real ``kura recall``
process against the real model and the real SQLite database it was crafted in."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kura.recall.embed import Unavailable, load_embedder
from tests.recall.test_converse import embedded

QUESTION = "Which oven runs at 200 degrees?"


@pytest.fixture
def store(tmp_path: Path, user_cache: Path) -> Path:
    if isinstance(load_embedder(), Unavailable):
        pytest.skip("the built-in embedder is not installed")
    root = tmp_path / "store"
    root.mkdir()
    for i in range(1, 6):
        (root / f"oven-{i}.md").write_text(
            f"---\nname: oven {i}\ndescription: bakery oven number {i} runs at {150 + 50 * (i % 3)} degrees\n"
            f"type: project\n---\n\nOven {i} is in the back room.\n",
            encoding="utf-8",
        )
    (root / "MEMORY.md").write_text("- [oven 1](oven-1.md) — the ovens\n", encoding="utf-8")
    return embedded(root, user_cache)


def _plant(root: Path, centroid: str) -> None:
    """A calibration with this index's own stamp (all of it readable from the same file, so
    anyone can forge one) and ``centroid`` as raw JSON."""
    with sqlite3.connect(root / ".kura" / "search.db") as db:
        (model,) = db.execute("SELECT value FROM kv WHERE key = 'model'").fetchone()
        row = db.execute("SELECT value FROM kv WHERE key = 'generation'").fetchone()
        (count,) = db.execute("SELECT count(*) FROM docs").fetchone()
        stamp = json.dumps(f"{model}:{row[0] if row else 0}:{count}")
        kept = f'{{"stamp": {stamp}, "margin": 0.1, "p10": 0.1, "short": 0.5, "centroid": {centroid}}}'
        db.execute("INSERT OR REPLACE INTO kv VALUES ('floor', ?)", (kept,))


def _recall(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), "recall", QUESTION, "--json", "--no-model"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize(
    "centroid",
    [
        pytest.param("[0.5, 0.5, 0.5]", id="three-wide"),  # 0a29714..main: a ValueError traceback
        pytest.param("[" + ",".join(["NaN"] * 384) + "]", id="nan"),  # main: every question refused
        pytest.param("[" + ",".join(["1e400"] * 384) + "]", id="infinite"),  # main: every question refused
    ],
)
def test_a_forged_calibration_is_made_again_not_used(store: Path, centroid: str) -> None:
    answered = _recall(store)
    assert answered.returncode == 0, answered.stderr
    expected = [p["slug"] for p in json.loads(answered.stdout)["picked"]]
    assert expected
    _plant(store, centroid)
    done = _recall(store)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert [p["slug"] for p in json.loads(done.stdout)["picked"]] == expected
