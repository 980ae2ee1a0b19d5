"""Recall over one thread's items (Talon's memory retriever): the same search, the same picking.

A thread's items are markdown files in ``threads/<id>/`` (``kura.threads``), written the
way memories are, so the thread's folder is searched as a store of its own: the same
``SearchIndex`` (words and vectors, the same fusion), the same floor, the same answer with
its context framed as information. Nothing is copied: the thread's index is derived state in
the thread's own ``.kura/`` folder (which ``Thread`` never lists as an item, and the store's
``.gitignore`` line ``.kura/`` covers), rebuilt from the items like any index. A store's
memories never answer a thread's question and a thread's items never answer the store's
(``kura.files.slugs`` keeps ``threads/`` out of the memories).

The thread's folder is its store's root for reading, so a symlink that leads out of the
thread is refused like one out of a store; a thread folder reached through a link is not
searched at all.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kura.errors import NotFound
from kura.recall.recall import Pick, Recall, recall
from kura.store.store import Store
from kura.threads import Thread
from kura.threads.items import Unsafe
from kura.threads.names import key_of


def thread_recall(store: Store, thread: str, question: str, **options: Any) -> Recall:
    """What thread ``thread`` of ``store`` holds about ``question``: ``recall`` over its items,
    each pick named by its key (``options``: ``recall``'s, links not walked)."""
    chosen = Thread.of(store, thread)
    where = f"thread '{chosen.id}' of store '{store.name}'"
    if not chosen.exists():
        raise NotFound(f"{where} has no items; write one with kura thread {chosen.id} write KEY VALUE")
    if not chosen.reachable():
        raise Unsafe(f"{where}: its folder is reached through a link; not read — make it a real folder")
    items = Store(chosen.root, name=f"{store.name}/{chosen.rel}")
    found = recall(items, question, **{**options, "hops": 0})
    picked = tuple(dataclasses.replace(p, slug=key_of(f"{p.slug}.md") or p.slug) for p in found.picked)
    explain = [{**row, "slug": key_of(f"{row['slug']}.md") or row["slug"]} for row in found.explain]
    return dataclasses.replace(found, picked=picked, explain=explain, standing={})


__all__ = ["Pick", "thread_recall"]
