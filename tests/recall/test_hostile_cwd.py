"""The background index build is ``python -m kura.recall.index_worker``, started by a recall
in the folder the person runs kura in — often a repository someone else wrote. ``python -m``
puts the current folder first on ``sys.path``, so a ``kura/`` folder at a clone's top was
imported in place of kura: a recall ran the repository's code. The build now starts with
``-P``, and builds with the installed kura whatever the folder holds.

Real processes: a real ``kura recall`` (itself started with ``-P``, as the console script
``kura`` never imports from the current folder) leaves a real detached build behind, in a
folder whose ``kura/__init__.py`` would leave a mark and exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from test_index_build import generated

from kura.recall import index_job

EVIL = """import os, sys
open(os.path.join(os.path.dirname(__file__), "..", "RAN"), "a").write(" ".join(sys.argv) + "\\n")
raise SystemExit(0)
"""


def test_a_background_build_never_imports_kura_from_the_folder_it_starts_in(tmp_path: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    generated(root, 300)
    (tmp_path / "kura.toml").write_text(f'[stores.big]\npath = "{root}"\n')
    (tmp_path / "kura").mkdir()
    (tmp_path / "kura" / "__init__.py").write_text(EVIL)
    done = subprocess.run(
        [sys.executable, "-P", "-m", "kura", "recall", "--json", "--no-model", "where is the backup tape kept"],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "KURA_INDEX_BUDGET": "0"}, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["partial"] == {"indexed": 0, "memories": 300}
    deadline = time.monotonic() + 300
    while index_job.running(root):
        assert time.monotonic() < deadline, "the build still runs"
        time.sleep(0.1)
    assert not (tmp_path / "RAN").exists(), (tmp_path / "RAN").read_text()
    said = index_job.progress(root)
    assert said is not None and (said.state, said.done, said.total) == ("done", 300, 300)
