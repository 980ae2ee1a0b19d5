"""Atomic writes and the store lock.

A reader — a person's editor, git, another kura process, a shell hook running
``kura prefill`` — must only ever see the old file or the new one, never half of
either. So every write goes to a temporary file in the same directory (same filesystem,
so the rename is atomic), is fsynced, and replaces the target with ``os.replace``; the
directory is fsynced after so the rename itself survives a crash. The temporary name
starts with a dot, which the store never mistakes for a memory.

Writers in several processes serialise on one lock file in the store's state folder
(``kura.store.file_lock``: flock on POSIX, filelock's msvcrt lock on Windows), so a
read-modify-write of the index never loses another writer's line; they are served in the order they came
(``kura.store.lock_queue``), and one that gives up says what it saw.

People's editors take no lock. An editor that saves in place truncates the file and writes
it later, into the inode it opened; if kura renames its own file over that inode in between,
the editor's bytes land in a file nobody can see any more. So ``replace_checked`` compares
the file with what kura read after its fsync, immediately before the rename, and keeps the
replaced inode open across the rename: a save that lands in it afterwards is read back from
that descriptor and handed to the caller to merge, never silently orphaned.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from kura.errors import StoreError
from kura.store import file_lock, lock_queue
from kura.store.state import clear, folder_aside

LOCK_TIMEOUT = 60.0


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` all at once, keeping the old file's permissions.
    ``durable=False`` for derived state only (the map, its caches: rebuilt when lost, and
    checked by digest or parse when read): still atomic, but neither the file nor the
    rename is fsynced, ~1–10 ms of wall time each on a busy disk. Never for a person's files."""
    tmp = _staged(path, data, durable=durable)
    try:
        os.replace(tmp, path)
    except OSError as err:
        raise _unwritten(path, tmp, err) from err
    if durable:
        fsync_dir(path.parent)


class Changed(StoreError):
    """The file no longer held what kura read when it came to replace it; nothing was written."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path.name}: changed while kura was writing it; nothing was written")


LATE_QUIET = 0.25  # seconds a save into the replaced file must rest before its bytes count
LATE_REST = 1.2  # … or this long when they do not look whole (an editor writes within a second)
LATE_TIMEOUT = 3.0  # how long kura waits for an editor that is saving into it
DEFAULT_CAP = 64 << 20


def replace_checked(
    path: Path,
    data: bytes,
    *,
    expect: bytes | None,
    whole: Callable[[bytes], bool] = bool,
    cap: int = DEFAULT_CAP,
) -> bytes | None:
    """Replace ``path`` with ``data`` only if it still holds ``expect`` (None: no file),
    checked after the fsync and immediately before the rename (call it under the store lock).

    Raises ``Changed`` when the check fails; nothing is written then. Returns the bytes of a
    save that landed in the replaced file after the check — an editor that had it open — or
    None when none did; the caller merges those, for they are newer than ``data``'s base.
    Such bytes are handed over once they rest, sooner when ``whole`` finds them whole."""
    tmp = _staged(path, data)
    try:
        old = _open_old(path)
    except OSError as err:
        raise _unwritten(path, tmp, err) from err
    try:
        seen = _check(path, old, expect, tmp, cap)
        try:
            if old is None:
                _create(tmp, path)
            else:
                os.replace(tmp, path)
        except FileExistsError:
            _discard(tmp)
            raise Changed(path) from None
        except OSError as err:
            raise _unwritten(path, tmp, err) from err
        fsync_dir(path.parent)
        return None if old is None else _late_save(old, seen, whole, cap)
    finally:
        if old is not None:
            os.close(old)


def _create(tmp: Path, path: Path) -> None:
    """Put ``tmp`` at ``path`` only if nothing is there: a hard link fails on a file that
    appeared meanwhile, where a rename would replace it (no hard links: check, then rename)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, "exists") from None
        os.replace(tmp, path)
        return
    _discard(tmp)


def _check(path: Path, old: int | None, expect: bytes | None, tmp: Path, cap: int) -> tuple[int, int]:
    """(size, mtime) of the file about to be replaced, once its bytes are ``expect``."""
    if old is None:
        if expect is None:
            return (-1, -1)
        _discard(tmp)
        raise Changed(path)
    before = os.fstat(old)
    now = _read_fd(old, before.st_size, cap)
    after = os.fstat(old)
    seen = (after.st_size, after.st_mtime_ns)
    try:
        same_inode = os.stat(path, follow_symlinks=False).st_ino == after.st_ino
    except OSError:
        same_inode = False
    if now != expect or (before.st_size, before.st_mtime_ns) != seen or not same_inode:
        _discard(tmp)
        raise Changed(path)
    return seen


def _late_save(old: int, seen: tuple[int, int], whole: Callable[[bytes], bool], cap: int) -> bytes | None:
    """Bytes written into the replaced inode after the check, once they rest; None if none."""
    st = os.fstat(old)
    if (st.st_size, st.st_mtime_ns) == seen:
        return None
    deadline = time.monotonic() + LATE_TIMEOUT
    last, since = (st.st_size, st.st_mtime_ns), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.02)
        st = os.fstat(old)
        now = (st.st_size, st.st_mtime_ns)
        if now != last:
            last, since = now, time.monotonic()
            continue
        rested = time.monotonic() - since
        if rested >= LATE_REST or (rested >= LATE_QUIET and whole(_read_fd(old, st.st_size, cap))):
            break
    return _read_fd(old, st.st_size, cap)


