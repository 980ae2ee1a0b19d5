"""Threads: an agent's per-thread notebook and keyed items, as markdown files in the store.

A thread is the folder ``threads/<id>/`` of a store (``kura.files.slugs`` keeps that folder
out of the memories). Its files are its notebook, and each is an item an agent addresses
by key (``kura.threads.items``); its ``_observations.md`` is the thread's own observation
log (``kura.threads.observer``). Scope is a value, not a promise: a ``Thread`` reaches only
its own folder, and the servers hand an agent only the thread they were bound to.
"""

from __future__ import annotations

from kura.threads.items import NAMESPACES, Item, Thread, Written
from kura.threads.names import new_key, thread_id

__all__ = ["NAMESPACES", "Item", "Thread", "Written", "new_key", "thread_id"]
