"""Reading a store's files without trusting what sits at their names.

A store may come from someone else's repository, and a person's editor, git or an attacker
may change it while kura reads it. So a name that looked like a memory when the folder was
walked is not trusted when its bytes are read:

* Only a **regular file** is read. A FIFO would block the open (and ``kura serve`` with it),
  a device such as ``/dev/zero`` would never end, a socket cannot be read at all: each is
  refused before it is opened, and again on the opened descriptor. (A batch of names a walk
  has just seen as regular files, ``read_plain``, takes the walk's look as the check before
  opening: such a name is opened without blocking or taking a terminal, and its descriptor
  checked; anything else it meets is left to ``read_in``.)
* Every read has a **size cap**, checked before reading and while reading, so a file that
  grows without end costs at most the cap: ``MEMORY_CAP`` (4 MiB; a memory is one fact,
  and kura writes at most 64 KiB of body) and ``INDEX_CAP`` (16 MiB; an index line is a
  few hundred bytes, so this is tens of thousands of memories).
* The path is opened **one folder at a time without following links** (``O_NOFOLLOW``,
  relative to the folder already opened), starting from the store folder. A memory
  swapped for a symlink — or a folder swapped for one — between kura's check and its read
  makes the open fail; it never returns bytes from outside the store. A memory that is a
  symlink inside the store (which the walk allows) is resolved first, checked, and the
  resolved path is then opened the same way.

A refusal is a value, :class:`Refused` (what is wrong, what to do), which readers turn into
a finding: one bad file is one finding, never an outage.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

MEMORY_CAP = 4 << 20  # bytes: a memory file larger than this is not read
INDEX_CAP = 16 << 20  # bytes: a MEMORY.md larger than this is not read

_O = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_FILE = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _O
_FOLDER = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_DIRECTORY", 0) | _O
_ROOT = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _O  # the store folder itself may be a link
_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}  # fmt: skip
_LINK_ERRORS = {errno.ELOOP, getattr(errno, "EMLINK", errno.ELOOP), getattr(errno, "EFTYPE", errno.ELOOP)}
SPECIAL_TODO = "replace it with a plain file or remove it"
_SHRINK = {"a memory": "split it into smaller memories or move it out of the store",
           "the index": "move what is not an index line out of it"}  # fmt: skip
SWAPPED = "was replaced by a symlink while kura read it"
_SWAPPED_FOLDER = "a folder on its path was replaced by a symlink or a file while kura read it"


@dataclass(frozen=True, slots=True)
class Refused:
    """Why a file's bytes were not read: ``what`` is wrong with it, ``todo`` fixes it."""

    what: str
    todo: str
    size: int = 0


_LINK = Refused("a symlink", "")  # the name itself is a link: follow it, once, to the store


