"""What a commit would hold: a store's files as git's index has them, in a folder of their own.

The pre-commit hook must judge what is about to be committed, not the working tree: a file
staged and then deleted, or broken in the index and fixed only on disk, would otherwise pass
(or fail) on the wrong bytes. So the store's staged files are checked out of git's index into
a temporary folder (``git checkout-index``) where doctor reads them like any store; the
working tree and git's index are never touched.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kura.git.repository import find_repo
from kura.git.run import run


@contextmanager
def staged_copy(root: Path) -> Iterator[Path]:
    """The store at ``root`` as git's index holds it, in a temporary folder (removed after)."""
    repo = find_repo(root)
    prefix = repo.prefix or "."
    index = _index_file(repo.top)
    listed = run(repo.top, "ls-files", "-z", "--cached", "--", prefix, index=index).out
    with tempfile.TemporaryDirectory(prefix="kura-staged-") as tmp:
        if listed.strip(b"\0"):
            run(repo.top, "checkout-index", f"--prefix={tmp}/", "-z", "--stdin", input=listed, index=index)
        copy = Path(tmp) / repo.prefix
        copy.mkdir(parents=True, exist_ok=True)
        yield copy


def _index_file(top: Path) -> str | None:
    """The index a commit is being made from: git hands a pre-commit hook its own
    (``GIT_INDEX_FILE``) for ``commit -a`` and ``commit -- PATH``; else the repository's."""
    given = os.environ.get("GIT_INDEX_FILE")
    if not given:
        return None
    return given if os.path.isabs(given) else str(top / given)