def _open_old(path: Path) -> int | None:
    """A descriptor on the file about to be replaced (None if there is none); never through
    a link, never a FIFO or device (kura only ever replaces plain files)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise StoreError(
            f"{path}: not a plain file kura can replace ({err.strerror}); nothing was written"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StoreError(f"{path}: not a plain file; kura will not replace it — nothing was written")
    return fd


def _read_fd(fd: int, size: int, cap: int) -> bytes:
    """The descriptor's bytes from the start, at most ``cap`` (OSError EFBIG past it)."""
    chunks: list[bytes] = []
    offset = 0
    while offset <= cap:
        chunk = os.pread(fd, min(max(size - offset, 0) + 65536, cap + 1 - offset), offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)
    raise OSError(errno.EFBIG, f"over {cap >> 20} MiB, more than kura reads in such a file")


def _staged(path: Path, data: bytes, *, durable: bool = True) -> Path:
    """``data`` in a temporary file beside ``path`` (fsynced when ``durable``), with the old
    file's mode."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        held = os.lstat(path) if os.path.lexists(path) else None  # a link's target lends no mode
        mode = held.st_mode & 0o7777 if held is not None and stat.S_ISREG(held.st_mode) else None
        with open(tmp, "xb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
    except OSError as err:
        raise _unwritten(path, tmp, err) from err
    return tmp


def _discard(tmp: Path) -> None:
    with contextlib.suppress(OSError):
        tmp.unlink()


def _unwritten(path: Path, tmp: Path, err: OSError) -> StoreError:
    _discard(tmp)
    return StoreError(
        f"{path}: could not write ({err.strerror or err}); "
        "nothing was changed — check the folder's permissions and free space"
    )


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
    clear(lock_path, then="kura locks a plain file there")  # older filelocks open (and truncate) links
    folder_aside(lock_path, then="kura locks a plain file there")  # a clone's folder: no write could ever run
    queue = _thread_lock(lock_path)
    if not queue.acquire(timeout=timeout):
        raise StoreError(
            f"{lock_path}: another writer in this process has held the store lock for {timeout:.0f}s"
        )
    deadline = time.monotonic() + timeout
    ticket = lock_queue.take(lock_path.with_name(lock_path.name + ".queue"))
    try:
        seen = lock_queue.wait_turn(ticket, deadline) if ticket else lock_queue.Seen(0, "")
        try:
            release = file_lock.acquire(lock_path, deadline)
        except TimeoutError as err:
            raise StoreError(f"{lock_path}: {_waited(timeout, seen)}") from err
        except OSError as err:
            raise StoreError(
                f"{lock_path}: cannot take the store lock ({err.strerror or err}); "
                "check that it is a plain file you can write"
            ) from err
        try:
            yield
        finally:
            release()
    finally:
        if ticket is not None:
            lock_queue.leave(ticket)
        queue.release()


def _waited(timeout: float, seen: lock_queue.Seen) -> str:
    """What kura saw while it waited ``timeout`` seconds for the lock, for the person."""
    if seen.ahead:
        return (
            f"waited {timeout:.0f}s for the store lock and {seen.ahead} writer(s) were still ahead of "
            f"it in the queue (the first, process {seen.first}, still running); try again, or look at "
            "that process"
        )
    return (
        f"waited {timeout:.0f}s for the store lock; no kura writer was queued ahead of it, yet the lock "
        "stayed taken — by a process that takes no ticket (an older kura, or a stuck one); "
        "try again, or look for it (e.g. `fuser` on this file)"
    )


_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


def _thread_lock(lock_path: Path) -> threading.Lock:
    """Threads of one process queue on a plain lock first, so only one of them at a time
    polls the file lock: a server's writers take turns instead of sleeping in 50 ms steps
    and starving each other (other processes still meet at the file lock)."""
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(os.path.abspath(lock_path), threading.Lock())


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` survive a crash (best effort)."""
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
    cap: int = DEFAULT_CAP,
) -> bytes | None:
    """The file's bytes once nobody is writing it (None if there is no file).

    An editor that saves in place truncates the file and then writes it, maybe in several
    chunks; read in between and you hold a torn file that looks whole. So the bytes count
    only when the file was last modified more than ``quiet`` seconds ago — or is exactly
    the file this process last wrote (``ours``: inode, size, mtime_ns), or read the same
    after a ``quiet`` wait (a clock that disagrees with the file system's must not block
    every write) — and its size and modification time are the same before and after the
    read. A file that keeps changing for ``timeout`` seconds, a link, a FIFO or a file
    over ``cap`` bytes is a StoreError: nothing is written on top of it."""
    deadline = time.monotonic() + timeout
    last: tuple[tuple[int, int, int], bytes] | None = None
    while True:
        try:
            before, data, after = _read_plain(path, cap)
        except FileNotFoundError:
            return None
        except OSError as err:
            raise StoreError(
                f"{path}: cannot be read ({err.strerror}); kura will not write over it — nothing was written"
            ) from None
        seen = (after.st_ino, after.st_size, after.st_mtime_ns)
        steady = (before.st_ino, before.st_size, before.st_mtime_ns) == seen and len(data) == after.st_size
        if steady and (seen == ours or time.time() - after.st_mtime >= quiet or last == (seen, data)):
            return data
        last = (seen, data) if steady else None
        if time.monotonic() > deadline:
            raise StoreError(f"{path.name}: kept changing while kura tried to read it; nothing was written")
        time.sleep(quiet)


def _read_plain(path: Path, cap: int) -> tuple[os.stat_result, bytes, os.stat_result]:
    """(stat before, bytes, stat after) of a plain file, never through a link; a FIFO or
    device is an error, not a read that never ends, and so is a file over ``cap`` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise OSError(errno.EINVAL, "not a plain file")
        data = _read_fd(fd, before.st_size, cap)
        return before, data, os.stat(path)
    finally:
        os.close(fd)


def identity(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime_ns) of a file, to recognise it later as the one we wrote."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)
