"""Memory files a warm process has read, kept while each file is still the one it read.

A recall through ``kura serve`` reads the same few dozen files question after question: the
standing of every hit (is it archived, superseded?), the links the walk follows, the text it
answers with. Each ``Store.read`` resolves the slug inside the store (two ``realpath`` calls,
a symlink check per folder) and parses the frontmatter: about 0.3 ms a file, 15 to 25 files a
question (measured at 20,000 memories: 2.5 ms of CPU in standings alone, a tenth of a warm
recall without its hop).

Whether a file is still the one read is its identity from one ``lstat`` (device, inode,
size, modification and change time in nanoseconds): writing to it, replacing it (an editor's
save, an atomic write, ``git checkout``), renaming over it or changing its mode all move the
change time, so an edited file is read again by the very next question — nothing here waits
for a watcher or a clock. The ``lstat`` is taken before the read, so a file changed during
the read is kept under its old identity and read again next time, never the other way round.
Only what ``Store.read`` itself returned for a regular file at the slug's own path is kept
(a symlink, a name the store spells otherwise, a refused file: read through the store every
time), so containment and the size cap stay the store's. At most ``LIMIT`` files and
``BUDGET`` bytes of them are kept: a store may hold thousands of memories near the 4 MiB cap
(a clone's, even), and a server that kept every one it read would hold gigabytes.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from kura.files.memory import Memory
from kura.store.store import Store

LIMIT = 2048  # files kept; a question reads a few dozen
BUDGET = 64 << 20  # bytes of them kept (each also parsed): ~16,000 memories of a typical 4 KiB
Identity = tuple[int, int, int, int, int]


class ReadMemo:
    """What ``Store.read`` returned for each file, by path, with the identity it had."""

    def __init__(self, limit: int = LIMIT, budget: int = BUDGET) -> None:
        self.limit, self.budget = limit, budget
        self._kept: dict[Path, tuple[Identity, bytes, Memory]] = {}
        self.bytes = 0  # of the files kept
        self._lock = threading.Lock()  # a server reads from several threads
        self.reads = 0  # files read through the store (what a test counts)

    def over(self, store: Store) -> MemoStore:
        """``store``, its reads by slug answered from here while the files are unchanged."""
        return MemoStore(store, self)

    def read(self, store: Store, slug: str) -> tuple[bytes, Memory]:
        where = store.root / f"{slug}.md"
        seen = _identity(where)
        kept = self._kept.get(where) if seen is not None else None
        if kept is not None and kept[0] == seen:
            return kept[1], kept[2]
        self.reads += 1
        data, memory = Store.read(store, slug)
        if seen is not None and data and memory.path == where:
            self._keep(where, (seen, data, memory))
        return data, memory

    def path(self, store: Store, slug: str) -> Path | None:
        """The file of ``slug`` when it is kept and unchanged (None: ask the store)."""
        where = store.root / f"{slug}.md"
        kept = self._kept.get(where)
        return where if kept is not None and kept[0] == _identity(where) else None

    def _keep(self, where: Path, entry: tuple[Identity, bytes, Memory]) -> None:
        if len(entry[1]) > self.budget:
            return
        with self._lock:
            self.bytes -= len(self._kept.pop(where, (None, b""))[1])
            self._kept[where] = entry
            self.bytes += len(entry[1])
            while len(self._kept) > self.limit or self.bytes > self.budget:
                self.bytes -= len(self._kept.pop(next(iter(self._kept)))[1])


class MemoStore(Store):
    """A store whose reads by slug go through a ``ReadMemo``; everything else is the store's."""

    def __init__(self, store: Store, memo: ReadMemo) -> None:
        super().__init__(
            store.root, name=store.name, label=store.label, write_policy=store.write_policy,
            charter=store.charter, persona=store.persona,
        )  # fmt: skip
        self.memo = memo

    def read(self, slug: str, path: Path | None = None) -> tuple[bytes, Memory]:
        if path is not None:  # a walk's own path: the store's rules for it
            return super().read(slug, path)
        return self.memo.read(self, slug)

    def resolve(self, slug: str) -> Path:
        return self.memo.path(self, slug) or super().resolve(slug)


def _identity(path: Path) -> Identity | None:
    """``path``'s identity when it is a regular file itself (not a link), else None."""
    try:
        found = os.lstat(path)
    except (OSError, ValueError):  # gone, a name the filesystem refuses, a NUL in it
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