def kind_of(mode: int) -> str | None:
    """What a file that is not a regular one is ("a FIFO", "a device", …); None for one that is."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symlink"
    return _KINDS.get(stat.S_IFMT(mode), "not a file")


def kind_at(path: Path) -> str:
    """What sits at ``path`` ("a FIFO", "a device", …), not following a link."""
    try:
        return kind_of(os.lstat(path).st_mode) or "a regular file"
    except OSError:
        return "something that is gone"


def read_in(
    root: Path, rel: str, *, cap: int, what: str = "a memory", accept: Callable[[str], bool] | None = None
) -> bytes | Refused | None:
    """The bytes of ``root/rel`` (a path relative to the store, ``/``-separated), or why
    they were not read; None when there is no such file. A symlink is followed only to a
    regular file inside ``root`` whose relative path ``accept`` allows. Never blocks, never
    reads more than ``cap + 1`` bytes, never raises for what is on disk. ``what`` ("a
    memory", "the index") names the file in a refusal."""
    got = _read_chain(root, rel, cap, follow=True)
    if got is _LINK:
        target = _inside(root, rel, accept)
        got = target if isinstance(target, Refused) else _read_chain(*target, cap, follow=False)
    if isinstance(got, Refused) and got.size > cap:
        over = f"{got.size} bytes, over the {cap >> 20} MiB kura reads in {what}"
        return Refused(over, _SHRINK.get(what, "remove it"), got.size)
    return got


def _inside(root: Path, rel: str, accept: Callable[[str], bool] | None) -> tuple[Path, str] | Refused:
    """Where a symlink in the store leads, relative to the store's real folder."""
    try:
        real_root = root.resolve(strict=True)
        real = (root / rel).resolve(strict=True)
        target = real.relative_to(real_root).as_posix()
    except (OSError, ValueError, RuntimeError):  # where it leads is not said: not the store's to show
        return Refused("a symlink to somewhere outside the store", "replace it with the file itself")
    if accept is not None and not accept(target):
        return Refused(f"a symlink to {target}, which is not a memory", "replace it with the file itself")
    return real_root, target


def read_plain(root: Path, rels: Sequence[str], *, cap: int) -> list[bytes | None]:
    """For each ``root/rel``: its bytes when it is a regular file of at most ``cap`` bytes
    reached without a link — exactly what ``read_in`` gives for it — else None (a link, a
    refusal, a file that is gone: the caller asks ``read_in`` for the whole answer and the
    reason). For a walk's batch of names it has just seen as regular files (its directory
    entries say so, at no cost): the store folder is opened once for all of them, and a
    name in it is opened at once — without following a link, without blocking, without
    taking a terminal — and only the descriptor is checked, which a cold scan of 20,000
    memories notices. A name in a subfolder goes the way of ``read_in``."""
    if os.open not in os.supports_dir_fd:
        return [None] * len(rels)
    try:
        folder = os.open(root, _ROOT)
    except OSError:
        return [None] * len(rels)
    try:
        return [_plain(root, folder, rel, cap) for rel in rels]
    finally:
        os.close(folder)


def _plain(root: Path, folder: int, rel: str, cap: int) -> bytes | None:
    try:
        if "/" in rel:
            got = _read_chain(root, rel, cap, follow=True, base=folder)
            return got if isinstance(got, bytes) else None
        fd = os.open(rel, _FILE | _NOCTTY, dir_fd=folder)  # a link: ELOOP, and read_in says where it goes
    except OSError:
        return None
    try:
        got = _read_open(fd, cap)
    except OSError:
        return None
    finally:
        os.close(fd)
    return got if isinstance(got, bytes) else None


def _read_chain(
    root: Path, rel: str, cap: int, *, follow: bool, base: int | None = None
) -> bytes | Refused | None:
    """Open ``rel`` one part at a time from ``root`` (or from ``base``, a descriptor of
    ``root`` the caller holds open), never through a link."""
    parts = rel.split("/")
    try:
        if base is not None:
            folder = base
        elif os.open not in os.supports_dir_fd:  # no openat (Windows): the last part unfollowed only
            return _read_named(None, os.path.join(root, *parts), cap, follow=follow)
        else:
            folder = os.open(root, _ROOT)
    except FileNotFoundError:
        return None
    except OSError as err:
        return _unreadable(err)
    try:
        for part in parts[:-1]:
            if stat.S_ISLNK(_lstat(part, folder).st_mode):
                return Refused(_SWAPPED_FOLDER, "replace the link with the folder itself")
            inner = os.open(part, _FOLDER, dir_fd=folder)
            if folder != base:
                os.close(folder)
            folder = inner
        return _read_named(folder, parts[-1], cap, follow=follow)
    except FileNotFoundError:
        return None
    except OSError as err:
        return _unreadable(err)
    finally:
        if folder != base:
            os.close(folder)


def _read_named(folder: int | None, name: str, cap: int, *, follow: bool) -> bytes | Refused | None:
    """Check the name (without opening it: opening a device can act), open it without
    following a link or blocking, check the descriptor again, read at most ``cap + 1``."""
    named = _lstat(name, folder)
    if stat.S_ISLNK(named.st_mode) and follow:
        return _LINK
    refused = _check(named, cap)
    if refused is not None:
        return refused
    fd = os.open(name, _FILE, dir_fd=folder) if folder is not None else os.open(name, _FILE)
    try:
        return _read_open(fd, cap)
    finally:
        os.close(fd)


def _read_open(fd: int, cap: int) -> bytes | Refused:
    """Check an opened descriptor (a regular file, within the cap), read at most ``cap + 1``."""
    opened = os.fstat(fd)
    refused = _check(opened, cap)
    if refused is not None:
        return refused
    chunks, total, want = [], 0, opened.st_size + 1  # one read, unless it grew meanwhile
    while total <= cap:
        chunk = os.read(fd, min(want, cap + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        want = 1 << 20
    return b"".join(chunks) if total <= cap else Refused("too big", "", total)


def _lstat(name: str, dir_fd: int | None) -> os.stat_result:
    return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)


def _check(st: os.stat_result, cap: int) -> Refused | None:
    if stat.S_ISLNK(st.st_mode):
        return Refused(SWAPPED, "replace the link with the file itself")
    kind = kind_of(st.st_mode)
    if kind is not None:
        return Refused(f"{kind}, not a regular file", SPECIAL_TODO)
    if st.st_size > cap:
        return Refused("too big", "", st.st_size)
    return None


def _unreadable(err: OSError) -> Refused:
    if err.errno in _LINK_ERRORS:
        return Refused(SWAPPED, "replace the link with the file itself")
    if err.errno == errno.ENOTDIR:
        return Refused(_SWAPPED_FOLDER, "replace the link with the folder itself")
    return Refused(f"cannot be read ({err.strerror or err})", "fix its permissions")
