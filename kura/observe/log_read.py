"""Reading the observation log's bytes without trusting what sits at its name.

``kura context`` reads the log on every request, so whatever is at ``_observations.md``
must not be able to hang it, exhaust memory or smuggle in a file from elsewhere: a
symlink (to notes outside the store, or to ``/dev/zero``) is refused, as the writers
already refused it; so is anything that is not a regular file (a FIFO would block the
open, a device would never end), and so is a log over a size cap. The checks are made on
the name (``lstat``) and again on the open descriptor (opened without following links and
without blocking), so swapping the file between the two does not get around them.

A refusal is a value, :class:`Snapshot` with a ``problem``: readers turn it into a
finding and read nothing, writers into a StoreError and write nothing.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from kura.errors import StoreError
from kura.store.atomic import QUIET, SETTLE_TIMEOUT

_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
)
_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device",
          stat.S_IFDIR: "a folder", stat.S_IFSOCK: "a socket"}  # fmt: skip
_MISSING = (0, 0, 0)
_SWAPPED = ("the log was replaced while kura opened it, again and again", "try again")
_TRIES = 5
MAX_READ = 1 << 20  # bytes: a bigger log is not read (``kura context`` reads it on every request)
MAX_CONSOLIDATE = 8 << 20  # bytes: consolidation reads past MAX_READ, to bring a log back under it


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The log's bytes (empty when there is no file), or why none were read: ``problem`` is
    (what is wrong, what to do) and ``data`` is then empty."""

    data: bytes
    size: int
    problem: tuple[str, str] | None = None


def snapshot(path: Path, root: Path, *, cap: int) -> Snapshot:
    """The file's bytes as they are now, if it is a regular file inside ``root`` of at most
    ``cap`` bytes; never raises, never blocks."""
    for _ in range(_TRIES):  # a writer's os.replace between lstat and open is no reason to fail
        snap = _once(path, root, cap)[0]
        if snap.problem is not _SWAPPED:
            break
    return snap


def settled(path: Path, root: Path, *, cap: int) -> Snapshot:
    """Like :func:`snapshot`, but only bytes nobody is writing (``kura.store.atomic.settled_bytes``
    explains the rule): what a writer may splice into. StoreError if the file keeps changing."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    last: tuple[tuple[int, int, int], bytes] | None = None
    while True:
        snap, seen = _once(path, root, cap)
        if (snap.problem and snap.problem is not _SWAPPED) or seen is _MISSING:
            return snap
        if seen and (time.time() - seen[2] / 1e9 >= QUIET or last == (seen, snap.data)):
            return snap
        last = (seen, snap.data) if seen else None
        if time.monotonic() > deadline:
            raise StoreError(f"{path}: kept changing while kura tried to read it; nothing was written")
        time.sleep(QUIET)


def _once(path: Path, root: Path, cap: int) -> tuple[Snapshot, tuple[int, int, int] | None]:
    """One read, and the file's (inode, size, mtime_ns) when it held still during it
    (``_MISSING`` when there is no file, None when it changed while read)."""
    try:
        named = os.lstat(path)
    except FileNotFoundError:
        return Snapshot(b"", 0), _MISSING
    except OSError as err:
        return _refused(f"the log cannot be read ({err.strerror})", "fix its permissions"), None
    problem = _kind(named.st_mode) or _outside(path, root) or _too_big(named.st_size, cap)
    if problem:
        return Snapshot(b"", named.st_size, problem), None
    try:
        with os.fdopen(os.open(path, _FLAGS), "rb") as handle:
            before = os.fstat(handle.fileno())
            if (before.st_ino, before.st_dev) != (named.st_ino, named.st_dev):
                return Snapshot(b"", 0, _kind(before.st_mode) or _SWAPPED), None
            data = handle.read(cap + 1)
            after = os.fstat(handle.fileno())
    except FileNotFoundError:  # removed since the lstat
        return Snapshot(b"", 0), _MISSING
    except OSError as err:  # a link put in its place since the lstat: O_NOFOLLOW refuses it
        return _refused(f"the log cannot be read ({err.strerror})", "replace it with a plain file"), None
    if len(data) > cap:
        return Snapshot(b"", after.st_size, _too_big(after.st_size, cap)), None
    seen = (after.st_ino, after.st_size, after.st_mtime_ns)
    held = (before.st_ino, before.st_size, before.st_mtime_ns) == seen and len(data) == after.st_size
    return Snapshot(data, len(data)), seen if held else None


def _kind(mode: int) -> tuple[str, str] | None:
    if stat.S_ISLNK(mode):
        return ("the log is a symlink", "kura reads and writes only the plain file at the store root: "
                "replace the link with the file itself")  # fmt: skip
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "something else")
        return f"the log is not a regular file ({kind})", "replace it with a plain file"
    return None


def _outside(path: Path, root: Path) -> tuple[str, str] | None:
    try:
        path.resolve(strict=True).relative_to(root.resolve(strict=True))
    except (OSError, ValueError, RuntimeError):
        return "the log resolves outside the store", "replace it with a plain file in the store folder"
    return None


def _too_big(size: int, cap: int) -> tuple[str, str] | None:
    if size <= cap:
        return None
    todo = (
        "trim it by hand" if cap >= MAX_CONSOLIDATE else "run kura observe --consolidate, or trim it by hand"
    )
    return f"the log is {size / 2**20:.1f} MiB, over the {cap / 2**20:g} MiB kura reads", todo


def _refused(what: str, todo: str) -> Snapshot:
    return Snapshot(b"", 0, (what, todo))
