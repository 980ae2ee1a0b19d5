"""The store lock taken with the kernel's flock (``kura.store.file_lock``) keeps filelock's
semantics: a second process waits until the deadline, a SIGKILLed holder frees the lock, and
it is the same lock an older kura takes through ``filelock.FileLock`` — each excludes the
other. Real processes throughout: a lock only matters between them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kura.store import file_lock

HOLD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path

    lock, held, how = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    if how == "kura":
        from kura.store import file_lock
        file_lock.acquire(lock, time.monotonic() + 60)
    else:
        from filelock import FileLock
        kept = FileLock(str(lock))  # kept: a FileLock collected releases its lock
        kept.acquire()
    held.touch()
    time.sleep(600)  # until the test kills it
    """
)
WAIT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from kura.store import file_lock

    lock, ready, got = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    ready.touch()
    release = file_lock.acquire(lock, time.monotonic() + 60)
    got.touch()
    release()
    """
)


def _until(check: Callable[[], bool], seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.005)
    return False


def _holder(tmp_path: Path, lock: Path, how: str) -> subprocess.Popen[bytes]:
    held = tmp_path / f"held-{how}"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock), str(held), how])
    assert _until(held.exists), "the holder never took the lock"
    return holder


@pytest.mark.parametrize("how", ["kura", "filelock"])
def test_a_held_lock_makes_others_wait_and_a_killed_holder_frees_it(tmp_path: Path, how: str) -> None:
    lock = tmp_path / "weave.lock"
    holder = _holder(tmp_path, lock, how)
    try:
        with pytest.raises(TimeoutError):
            file_lock.acquire(lock, time.monotonic() + 0.2)
        ready, got = tmp_path / "ready", tmp_path / "got"
        waiter = subprocess.Popen([sys.executable, "-c", WAIT, str(lock), str(ready), str(got)])
        assert _until(ready.exists)
        assert not got.exists()  # the holder is alive: the waiter cannot have the lock
    finally:
        os.kill(holder.pid, signal.SIGKILL)  # no release, no cleanup: the kernel drops its flock
        holder.wait(timeout=60)
    assert waiter.wait(timeout=60) == 0 and got.exists()
    file_lock.acquire(lock, time.monotonic() + 5)()  # free again once the waiter released it


def test_an_older_kura_waits_for_this_lock(tmp_path: Path) -> None:
    """filelock.FileLock (what an older kura takes) cannot have the lock while this one holds it."""
    lock = tmp_path / "lock"
    release = file_lock.acquire(lock, time.monotonic() + 5)
    probe = (
        "import sys\nfrom filelock import FileLock, Timeout\n"
        "try:\n    FileLock(sys.argv[1], timeout=0.2).acquire()\nexcept Timeout:\n    sys.exit(3)\n"
    )
    try:
        assert subprocess.run([sys.executable, "-c", probe, str(lock)], timeout=60).returncode == 3
    finally:
        release()
    assert subprocess.run([sys.executable, "-c", probe, str(lock)], timeout=60).returncode == 0


def test_the_lock_never_follows_a_link_nor_truncates_the_file(tmp_path: Path) -> None:
    target = tmp_path / "bashrc"
    target.write_bytes(b"alias ll='ls -l'\n")
    (tmp_path / "linked.lock").symlink_to(target)
    with pytest.raises(OSError) as refused:
        file_lock.acquire(tmp_path / "linked.lock", time.monotonic() + 1)
    assert not isinstance(refused.value, TimeoutError)
    assert target.read_bytes() == b"alias ll='ls -l'\n"
    lock = tmp_path / "plain.lock"
    lock.write_bytes(b"left by someone\n")
    file_lock.acquire(lock, time.monotonic() + 1)()
    assert lock.read_bytes() == b"left by someone\n"
