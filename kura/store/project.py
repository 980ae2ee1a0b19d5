"""The project's store: the nearest ``memory/`` holding a ``MEMORY.md``, from a folder up to
its git root.

Inside a project the memory that matters is the project's own, whatever a person's
kura.toml names as their default; so every command looks for it before it falls back to
that default. The walk runs before every prompt (``kura prefill``), so it costs a few
``stat`` calls a level and opens nothing: ``MEMORY.md`` must be a regular file (a FIFO
is never opened, so never waited on). It stops at the first folder holding ``.git`` (a
folder, or the file a worktree or submodule has); with no git root above, only the
starting folder itself is looked at, as before, since a ``memory/`` in some folder above
an unversioned one is nobody's project store.

A cloned repository is untrusted: a ``memory`` that is a symbolic link to somewhere outside
the project (``memory -> ~/other/memory``) is not followed, so a clone can never make kura
read or write another folder by default; a link that stays inside the project is fine.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from kura.files.slugs import INDEX_NAME

FOLDER = "memory"


@dataclass(frozen=True, slots=True)
class ProjectStore:
    path: Path  # the store folder (``…/memory``)
    start: Path  # the folder the walk started from
    git_root: Path | None  # None: no git root above ``start`` (only ``start`` was looked at)

    @property
    def project(self) -> Path:
        """The folder that holds the store."""
        return self.path.parent

    def why(self) -> str:
        if self.git_root is None:
            return f"project store: {self.path} (in the current folder; no git root above it)"
        return f"project store: {self.path} (found from {self.start} up to the git root {self.git_root})"


def find_project_store(start: Path | None = None) -> ProjectStore | None:
    """The project's store seen from ``start`` (the current folder), or None."""
    try:
        here = Path(os.path.abspath(start if start is not None else os.getcwd()))
    except OSError:  # the current folder was deleted
        return None
    found: Path | None = None
    for folder in (here, *here.parents):
        found = found or _store_in(folder)
        if _lexists(folder / ".git"):
            return _bounded(found, here, folder)
    if found is not None and found.parent == here:
        return _bounded(found, here, None)
    return None


def _bounded(found: Path | None, start: Path, root: Path | None) -> ProjectStore | None:
    """``found`` unless it is a link that leads out of the project (the git root, or the
    starting folder when there is none)."""
    if found is None:
        return None
    top = root if root is not None else start
    if found.is_symlink():
        real, inside = os.path.realpath(found), os.path.realpath(top)
        if real != inside and not real.startswith(inside.rstrip(os.sep) + os.sep):
            return None
    return ProjectStore(path=found, start=start, git_root=root)


def _store_in(folder: Path) -> Path | None:
    candidate = folder / FOLDER
    try:
        mode = os.stat(candidate / INDEX_NAME).st_mode
    except (OSError, ValueError):
        return None
    return candidate if stat.S_ISREG(mode) else None


def _lexists(path: Path) -> bool:
    try:
        os.lstat(path)
    except (OSError, ValueError):
        return False
    return True
