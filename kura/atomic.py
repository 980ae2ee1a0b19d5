"""Atomic writes and the store lock.

A reader — a person's editor, git, another kura process, a shell hook running
``kura prefill`` — must only ever see the old file or the new one, never half of
either. So every write goes to a temporary file in the same directory (same filesystem,
so the rename is atomic), is fsynced, and replaces the target with ``os.replace``; the
directory is fsynced after so the rename itself survives a crash. The temporary name
starts with a dot, which the store never mistakes for a memory.

Writers in several processes serialise on one lock file in the store's state folder
(``filelock``: flock on POSIX, msvcrt on Windows), so a read-modify-write of the index
never loses another writer's line.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from kura.errors import StoreError
from kura.state import clear

LOCK_TIMEOUT = 60.0


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once, keeping the old file's permissions."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        held = os.lstat(path) if os.path.lexists(path) else None  # a link's target lends no mode
        mode = held.st_mode & 0o7777 if held is not None and stat.S_ISREG(held.st_mode) else None
        with open(tmp, "xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as err:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise StoreError(
            f"{path}: could not write ({err.strerror or err}); "
            "nothing was changed — check the folder's permissions and free space"
        ) from err
    _fsync_dir(path.parent)


@contextlib.contextmanager
def locked(lock_path: Path, *, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the store's write lock."""
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise StoreError(
            f"{lock_path.parent}: cannot create the state folder ({err.strerror}); "
            "the store is read-only here"
        ) from err
    clear(
        lock_path, then="kura locks a plain file there"
    )  # older filelocks open (and truncate) through links
    queue = _thread_lock(lock_path)
    if not queue.acquire(timeout=timeout):
        raise StoreError(
            f"{lock_path}: another writer in this process has held the store lock for {timeout:.0f}s"
        )
    lock = FileLock(str(lock_path), timeout=timeout)
    try:
        lock.acquire()
    except Timeout as err:
        queue.release()
        raise StoreError(
            f"{lock_path}: another kura process has held the store lock for "
            f"{timeout:.0f}s; try again, or look for a stuck process"
        ) from err
    except OSError as err:
        queue.release()
        raise StoreError(
            f"{lock_path}: cannot take the store lock ({err.strerror or err}); "
            "check that it is a plain file you can write"
        ) from err
    try:
        yield
    finally:
        lock.release()
        queue.release()


_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


def _thread_lock(lock_path: Path) -> threading.Lock:
    """Threads of one process queue on a plain lock first, so only one of them at a time
    polls the file lock: a server's writers take turns instead of sleeping in 50 ms steps
    and starving each other (other processes still meet at the file lock)."""
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(os.path.abspath(lock_path), threading.Lock())


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


QUIET = 0.05  # seconds a file must have been left alone before its bytes are trusted
SETTLE_TIMEOUT = 3.0


def settled_bytes(
    path: Path,
    *,
    ours: tuple[int, int, int] | None = None,
    quiet: float = QUIET,
    timeout: float = SETTLE_TIMEOUT,
) -> bytes | None:
    """The file's bytes once nobody is writing it (None if there is no file).

    An editor that saves in place truncates the file and then writes it, maybe in several
    chunks; read in between and you hold a torn file that looks whole. So the bytes count
    only when the file was last modified more than ``quiet`` seconds ago — or is exactly
    the file this process last wrote (``ours``: inode, size, mtime_ns), or read the same
    after a ``quiet`` wait (a clock that disagrees with the file system's must not block
    every write) — and its size and modification time are the same before and after the
    read. A file that keeps changing for ``timeout`` seconds is a StoreError: nothing is
    written on top of it."""
    import time

    deadline = time.monotonic() + timeout
    last: tuple[tuple[int, int, int], bytes] | None = None
    while True:
        try:
            before = os.stat(path)
            data = path.read_bytes()
            after = os.stat(path)
        except FileNotFoundError:
            return None
        except OSError as err:
            raise StoreError(f"{path.name}: cannot read ({err.strerror})") from None
        seen = (after.st_ino, after.st_size, after.st_mtime_ns)
        steady = (before.st_ino, before.st_size, before.st_mtime_ns) == seen and len(data) == after.st_size
        if steady and (seen == ours or time.time() - after.st_mtime >= quiet or last == (seen, data)):
            return data
        last = (seen, data) if steady else None
        if time.monotonic() > deadline:
            raise StoreError(f"{path.name}: kept changing while kura tried to read it; nothing was written")
        time.sleep(quiet)


def identity(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime_ns) of a file, to recognise it later as the one we wrote."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)
