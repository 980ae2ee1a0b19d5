"""What the web pages read from a big store: a page of rows, the links into one memory, the
descriptions of the few memories a page names.

At 10,000 memories a page that lists everything (1.5 MB of HTML) or parses every file to
find the few it shows (the memories that link to one; the descriptions of three recalled
memories) takes seconds. So the pages show a page of rows at a time (``Paged``), and read
what they show from the catalog (``kura.store.catalog``: a stat of each file and one
SQLite read, no file parsed unless it changed) or from the few files they name.

Doctor is the exception: its checks read every file with a finding again (1,000 dead links
at 10,000 memories: about a second). So the health page keeps the last report of each store
(``Kept``; the memories page keeps its listing too) while nothing doctor reads has changed:
every memory file's and MEMORY.md's identity (inode, size, times), the state folder's own
files but the caches that follow from the memories (the search index, the catalog, locks),
and the day. Doctor is asked again the moment any of it changes; the watcher's liveness is
read fresh each time.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from kura.errors import InvalidRequest, KuraError
from kura.files.link_names import Names
from kura.files.link_names import names as names_of
from kura.files.slugs import STATE_DIR, file_stats
from kura.health.doctor import heartbeat
from kura.store.catalog import entries
from kura.store.store import Store

T = TypeVar("T")
PAGE = 200  # rows a page shows (memories, findings)
_MAX_PAGE_DIGITS = 6


@dataclass(frozen=True, slots=True)
class Paged(Generic[T]):
    """One page of ``total`` rows: ``rows`` are the ``number``-th ``size`` of them (1-based)."""

    rows: tuple[T, ...]
    number: int
    pages: int
    total: int
    size: int = PAGE

    @property
    def first(self) -> int:
        """The 1-based position of the page's first row (0 when there are none)."""
        return (self.number - 1) * self.size + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1 if self.rows else 0


def page_number(raw: str | None) -> int:
    """``?page=`` as a number from 1; a page past the last is answered as the last."""
    if raw in (None, ""):
        return 1
    assert raw is not None
    if not (raw.isascii() and raw.isdigit() and len(raw) <= _MAX_PAGE_DIGITS) or int(raw) < 1:
        raise InvalidRequest("page must be a whole number from 1")
    return int(raw)


def paged(rows: Sequence[T], number: int, size: int = PAGE) -> Paged[T]:
    """The ``number``-th page of ``rows`` (the last one when ``number`` is past it)."""
    pages = max(1, math.ceil(len(rows) / size))
    number = min(number, pages)
    start = (number - 1) * size
    return Paged(tuple(rows[start : start + size]), number, pages, len(rows), size)


@dataclass(frozen=True, slots=True)
class Links:
    """Every memory's slug, and for each slug the memories whose ``[[links]]`` name it (a
    ``[[Title]]`` link counted where it resolves, as doctor resolves it: ``names``)."""

    slugs: frozenset[str]
    into: dict[str, tuple[str, ...]]
    names: Names


def links_of(store: Store) -> Links:
    """The store's links turned round, from the catalog: no file is read unless it changed
    since the last scan."""
    catalog = entries(store)
    resolved = names_of(catalog.values())
    into: dict[str, list[str]] = {}
    for source, entry in catalog.items():
        for target in resolved.linked(entry.links):
            into.setdefault(target, []).append(source)
    into_sorted = {target: tuple(sorted(found)) for target, found in into.items()}
    return Links(frozenset(catalog), into_sorted, resolved)


def descriptions(store: Store, slugs: Iterable[str]) -> dict[str, str]:
    """Each named memory's description, read from its own file ("" when it cannot be read)."""
    found: dict[str, str] = {}
    for slug in dict.fromkeys(slugs):
        try:
            found[slug] = store.show(slug).description or ""
        except KuraError:
            found[slug] = ""
    return found


_DERIVED = ("search.db", "state.db", ".lock", ".queue")  # state that follows from the memories


def fingerprint(root: Path) -> tuple[Any, ...]:
    """What doctor reads, as identities: changes when any memory file, MEMORY.md or a state
    file that is not a derived cache changes, or the day turns."""
    state: list[tuple[str, int, int]] = []
    try:
        with os.scandir(root / STATE_DIR) as found:
            for item in found:
                if not any(mark in item.name for mark in _DERIVED) and item.name != "watch.json":
                    info = item.stat(follow_symlinks=False)
                    state.append((item.name, info.st_size, info.st_mtime_ns))
    except OSError:
        pass  # no state folder (or not one): doctor says so, and the key says so too
    return dt.date.today(), tuple(file_stats(root)), tuple(sorted(state))


class Kept:
    """The last answer of each store (a doctor report, a listing), while its ``fingerprint``
    holds."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[tuple[Any, ...], Any]] = {}
        self._lock = threading.Lock()

    def get(self, name: str, root: Path, make: Callable[[], T]) -> T:
        key = fingerprint(root)  # taken first: a change while ``make`` runs is seen next time
        with self._lock:
            kept = self._kept.get(name)
        if kept is None or kept[0] != key:
            kept = (key, make())
            with self._lock:
                self._kept[name] = kept
        found: T = kept[1]
        return found


def report(kept: Kept, name: str, root: Path, diagnose: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Doctor's report of a store, from ``kept`` while it holds; the watcher read fresh."""
    return {**kept.get(name, root, diagnose), "watcher": heartbeat(root)}
