"""The background index build: a detached, low-priority process, one per store.

A one-shot recall on a big store embeds for a few seconds and answers from what there is
(``kura.recall.index_build``); before this, the rest waited for the next recall, which
embedded a few seconds more, so nine recalls on 2,000 memories left 850 with a vector. Now
the recall that finds the index partial also starts a build that outlives it: a process of
its own (``python -m kura.recall.index_worker``), in its own session, at ``nice`` 10,
which embeds every memory that has no vector and exits. A recall a minute later is whole.

One build per store: the starter takes an ``flock`` on ``.kura/index-build.lock`` without
waiting and hands the descriptor to the build, which holds it for its whole life — so the
lock is let go however the build ends (a SIGKILL included) and never goes stale, and a
recall that finds it held starts nothing. The build is resumable because the index is: its
vectors are committed chunk by chunk, and a new build embeds only what has none.

The build writes where it is to ``.kura/index-build.json`` (pid, state, vectors made of how
many, times); ``kura stores`` and ``kura doctor`` read it, as untrusted derived state: the
fields are checked, and a "running" build whose lock is free is reported as stopped.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from kura.errors import KuraError
from kura.store import state as st
from kura.store.atomic import write_atomic
from kura.text.quarantine import clean

LOCK_NAME = "index-build.lock"
PROGRESS_NAME = "index-build.json"
LOG_NAME = "index-build.log"  # one line as each build starts and ends
LOG_BYTES = 1 << 18  # past this the log starts again
ENV = "KURA_INDEX_BACKGROUND"  # 0: recalls start no background build
NICE = 10  # a build yields the CPU to anything a person is waiting for
SAY_EVERY = 1.0  # seconds between two progress writes
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # .kura/ may come with a clone: never through a link
_OPEN = os.O_RDWR | os.O_CREAT | _NOFOLLOW
State = Literal["running", "done", "failed", "stopped"]
STATES = ("running", "done", "failed", "stopped")


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a store's background build is (or where the last one ended)."""

    state: State
    pid: int
    done: int  # vectors made by this build
    total: int  # memories it had to embed when it started
    started: float  # epoch seconds
    updated: float
    reason: str = ""  # why it failed
    headlines: int = 0  # memories whose headline and sentence vectors it made or found they need none ...
    headlines_total: int = 0  # ... of those it found without one (``kura.recall.headline``)

    def line(self) -> str:
        share = (
            f"{self.done:,} of {self.total:,} embedded"
            if self.total
            else "every memory already had its vector"
        )
        if self.headlines_total:
            of = f"{self.headlines:,} of {self.headlines_total:,}"
            share += f"; headline and sentence vectors for {of} memories made or found not needed"
        if self.state == "running":
            return f"index build running (pid {self.pid}): {share}"
        if self.state == "done":
            return f"index build done: {share}"
        if self.state == "stopped":
            where = f"at {share}" if self.total else f"({share})"
            return f"index build stopped {where} — the next recall or kura index resumes it"
        return f"index build failed: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def enabled() -> bool:
    """Recalls start background builds (``$KURA_INDEX_BACKGROUND=0``: they do not)."""
    return os.environ.get(ENV, "").strip() != "0"


def running(root: Path) -> bool:
    """A build holds this store's lock right now."""
    try:
        fd = os.open(_state(root, create=False) / LOCK_NAME, _OPEN, 0o600)
    except (OSError, KuraError):
        return False  # no state folder yet: nothing was ever built here
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing lets go of a lock taken here
    return False


def start(root: Path, *, config: Path | None = None, cwd: Path | None = None) -> bool:
    """Start a detached build of the store at ``root`` unless one runs; True when started.
    ``config``/``cwd``: what the build loads its kura.toml from, as the caller did.
    ``$KURA_INDEX_BACKGROUND=0``: never (a benchmark, a machine that must stay quiet)."""
    if not enabled():
        return False
    try:
        state = _state(root)
        st.clear(state / LOCK_NAME, then="a new lock is made")  # a clone's link there: no build ever ran
        st.folder_aside(state / LOCK_NAME, then="a new lock is made")  # … or a clone's folder
        fd = os.open(state / LOCK_NAME, _OPEN, 0o600)
    except (OSError, KuraError):
        return False  # no state folder to hold a lock in: the next recall tries again
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a build runs
        subprocess.Popen(  # our own module, by this Python; -P: never a module from the cwd (a clone's kura/)
            [sys.executable, "-P", "-m", "kura.recall.index_worker", str(fd), str(root), str(config or "")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            pass_fds=(fd,),
            close_fds=True,
            cwd=cwd,
        )
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # the build holds the lock through its own copy of the descriptor


def progress(root: Path) -> Progress | None:
    """The store's build as its progress file says, checked (None: never built, or damaged)."""
    try:
        path = _state(root, create=False) / PROGRESS_NAME
    except KuraError:
        return None
    data = st.read_json(path, then="no index build is reported") if path.exists() else None
    if data is None:
        return None
    found = _checked(data)
    if found is None:
        st.damaged(path, "holds fields of the wrong type", "no index build is reported")
        return None
    if found.state == "running" and not running(root):  # killed: its lock went with it
        return replace(found, state="stopped")
    return found


def _checked(data: dict[str, Any]) -> Progress | None:
    """The progress file's fields when each has the type and range a build writes: counts
    that fit 64 bits, times that are finite epoch seconds (a 400-digit integer or NaN is no
    time), and a reason of one line without control characters (it is printed to a terminal)."""
    numbers = ("pid", "done", "total")
    heads = ("headlines", "headlines_total")  # absent from an older kura's file: none
    if data.get("state") not in STATES or not all(_count(data.get(k)) for k in numbers):
        return None
    if not all(_count(data.get(k, 0)) for k in heads):
        return None
    if not all(type(data.get(k)) in (int, float) and 0 <= data[k] < _LATEST for k in ("started", "updated")):
        return None
    reason = data.get("reason", "")
    return Progress(
        data["state"],
        data["pid"],
        data["done"],
        data["total"],
        float(data["started"]),
        float(data["updated"]),
        clean(reason[:500]) if isinstance(reason, str) else "",
        data.get("headlines", 0),
        data.get("headlines_total", 0),
    )


_LATEST = 1e11  # epoch seconds (the year 5138): a later time is not one a build wrote


def _count(value: Any) -> bool:
    return type(value) is int and 0 <= value < 1 << 63


def _state(root: Path, *, create: bool = True) -> Path:
    return st.folder(root, create=create)


def say(root: Path, said: Progress, *, log: str = "") -> None:
    """Write the progress file; ``log``: and this line in the build log (a start, an end)."""
    with contextlib.suppress(OSError, KuraError):  # no progress file is no reason to stop building
        write_atomic(_state(root) / PROGRESS_NAME, json.dumps(said.to_dict()).encode())
        if log:
            path = _state(root) / LOG_NAME
            if path.exists() and path.lstat().st_size > LOG_BYTES:
                path.unlink()
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o600)
            try:
                os.write(fd, f"{stamp} pid {said.pid} {log}\n".encode())
            finally:
                os.close(fd)
