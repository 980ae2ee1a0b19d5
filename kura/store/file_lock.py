"""The store lock's file lock: the kernel's ``flock`` where the system has one, the
``filelock`` library only where it does not (Windows).

Why not ``filelock`` everywhere: loading it (and the ``logging`` it brings) costs ~15 ms,
and a scheduler runs ``kura weave`` — which takes ``weave.lock`` once — after every edit.
On POSIX ``filelock`` takes an exclusive ``flock`` on the lock file itself, so this takes
the very same lock: an older kura (or any ``FileLock`` on the path) and this one exclude
each other. The semantics are filelock's: tried until a deadline, then ``TimeoutError``;
released when the holder closes the file — or dies, for the kernel drops a dead process's
``flock`` (a SIGKILLed holder never leaves the store locked). The file is opened without
following a link (state can come with a clone) and never truncated.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path

try:
    import fcntl

    FLOCK = True
except ImportError:  # pragma: no cover - Windows: filelock's msvcrt lock
    FLOCK = False

POLL = 0.01  # seconds between tries while another process holds the lock
_HELD = frozenset({errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES})  # some file systems say EACCES
_OPEN = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def acquire(path: Path, deadline: float) -> Callable[[], None]:
    """Take the exclusive lock on ``path`` (created if missing), trying until ``deadline``
    (``time.monotonic``); returns what releases it. ``TimeoutError`` when another process
    still holds it at the deadline; ``OSError`` when the file cannot be opened or locked."""
    if not FLOCK:
        return _library(path, deadline)
    fd = os.open(path, _OPEN, 0o644)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as err:
                if err.errno not in _HELD:
                    raise
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"{path}: held by another process") from None
                time.sleep(POLL)
            else:
                return lambda: os.close(fd)  # closing the file drops its flock
    except BaseException:
        os.close(fd)
        raise


def _library(path: Path, deadline: float) -> Callable[[], None]:
    from filelock import FileLock, Timeout  # here: only where there is no flock

    lock = FileLock(str(path), timeout=max(0.0, deadline - time.monotonic()))
    try:
        lock.acquire()
    except Timeout as err:
        raise TimeoutError(f"{path}: held by another process") from err
    return lock.release
