"""``os.walk`` without recursion.

Python 3.11's ``os.walk`` calls itself once a folder level, so a tree nested about a
thousand folders deep ends it with a RecursionError. A store or a state folder can come
from someone else's archive or clone, nested as deep as its author liked, and a reader of
it must not fail on that; so the walks over them keep their own stack. Same order and
same answers as ``os.walk(top)`` (top-down, links to folders listed among the folders but
never entered, unreadable folders passed over), and a caller may prune ``dirs`` in place.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path


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
