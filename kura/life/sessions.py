"""``kura sessions``: every session the store has read, and what each one witnessed.

A project has many sessions, and durable memory is what they share. The ledger is the
scratch file's (``kura.life.scratch``: filled as the distiller reads journals): per session
its source, first and last time, segments read; here each is joined with the memories whose
recorded witnesses name it and the scratch items it mentions, so a person can see which runs
taught the store what — and which taught it nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kura.files import witness as wt
from kura.life import scratch as sc
from kura.store.store import Store


@dataclass(kw_only=True, frozen=True, slots=True)
class SessionRow:
    id: str
    source: str
    first: str
    last: str
    segments: int
    memories: tuple[str, ...]  # slugs whose witnesses name the session
    waiting: tuple[str, ...]  # the ids of the scratch items it witnesses (those that wait)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source, "first": self.first, "last": self.last,
                "segments": self.segments, "memories": list(self.memories),
                "scratch": list(self.waiting)}  # fmt: skip


def report(store: Store) -> list[SessionRow]:
    """Every session in the ledger, oldest first (by first time, then id)."""
    scratch = sc.load(store)
    held = {i.id for i in scratch.held()}
    witnessed: dict[str, list[str]] = {}
    for memory in store.list():
        found, _ = wt.read(memory.note.meta, memory.slug)
        for session in dict.fromkeys(w.session for w in found if w.session):
            witnessed.setdefault(session, []).append(memory.slug)
    mentioned: dict[str, list[str]] = {}
    for item in scratch.items.values():
        if item.id in held:
            for session in item.sessions:
                mentioned.setdefault(session, []).append(item.id)
    rows = [
        SessionRow(id=s.id, source=s.source, first=s.first, last=s.last, segments=s.segments,
                   memories=tuple(sorted(witnessed.get(s.id, ()))),
                   waiting=tuple(sorted(mentioned.get(s.id, ()))))
        for s in scratch.sessions.values()
    ]  # fmt: skip
    return sorted(rows, key=lambda r: (r.first, r.id))
