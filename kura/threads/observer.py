"""Observations an agent writes itself: the log of its store, or of its thread.

Talon's session-observer appends dated, prioritised entries with the task at hand and a
suggested continuation, and its session-reflector consolidates the log when it grows too
large. Here the log is the markdown file of ``kura.observe.observations`` — the store's
``_observations.md``, or ``threads/<id>/_observations.md`` for an agent bound to a thread
(the leading ``_`` keeps it out of the thread's items) — and the reflector is the
mechanical consolidation (``kura.observe.consolidate``), run as soon as a write takes the
log past its size hint: it never drops an unresolved 🔴 and archives whatever it drops. No
model is asked on the request path; ``kura observe --consolidate`` still may.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from kura.errors import InvalidRequest
from kura.observe import observations as ob
from kura.observe import quota
from kura.observe.consolidate import Consolidated, consolidate
from kura.store.store import Store
from kura.threads.items import Thread

PRIORITIES = tuple(ob.MARKERS)


@dataclass(frozen=True, slots=True)
class Observed:
    """One entry written, where, and the consolidation it set off (None: none was due)."""

    entry: ob.Entry
    log: str  # the log's path relative to the store
    consolidated: Consolidated | None

    def to_dict(self) -> dict[str, Any]:
        done = self.consolidated
        return {
            "entry": self.entry.to_dict(),
            "log": self.log,
            "consolidated": None
            if done is None
            else {"method": done.method, "dropped": len(done.dropped), "kept": len(done.kept)},
        }


def log_store(store: Store, thread: Thread | None) -> Store:
    """The store whose root holds the log: ``store`` itself, or a view of the thread's
    folder (made as a real folder, never through a link) with the store's write policy."""
    if thread is None:
        return store
    thread.make_folder()
    return Store(thread.root, name=f"{store.name}/{thread.rel}", write_policy=store.write_policy)


def observe(
    store: Store,
    text: str,
    priority: str = "medium",
    *,
    thread: Thread | None = None,
    task: str = "",
    continuation: str = "",
    today: date | None = None,
    source: str = "cli",
) -> Observed:
    """Append one entry (to the thread's log when ``thread`` is given), then consolidate
    mechanically when the log has passed its size hint. ``source`` (cli, http, mcp) is
    counted against its day's cap (``kura.observe.quota``) first."""
    if priority not in ob.MARKERS:
        raise InvalidRequest(
            f"priority {priority!r} is not one of {', '.join(PRIORITIES)}; nothing was written"
        )
    target = log_store(store, thread)
    quota.take(store, ob.log_path(target).relative_to(store.root).as_posix(), source, today or date.today())
    entry = ob.observe(target, text, priority, today=today, task=task, continuation=continuation)
    done = consolidate(target, today=today) if ob.read_log(target).hint else None
    if done is not None and done.dropped:  # numbers and lines moved: find the entry again
        entry = next((e for e in ob.read_log(target).entries if e.text == entry.text), entry)
    rel = ob.log_path(target).relative_to(store.root).as_posix()
    return Observed(entry, rel, done)
