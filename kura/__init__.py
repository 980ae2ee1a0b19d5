"""kura: a filesystem-native markdown memory for AI agents.

The public Python API. A store is a folder of one-fact markdown files plus ``MEMORY.md``::

    import kura

    store = kura.open_store("sample-store")
    store.remember("deploy-day", "we deploy on Tuesdays, never Fridays", type="project")
    store.show("deploy-day").description
    [m.slug for m in store.list(type="feedback")]

Configured stores and modes: ``kura.load_config().open("maker")``.
"""

from __future__ import annotations

from pathlib import Path

from kura.config import Config, load_config
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
from kura.store import Memory, Store, WriteResult, init_store

__version__ = "0.1.0"

__all__ = [
    "Config",
    "ConfigError",
    "KuraError",
    "Memory",
    "ModelUnavailable",
    "NotFound",
    "NoteParseError",
    "PolicyRefused",
    "Store",
    "StoreError",
    "UnknownStore",
    "WriteResult",
    "init_store",
    "load_config",
    "open_store",
]


def open_store(path: str | Path, *, write_policy: str = "direct-allowed") -> Store:
    """Open the store in ``path`` (a folder holding MEMORY.md and memory files)."""
    return Store(path, write_policy=write_policy)
