"""``kura.files.folder_walk.walk``: ``os.walk``'s answers without its recursion, so a store (or
its state folder) nested deeper than Python's recursion limit ends no reader.

Before: ``kura doctor`` on a store holding a folder nested past the recursion limit stopped with
"unexpected error: RecursionError" (its scan for stale temporary files used ``os.walk``).

The processes here run with a recursion limit of ``LIMIT`` and a tree ``DEPTH`` deep, the same
as a tree past 1,000 levels under the default limit: a tree that deep in the temp folder would
end pytest's own clean-up of it (``shutil.rmtree`` recurses too), in this run and the next.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import write_memory

from kura.files.folder_walk import walk

LIMIT = 160  # the recursion limit of the processes below
DEPTH = 300  # past it, far inside the default limit


def _deep(top: Path) -> Path:
    bottom = top.joinpath(*["d"] * DEPTH)
    bottom.mkdir(parents=True)
    return bottom


def _limited(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a Python whose recursion limit is ``LIMIT``."""
    return subprocess.run(
        [sys.executable, "-c", f"import sys; sys.setrecursionlimit({LIMIT}); {code}", *args],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_walk_answers_as_os_walk_does(tmp_path: Path) -> None:
    for rel in ["a/b/c.md", "a/b/d.txt", "a/e/f.md", "g.md", ".hidden/h.md", "z/y/x/w.md"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "a", target_is_directory=True)  # listed, never entered
    (tmp_path / "a" / "to-file").symlink_to(tmp_path / "g.md")
    (tmp_path / "a" / "dangling").symlink_to(tmp_path / "nowhere")

    def norm(rows: object) -> list[tuple[str, list[str], list[str]]]:
        return [(f, sorted(d), sorted(n)) for f, d, n in rows]  # type: ignore[attr-defined]

    assert norm(walk(tmp_path)) == norm(os.walk(tmp_path))
    pruned, expected = [], []
    for rows, out in ((walk(tmp_path), pruned), (os.walk(tmp_path), expected)):
        for folder, dirs, files in rows:
            dirs[:] = sorted(d for d in dirs if d != "a")
            out.append((folder, sorted(files)))
    assert pruned == expected


def test_a_tree_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    bottom = _deep(tmp_path)
    (bottom / "leaf.md").write_text("x")
    ran = _limited("import os; list(os.walk(sys.argv[1]))", str(tmp_path))
    assert "RecursionError" in ran.stderr  # the premise: Python 3.11's walk recurses a level
    ran = _limited(
        "from kura.files.folder_walk import walk; "
        "print([f + '/' + n for f, _, names in walk(sys.argv[1]) for n in names])",
        str(tmp_path),
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == repr([str(bottom / "leaf.md")])


def test_doctor_on_a_store_with_a_deep_folder(tmp_path: Path) -> None:
    root = tmp_path / "store"
    write_memory(root, "deploy", "project", "we deploy with the script")
    (root / "MEMORY.md").write_text("# Index\n\n- [deploy](deploy.md) — we deploy with the script\n")
    bottom = _deep(root)
    (bottom / ".deep.md.999999999.0badc0de.tmp").write_text("half a write")  # no process has that id
    done = _limited(
        "from kura.cli.entry import main; sys.argv[0] = 'kura'; main()", "-s", str(root), "doctor"
    )
    said = done.stdout + done.stderr
    assert "unexpected error" not in said and "RecursionError" not in said, said[-2000:]
    assert done.returncode in (0, 1), said[-2000:]
    assert ".deep.md.999999999.0badc0de.tmp" in said  # the walk reached the bottom
