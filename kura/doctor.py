"""Store health: what a person should fix, each with where it is and what to do.

The store reads every file tolerantly and keeps going, which is only safe if what it
tolerated is shown somewhere. Doctor is that place: broken frontmatter and YAML guesses
(from the parser), symlinks that leave the store, index drift (a memory with no line in
MEMORY.md, a line naming no memory, a memory with two lines of its own) and ``[[links]]``
that name no memory. Each check is a small function from a snapshot of the store to
findings, so more checks (the link graph's islands and dead ends) slot in beside them.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kura.index import Index
from kura.note import Finding
from kura.slugs import INDEX_NAME, STATE_DIR
from kura.store import Memory, Store


@dataclass(frozen=True, slots=True)
class Snapshot:
    store: Store
    memories: tuple[Memory, ...]
    index: Index


@dataclass(frozen=True, slots=True)
class Report:
    store: str
    memories: int
    counts: dict[str, int]
    findings: tuple[tuple[str, Finding], ...]
    watcher: dict[str, Any] | None = None

    @property
    def healthy(self) -> bool:
        return not self.findings

    @property
    def errors(self) -> int:
        return sum(1 for _, f in self.findings if f.severity != "warning")

    def to_dict(self) -> dict[str, object]:
        return {
            "store": self.store,
            "memories": self.memories,
            "types": self.counts,
            "healthy": self.healthy,
            "watcher": self.watcher,
            "findings": [
                {"check": check, "severity": f.severity, "path": f.path, "line": f.line, "message": f.message}
                for check, f in self.findings
            ],
        }


def check_files(snap: Snapshot) -> Iterator[Finding]:
    for memory in snap.memories:
        yield from memory.findings
    yield from snap.store.walk_findings()


def check_index(snap: Snapshot) -> Iterator[Finding]:
    slugs = {m.slug for m in snap.memories}
    named = set(snap.index.named())
    for memory in snap.memories:
        if memory.slug not in named:
            yield Finding(
                INDEX_NAME,
                1,
                f"{memory.slug}: no line in the index, so no agent will "
                "see it — `kura remember` it again or add the line by hand",
            )
    own = Counter(line.slugs[0] for line in snap.index.entries())
    for number, line in enumerate(snap.index.lines, start=1):
        for slug in line.slugs:
            if slug not in slugs:
                yield Finding(
                    INDEX_NAME,
                    number,
                    f"names {slug!r}, which is not a memory in this store — fix the link or remove the line",
                )
        if line.kind == "entry" and own[line.slugs[0]] > 1:
            yield Finding(
                INDEX_NAME, number, f"{line.slugs[0]}: has {own[line.slugs[0]]} lines of its own — keep one"
            )


def check_links(snap: Snapshot) -> Iterator[Finding]:
    slugs = {m.slug for m in snap.memories}
    for memory in snap.memories:
        for target in memory.note.links:
            if target not in slugs:
                line = _line_of(memory, f"[[{target}")
                yield Finding(
                    f"{snap.store.name}/{memory.slug}.md",
                    line,
                    f"[[{target}]] names no memory — fix the slug or write that memory",
                )


CHECKS: dict[str, Callable[[Snapshot], Iterator[Finding]]] = {
    "files": check_files,
    "index": check_index,
    "links": check_links,
}


def diagnose(store: Store) -> Report:
    """Run every check over one store."""
    memories = store.list()
    snap = Snapshot(store, memories, store.index())
    findings = tuple((name, f) for name, check in CHECKS.items() for f in check(snap))
    counts = dict(sorted(Counter(m.type or "untyped" for m in memories).items()))
    return Report(store.name, len(memories), counts, findings, heartbeat(store.root))


def heartbeat(root: Path, *, fresh_within: float = 15.0) -> dict[str, Any] | None:
    """The last beat of a ``kura watch`` on this store, if that watcher is alive: its
    process exists and it beat within ``fresh_within`` seconds."""
    try:
        data = json.loads((root / STATE_DIR / "watch.json").read_text(encoding="utf-8"))
        recent = time.time() - float(data["beat"]) <= fresh_within
        os.kill(int(data["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return data if recent and isinstance(data, dict) else None


def _line_of(memory: Memory, needle: str) -> int:
    text = memory.note.raw or ""
    offset = text.find(needle)
    return text[:offset].count("\n") + 1 if offset >= 0 else 1
