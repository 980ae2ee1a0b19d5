"""What a commit would hold: a store's files as git's index has them, in a folder of their own.

The pre-commit hook must judge what is about to be committed, not the working tree: a file
staged and then deleted, or broken in the index and fixed only on disk, would otherwise pass
(or fail) on the wrong bytes. So the store's staged files are checked out of git's index into
a temporary folder (``git checkout-index``) where doctor reads them like any store; the
working tree and git's index are never touched. The ``git`` binary does the reading.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kura.errors import StoreError


@contextmanager
def staged_copy(root: Path) -> Iterator[Path]:
    """The store at ``root`` as git's index holds it, in a temporary folder (removed after)."""
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip())
    prefix = os.path.relpath(root.resolve(), top.resolve())
    files = [f for f in _git(top, "ls-files", "-z", "--cached", "--", prefix).split("\0") if f]
    with tempfile.TemporaryDirectory(prefix="kura-staged-") as tmp:
        if files:
            _git(top, "checkout-index", f"--prefix={tmp}/", "-z", "--stdin", feed="\0".join(files))
        copy = Path(tmp) / prefix
        copy.mkdir(parents=True, exist_ok=True)
        yield copy


def _git(cwd: Path, *args: str, feed: str | None = None) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, input=feed, capture_output=True, text=True, check=False, timeout=120
        )
    except FileNotFoundError:
        raise StoreError(
            "git is not installed (or not on PATH); --staged reads git's index with it"
        ) from None
    except subprocess.TimeoutExpired:
        raise StoreError(f"git {args[0]} did not answer in 120 s in {cwd}") from None
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        raise StoreError(
            f"{cwd}: git {args[0]} failed ({said}); --staged needs the store inside a git repository"
        )
    return done.stdout
