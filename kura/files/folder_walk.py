"""``os.walk`` without recursion.

Python 3.11's ``os.walk`` calls itself once a folder level, so a tree nested about a
thousand folders deep ends it with a RecursionError. A store or a state folder can come
from someone else's archive or clone, nested as deep as its author liked, and a reader of
it must not fail on that; so the walks over them keep their own stack. Same order and
same answers as ``os.walk(top)`` (top-down, links to folders listed among the folders but
never entered, unreadable folders passed over), and a caller may prune ``dirs`` in place.

A folder listed as a folder can be a symlink by the time a walk comes to read it (another
process swaps it, a checkout turns it into a link), and a walk that reads it by its path
then lists whatever the link points at. ``open_below`` opens a folder the way the store's
walks do: from a descriptor of the store, a part at a time, never through a link.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_BELOW = _FOLDER | getattr(os, "O_NOFOLLOW", 0)
_NOT_ENTERED = (errno.ELOOP, errno.ENOTDIR, errno.ENOENT)  # a link, not a folder, gone


def walk(top: str | Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """(folder, folder names, other names) for ``top`` and every folder below it."""
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        dirs: list[str] = []
        files: list[str] = []
        for entry in entries:
            (dirs if _is_dir(entry) else files).append(entry.name)
        yield folder, dirs, files
        below = [os.path.join(folder, name) for name in dirs]
        stack += reversed([path for path in below if not os.path.islink(path)])


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def open_below(top: int, rel: str) -> int | None:
    """A descriptor of the folder ``rel`` (``a/b``) below the open folder ``top``, opened a
    part at a time and never through a link; None when a part is a link, not a folder or
    gone (a walk does not enter it). OSError for a folder that cannot be read."""
    fd = top
    try:
        for part in rel.split("/"):
            inner = os.open(part, _BELOW, dir_fd=fd)
            if fd != top:
                os.close(fd)
            fd = inner
    except OSError as err:
        if fd != top:
            os.close(fd)
        if err.errno in _NOT_ENTERED:
            return None
        raise
    return fd


def open_top(root: str | Path) -> int:
    """A descriptor of the folder a walk starts from (a link to it is followed: a store's
    own folder may be one); OSError when it cannot be opened."""
    return os.open(root, _FOLDER)
