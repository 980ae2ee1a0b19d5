"""Spreading a cold start over the machine's cores.

Most runs touch a handful of files, but the first weave of a big store parses every
memory and trims every line, and that work is embarrassingly parallel. Below a threshold
the pool costs more than it saves (a fork and the pickling of results), so small batches
run in-process. Workers are forked, so they start with the parent's modules already
imported; where fork is unavailable, everything runs in-process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

THRESHOLD = 2000


def parallel_map(
    fn: Callable[[list[T]], list[R]], items: Sequence[T], *, threshold: int = THRESHOLD
) -> list[R]:
    """``fn`` over ``items`` in chunks, on several processes when the batch is big;
    results in the order of ``items``. ``fn`` takes and returns a list (one call per
    chunk, so per-call setup is paid once per worker chunk)."""
    cores = os.cpu_count() or 1
    if len(items) < threshold or cores < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return fn(list(items))
    workers = min(cores, 8)
    size = -(-len(items) // workers)
    chunks = [list(items[i : i + size]) for i in range(0, len(items), size)]
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
        return [result for part in pool.map(fn, chunks) for result in part]
