"""Fixtures shared by the recall tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kura.recall.embed import Unavailable, load_embedder

EVAL = Path(__file__).parents[2] / "bench" / "eval"


@pytest.fixture(scope="module")
def bakery(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bench/eval's bakery store, indexed whole by a real ``kura index`` (a first recall on a
    loaded machine may answer before every vector is made)."""
    if isinstance(load_embedder(), Unavailable):
        pytest.skip("the built-in embedder is not installed")
    root = tmp_path_factory.mktemp("bakery") / "store"
    shutil.copytree(EVAL / "store", root, ignore=shutil.ignore_patterns(".kura"))
    built = subprocess.run([sys.executable, "-m", "kura", "-s", str(root), "index"], capture_output=True, text=True,
                           check=False, timeout=600)  # fmt: skip
    assert built.returncode == 0, built.stderr
    return root
