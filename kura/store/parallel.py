"""Spreading a cold start over the machine's cores.

Most runs touch a handful of files, but the first weave of a big store parses every
memory and trims every line, and that work is embarrassingly parallel. Below a threshold
the pool costs more than it saves (a fork and the pickling of results), so small batches
run in-process. Workers are forked, so they start with the parent's modules already
imported; where fork is unavailable, everything runs in-process. The calling process works
on the first chunk itself while the workers take the others (on two cores: one worker,
half the batch each), so it forks one process fewer and pickles none of its own results.

Workers die with their parent. A parent killed with SIGKILL runs no cleanup, and its
workers, blocked on a queue whose write end they hold themselves, would wait forever —
holding a copy of every file the parent had open when it forked (a lock another thread
held at that moment among them). So each worker asks the kernel to kill it when its parent
goes (Linux ``PR_SET_PDEATHSIG``; the "parent" is the thread that forked it, which waits in
``parallel_map`` until the pool is shut down), and where that is not available a thread in
the worker watches for the parent's exit (its parent pid changes when it is reparented).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

THRESHOLD = 2000
WATCH_EVERY = 0.2  # seconds between a watching thread's looks at its parent
_PR_SET_PDEATHSIG = 1


def parallel_map(
    fn: Callable[[list[T]], list[R]], items: Sequence[T], *, threshold: int = THRESHOLD
) -> list[R]:
    """``fn`` over ``items`` in chunks, on several processes when the batch is big;
    results in the order of ``items``. ``fn`` takes and returns a list (one call per
    chunk, so per-call setup is paid once per worker chunk)."""
    cores = os.cpu_count() or 1
    if len(items) < threshold or cores < 2:
        return fn(list(items))
    import multiprocessing  # here: most runs (a list, a doctor, a warm weave) parse a few files
    from concurrent.futures import ProcessPoolExecutor

    if "fork" not in multiprocessing.get_all_start_methods():
        return fn(list(items))
    workers = min(cores, 8)
    size = -(-len(items) // workers)
    chunks = [list(items[i : i + size]) for i in range(0, len(items), size)]
    if len(chunks) < 2:
        return fn(chunks[0] if chunks else [])
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(
        max_workers=len(chunks) - 1, mp_context=context, initializer=_die_with, initargs=(os.getpid(),)
    ) as pool:
        rest = pool.map(fn, chunks[1:])
        first = fn(chunks[0])  # the caller's own share: one fork fewer, and nothing of it pickled
        return [*first, *(result for part in rest for result in part)]


def _die_with(parent: int) -> None:
    """A worker's first act: arrange to end when ``parent`` does."""
    if not _pdeathsig():
        threading.Thread(target=_watch, args=(parent,), name="kura-parent-watch", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the arrangement was in place
        os._exit(1)


def _pdeathsig() -> bool:
    """Have the kernel SIGKILL this process when its parent thread ends (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # here, in the worker: a shell hook's prefill never pays for it

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_EVERY)
    os._exit(1)
