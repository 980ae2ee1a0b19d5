"""kura: a filesystem-native markdown memory for AI agents.

The public Python API. A store is a folder of one-fact markdown files plus ``MEMORY.md``::

    import kura

    store = kura.open_store("sample-store")
    store.remember("deploy-day", "we deploy on Tuesdays, never Fridays", type="project")
    store.show("deploy-day").description
    [m.slug for m in store.list(type="feedback")]
    kura.Thread.of(store, "support-4711").write("work:current-project", "the A2A handshake")
    kura.edit(store, kura.EditRequest("deploy-day", "append", text="Not on holidays."))
    [v.who for v in kura.history(store, "deploy-day").versions]

Configured stores and modes: ``kura.load_config().open("main")``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura.errors import (
    ConfigError,
    KuraError,
    ModelUnavailable,
    NoteParseError,
    NotFound,
    PolicyRefused,
    StoreError,
    UnknownStore,
)
from kura.version import __version__ as __version__

if TYPE_CHECKING:
    from kura.config import Config, load_config
    from kura.life.edit import edit
    from kura.life.history import history
    from kura.recall.context import Context, context
    from kura.request import EditRequest
    from kura.store.store import Memory, Store, WriteResult, init_store
    from kura.threads import Thread


# Loaded on first use, so `import kura.<anything>` stays cheap for shell hooks.
_LAZY = {
    "Config": "kura.config",
    "Context": "kura.recall.context",
    "EditRequest": "kura.request",
    "context": "kura.recall.context",
    "edit": "kura.life.edit",
    "history": "kura.life.history",
    "load_config": "kura.config",
    "Memory": "kura.store.store",
    "Store": "kura.store.store",
    "Thread": "kura.threads",
    "WriteResult": "kura.store.store",
    "init_store": "kura.store.store",
}

__all__ = [
    "Config",
    "ConfigError",
    "Context",
    "EditRequest",
    "KuraError",
    "Memory",
    "ModelUnavailable",
    "NotFound",
    "NoteParseError",
    "PolicyRefused",
    "Store",
    "StoreError",
    "Thread",
    "UnknownStore",
    "WriteResult",
    "context",
    "edit",
    "history",
    "init_store",
    "load_config",
    "open_store",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'kura' has no attribute {name!r}")


def open_store(path: str | Path, *, write_policy: str = "direct-allowed") -> Store:
    """Open the store in ``path`` (a folder holding MEMORY.md and memory files)."""
    from kura.store.store import Store

    return Store(path, write_policy=write_policy)
