"""Store-lock waiters served in the order they came: a queue of tickets beside the lock.

filelock takes a lock by trying it every 50 ms, so when several processes wait, whichever
tries just after a release wins; on a loaded machine one writer of eight waited the whole
60 s while the others took turns, and was then told another process "held the store lock
for 60s". So a writer first takes a ticket — a file in ``lock.queue/`` beside the lock,
named by the time it arrived, that it holds an flock on while it waits and writes — and
tries the lock only when no older live ticket is left. A ticket whose owner died
(SIGKILL) holds no flock any more, and the next waiter removes it. A ticket is made under a
temporary name and flocked before it is renamed into the queue, so no waiter ever takes a
ticket whose owner has not locked it yet for a dead one.

The queue folder is state, and state can come with a clone: a link there is removed, a
ticket's file is opened without following links or blocking, and only names of the form
kura writes count. Where there is no flock (Windows), or the folder cannot be used, the
waiters are not ordered: filelock alone decides, as before.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from kura.store.state import clear

try:
    import fcntl

    FLOCK = True
except ImportError:  # pragma: no cover - Windows: no flock, no queue
    FLOCK = False

POLL = 0.01  # seconds between looks at the queue while older tickets are there
_NAME = re.compile(r"\d{20}-\d{1,10}-[0-9a-f]{8}")
_OPEN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


@dataclass(frozen=True, slots=True)
class Ticket:
    path: Path
    fd: int


@dataclass(frozen=True, slots=True)
class Seen:
    """What a waiter saw of the queue: said when it gives up."""

    ahead: int  # live tickets older than its own, the last time it looked
    first: str  # the oldest of them (its pid), "" when none


def take(folder: Path) -> Ticket | None:
    """A ticket at the end of ``folder``'s queue, or None when no queue can be kept here."""
    if not FLOCK:
        return None
    try:
        clear(folder, then="kura keeps its lock queue in a folder there")
        folder.mkdir(exist_ok=True)
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return None
        name = f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}"
        staged = folder / f".{name}"
        fd = os.open(staged, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(staged, folder / name)
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            staged.unlink()
        return None
    return Ticket(folder / name, fd)


def wait_turn(ticket: Ticket, deadline: float) -> Seen:
    """Wait until no live ticket older than ``ticket`` is left, or until ``deadline``
    (``time.monotonic``); what was ahead the last time it looked (nothing: its turn)."""
    while True:
        ahead = _ahead(ticket)
        if not ahead or time.monotonic() >= deadline:
            return Seen(len(ahead), ahead[0].split("-")[1] if ahead else "")
        time.sleep(POLL)


def leave(ticket: Ticket) -> None:
    with contextlib.suppress(OSError):
        ticket.path.unlink()
    os.close(ticket.fd)


def _ahead(ticket: Ticket) -> list[str]:
    try:
        names = sorted(n for n in os.listdir(ticket.path.parent) if _NAME.fullmatch(n))
    except OSError:
        return []
    return [n for n in names if n < ticket.path.name and _alive(ticket.path.parent / n)]


def _alive(path: Path) -> bool:
    """Whether a ticket's owner still holds it; a dead owner's ticket is removed."""
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        with contextlib.suppress(OSError):
            path.unlink()
        return False
    finally:
        os.close(fd)
