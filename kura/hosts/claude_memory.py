"""Claude Code's own auto memory, brought under the project's store.

Coordination stub: ``kura setup claude-code`` (wt-setup) implements this module; the
capture hook (wt-capture) calls ``absorb`` at every firing.
"""

from __future__ import annotations

from pathlib import Path

from kura.store.store import Store


def absorb(store: Store) -> list[str]:
    """File what Claude wrote to its auto memory since the last call into ``store``; the
    slugs written. (Stub until implemented: nothing is absorbed.)"""
    del store
    return []


def inbox(store_root: Path) -> Path:
    """The folder Claude Code's ``autoMemoryDirectory`` points at for this store."""
    return store_root / ".kura" / "claude-memory"
