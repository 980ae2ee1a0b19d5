"""What a slug is, and which files are memories: the containment rule in one place.

The store walks its folder with ``is_memory_name`` and looks slugs up with
``lookup_parts``; because both apply the same rule (and the store re-checks the real,
symlink-resolved location against it), the set of names a lookup can reach is exactly the
set the walk lists. Anything else — ``../x``, absolute paths, backslashes, drive letters,
names starting with ``_`` or ``.`` (private files and the state folder) — is no memory.

Names kura itself creates (``new_slug``) are stricter than names it will read, because a
person's ``My Notes.md`` should still be found, but kura should not invent such names.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from kura.errors import StoreError

STATE_DIR = ".kura"
INDEX_NAME = "MEMORY.md"
SLUG_MAX = 160
_NEW_PART = re.compile(r"^[^\W_][\w.\-]*$")


def is_memory_name(rel: Path | str) -> bool:
    """Whether a path relative to the store (``a/b.md``) names a memory."""
    parts = (rel.as_posix() if isinstance(rel, Path) else rel).split("/")
    return (
        parts[-1].endswith(".md")
        and len(parts[-1]) > 3
        and parts[-1].lower() != INDEX_NAME.lower()
        and all(part[:1] not in ("", ".", "_") for part in parts)
    )


def lookup_parts(slug: object) -> list[str] | None:
    """Split a slug for lookup; None for anything that could name a foreign file."""
    if not isinstance(slug, str) or not slug or "\x00" in slug or "\\" in slug:
        return None
    if slug.endswith(".md"):
        slug = slug[:-3]
    parts = slug.split("/")
    if any(not p or p[:1] in "._" or ":" in p or p != p.strip() for p in parts):
        return None
    return parts


def new_slug(slug: str) -> str:
    """A slug kura may create: word characters, dots and dashes, ``/`` for folders."""
    bare = slug[:-3] if slug.endswith(".md") else slug
    parts = bare.split("/")
    if (
        len(bare) > SLUG_MAX
        or not all(_NEW_PART.match(p) for p in parts)
        or parts[-1].lower() == INDEX_NAME[:-3].lower()
    ):
        raise StoreError(
            f"{slug!r} is not a usable slug: use letters, digits, '-', '.' and "
            "'_' (not first), with '/' for folders, e.g. deploy-checklist"
        )
    return bare


def scan_files(root: Path) -> Iterator[tuple[str, str]]:
    """Every ``*.md`` file outside private folders as (relative posix path, "file" or
    "link"), and folders that could not be read as (path, "unreadable"). Symlinked
    folders are not entered. One scandir pass over plain strings: no stat per plain file,
    which keeps a walk of 20,000 memories in tens of milliseconds."""
    stack = [""]
    while stack:
        prefix = stack.pop()
        try:
            entries = list(os.scandir(root / prefix if prefix else root))
        except OSError:
            yield prefix, "unreadable"
            continue
        for entry in entries:
            if entry.name[:1] in "._":
                continue
            rel = f"{prefix}/{entry.name}" if prefix else entry.name
            if entry.is_dir(follow_symlinks=False):
                stack.append(rel)
            elif entry.name.endswith(".md") and entry.is_symlink():
                yield rel, "link"
            elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                yield rel, "file"


def file_stats(root: Path) -> list[tuple[str, tuple[int, int, int, int]]]:
    """(relative path, (inode, size, mtime_ns, ctime_ns)) of every candidate memory file and
    of MEMORY.md, sorted: enough to tell whether anything changed without reading a file."""
    stats = []
    base = str(root)
    for rel, kind in scan_files(root):
        if kind == "unreadable":
            continue
        try:
            st = os.stat(f"{base}/{rel}")
        except OSError:
            continue
        stats.append((rel, (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)))
    try:
        st = os.stat(f"{base}/{INDEX_NAME}")
        stats.append((INDEX_NAME, (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)))
    except OSError:
        pass
    stats.sort()
    return stats


def identity(stats: list[tuple[str, tuple[int, int, int, int]]]) -> str:
    """One hash over ``file_stats``: equal when no memory file and no index changed."""
    digest = hashlib.sha256()
    for rel, ident in stats:
        digest.update(f"{rel}\0{ident}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def index_file(root: Path) -> Path:
    """MEMORY.md, refusing one that is a symlink out of the store (its bytes are not the
    store's to show)."""
    path = root / INDEX_NAME
    if path.is_symlink():
        try:
            path.resolve(strict=True).relative_to(root.resolve())
        except (OSError, ValueError):
            raise StoreError(
                f"{path} is a symlink to {os.readlink(path)}, outside the store; kura will not "
                "read or write through it — replace it with the file itself"
            ) from None
    return path
