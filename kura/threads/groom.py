"""Grooming threads on the night's quiet spell (Talon's memory-groomer, without a model).

Two kinds of clutter build up in a thread folder, and both can be tidied without judging
what anything means:

* **Duplicates by key.** A key names one file, but a person's copy (``current-project
  copy.md``, a file moved by hand) can still say ``key: work:current-project`` in its
  frontmatter. A copy whose text is the same as the item its key names says nothing the
  item does not: it is removed, its bytes kept in ``.kura/threads/<id>/deleted/`` first. A
  copy that says something else is a person's to reconcile: it is reported, never touched.
* **Resolved observations.** The thread's log is consolidated mechanically
  (``kura.observe.consolidate``) when it holds resolved entries: they are archived and
  dropped; an unresolved 🔴 never is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from kura.errors import KuraError
from kura.files import memory_file as nt
from kura.files.slugs import THREADS_DIR
from kura.observe import observations as ob
from kura.observe.consolidate import consolidate
from kura.store.store import Store
from kura.threads.items import Thread
from kura.threads.names import key_of, thread_id
from kura.threads.observer import log_store


@dataclass(frozen=True, slots=True)
class Groomed:
    """What grooming did across a store's threads."""

    threads: int
    removed: tuple[str, ...]  # duplicate files removed (paths relative to the store)
    differing: tuple[str, ...]  # duplicates left alone because they say something else
    dropped: int  # observations dropped by consolidation

    @property
    def worked(self) -> bool:
        return bool(self.removed or self.dropped)

    def line(self) -> str:
        return (
            f"groom: {self.threads} threads, {len(self.removed)} duplicate items removed, "
            f"{len(self.differing)} left to reconcile, {self.dropped} observations dropped"
        )


def groom(store: Store) -> Groomed:
    """Tidy every thread of ``store`` (see the module docstring)."""
    removed: list[str] = []
    differing: list[str] = []
    dropped = 0
    threads = _threads(store)
    if store.write_policy == "frozen":
        return Groomed(len(threads), (), (), 0)
    for thread in threads:
        gone, kept = _duplicates(thread)
        removed += gone
        differing += kept
        target = log_store(store, thread)
        if any(e.resolved for e in ob.read_log(target).entries):
            try:
                dropped += len(consolidate(target).dropped)
            except KuraError:
                continue  # a log that cannot be written tonight is tried again next time
    return Groomed(len(threads), tuple(removed), tuple(differing), dropped)


def _threads(store: Store) -> list[Thread]:
    folder = store.root / THREADS_DIR
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False))
    except OSError:
        return []
    found = []
    for name in names:
        try:
            found.append(Thread(store, thread_id(name)))
        except KuraError:
            continue  # a folder no thread id can name: no thread's
    return found


def _duplicates(thread: Thread) -> tuple[list[str], list[str]]:
    """Remove copies identical to the item their key names; list the ones that differ."""
    items = {item.key: item for item in thread.list()}
    removed: list[str] = []
    differing: list[str] = []
    for item in items.values():
        path = thread.root / item.path.removeprefix(thread.rel + "/")
        try:
            said = str(nt.from_bytes(path.read_bytes()).meta.get("key") or "")
        except OSError:
            continue
        owner = items.get(said)
        if (
            not said
            or said == item.key
            or owner is None
            or key_of(item.path.removeprefix(thread.rel + "/")) is None
        ):
            continue
        if owner.value == item.value:
            try:
                thread.delete(item.key)
            except KuraError:
                continue
            removed.append(item.path)
        else:
            differing.append(item.path)
    return removed, differing
