"""``kura watch``: keep the woven map in step with the files as people and agents edit them.

Editors save in many ways — VS Code writes a temporary file and renames it over the
memory, vim moves the memory to ``name~``, writes a new one and deletes the backup (after
probing the folder with a file called ``4913``), others write in several small chunks —
and each save is a burst of filesystem events. So events are reduced to the memory paths
they touch (the destination of a move counts), everything that is not a memory or the
index is ignored (swap files, ``~`` backups, ``4913``, dot- and underscore-files, kura's
own state folder and temporary files, and plain reads), and the store must stay quiet for a
short debounce before a burst counts as saved (a burst that never pauses is taken every
``longest`` seconds). A settled path whose bytes hash the same as
before (a touch, an editor re-saving unchanged text) is dropped; anything else triggers
exactly one re-weave for the whole burst, then (``after``) one update of the search index
when the store has one. The watcher never writes into a memory file.

A heartbeat in the state folder (``watch.json``: pid, last beat, re-weaves) lets
``kura doctor`` say whether a watcher is alive.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from kura.errors import StoreError
from kura.files.slugs import INDEX_NAME, is_memory_name, scan_files
from kura.store import state as st
from kura.store.atomic import write_atomic
from kura.store.safe_read import INDEX_CAP, MEMORY_CAP, Refused, read_in

DEBOUNCE = 0.1
LOST = "./"  # the changed "folder" when events were lost: the store as a whole
HEARTBEAT = 5.0
_IGNORED_SUFFIXES = ("~", ".swp", ".swx", ".swo", ".tmp", ".part", ".crswap", ".bak")
_WRITE_EVENTS = frozenset({"created", "modified", "moved", "deleted", "closed"})


def relevant(root: Path, path: str) -> str | None:
    """The store-relative path if ``path`` is a memory or the index, else None."""
    try:
        rel = Path(path).relative_to(root).as_posix()
    except ValueError:
        return None
    name = rel.rsplit("/", 1)[-1]
    if name == "4913" or name.endswith(_IGNORED_SUFFIXES):
        return None
    return rel if rel == INDEX_NAME or is_memory_name(rel) else None


def relevant_folder(root: Path, path: str) -> str | None:
    """A marker for a folder event inside the store that could move memories, else None."""
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return None
    if not parts or any(part[:1] in "._" for part in parts):
        return None
    return "/".join(parts) + "/"


class Watcher:
    """Debounces memory-file events and calls ``rebuild`` once per settled change."""

    def __init__(
        self,
        root: Path,
        rebuild: Callable[[], Any],
        *,
        debounce: float = DEBOUNCE,
        state: Path | None = None,
        after: Callable[[set[str]], Any] | None = None,
        beat: bool = True,
    ) -> None:
        """``after(changed)`` runs after each rebuild with the settled paths that changed
        (store-relative; a folder ends in ``/``) — e.g. to bring the search index up to date."""
        self.root = root.resolve()
        self.rebuild = rebuild
        self.after = after
        self.beats = beat  # False: a watcher that does not re-weave must not claim to
        self.debounce = debounce
        self.state = state  # None: the store's own state folder, looked up (and checked) at each beat
        self.rebuilds = 0
        self.errors: list[str] = []
        self._pending: dict[str, float] = {}
        self._last_event = 0.0  # the newest event of the burst now pending
        self.longest = max(2.0, debounce * 20)  # a burst that never pauses still rebuilds this often
        self._hashes: dict[str, str | None] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._started = time.time()

    def seen(self, path: str, *, folder: bool = False) -> None:
        """Note an event on ``path`` (called from the observer thread). A folder that
        appears, vanishes or moves may carry memories with it: that always rebuilds."""
        rel = relevant_folder(self.root, path) if folder else relevant(self.root, path)
        if rel is None:
            return
        now = time.monotonic()
        with self._lock:
            self._pending.setdefault(rel, now)
            self._last_event = now
            self._hashes.setdefault(rel, _UNKNOWN)

    def lost(self) -> None:
        """The kernel dropped events (its queue overflowed): what changed is unknown, so the
        whole store counts as changed, as when a folder moves (``LOST``)."""
        now = time.monotonic()
        with self._lock:
            self._pending.setdefault(LOST, now)
            self._last_event = now

    def remember_hashes(self) -> None:
        """Hash the current files, so the first event on each can be compared."""
        for rel in [INDEX_NAME, *(rel for rel, kind in scan_files(self.root) if kind != "unreadable")]:
            if relevant(self.root, str(self.root / rel)) is not None:
                self._hashes[rel] = _digest(self.root, rel)

    def run(self) -> None:
        """Loop until ``stop()``: settle paths, rebuild when content changed, beat."""
        last_beat = 0.0
        while not self._stop.wait(max(0.01, min(self.debounce / 3, 0.05))):
            changed = self._settled_changes()
            if changed:
                for step in (self.rebuild, None if self.after is None else partial(self.after, changed)):
                    if step is None:
                        continue
                    try:
                        step()
                    except Exception as err:  # noqa: BLE001 - the watcher must outlive one bad rebuild
                        self.errors.append(f"{type(err).__name__}: {err}")
                self.rebuilds += 1
                last_beat = 0.0
            if time.monotonic() - last_beat >= HEARTBEAT:
                self.beat()
                last_beat = time.monotonic()

    def stop(self) -> None:
        self._stop.set()

    def beat(self) -> None:
        if not self.beats:
            return
        data = {"pid": os.getpid(), "started": self._started, "beat": time.time(), "rebuilds": self.rebuilds}
        try:
            folder = self.state or st.folder(self.root, create=True)
            folder.mkdir(exist_ok=True)
            write_atomic(folder / "watch.json", json.dumps(data).encode("utf-8"))
        except (OSError, StoreError):
            pass  # a read-only store (or a .kura that is a link) can still be watched; it just cannot say so

    def _settled_changes(self) -> set[str]:
        """The paths of the pending burst once the whole store has been quiet for the debounce (an
        agent that writes a memory and then the index is one change, however the two writes are spaced
        inside it), or once the burst has gone on for ``longest`` without a pause."""
        now = time.monotonic()
        with self._lock:
            if not self._pending:
                return set()
            quiet = now - self._last_event >= self.debounce
            if not quiet and now - min(self._pending.values()) < self.longest:
                return set()
            settled = list(self._pending)
            self._pending.clear()
        changed: set[str] = set()
        for rel in settled:
            if rel.endswith("/"):  # a folder moved: its files' bytes say nothing about that
                changed.add(rel)
                continue
            digest = _digest(self.root, rel)
            if self._hashes.get(rel, _UNKNOWN) != digest:
                changed.add(rel)
            self._hashes[rel] = digest
        return changed


def watch(
    root: Path,
    rebuild: Callable[[], Any],
    *,
    debounce: float = DEBOUNCE,
    after: Callable[[set[str]], Any] | None = None,
    beat: bool = True,
) -> tuple[Watcher, Any]:
    """Start watching ``root`` (a watchdog observer thread plus a settling thread).
    Returns the watcher and the observer; call ``stop_watching`` to end both."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    watcher = Watcher(root, rebuild, debounce=debounce, after=after, beat=beat)
    watcher.remember_hashes()

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if event.event_type == "events_lost":
                watcher.lost()
                return
            if event.event_type not in _WRITE_EVENTS:
                return
            folder = event.is_directory
            if folder and event.event_type == "modified":
                return  # a file inside changed; that file's own event says so
            watcher.seen(str(event.src_path), folder=folder)
            if getattr(event, "dest_path", ""):
                watcher.seen(str(event.dest_path), folder=folder)

    observer = Observer()
    observer.schedule(Handler(), str(watcher.root), recursive=True)
    observer.start()
    threading.Thread(target=watcher.run, name="kura-watch", daemon=True).start()
    return watcher, observer


def stop_watching(watcher: Watcher, observer: Any) -> None:
    watcher.stop()
    observer.stop()
    observer.join(timeout=5)


_UNKNOWN = "?"


def _digest(root: Path, rel: str) -> str | None:
    """What the file holds, read as the store reads it (``kura.store.safe_read``): a FIFO, a device or
    a file past the cap is never read, only described — so it costs nothing and never hangs."""
    cap = INDEX_CAP if rel == INDEX_NAME else MEMORY_CAP
    got = read_in(root, rel, cap=cap, what="the index" if rel == INDEX_NAME else "a memory")
    if isinstance(got, Refused):
        return f"not read: {got.what}"
    return None if got is None else hashlib.sha256(got).hexdigest()
