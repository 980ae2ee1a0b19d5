"""Recall's walk along ``[[links]]``: from each pick, the memories it links to, ``hops`` steps
out.

A link names a memory by its slug, else by its title or an alias (``kura.files.link_names``:
``[[Deploy Script]]``, ``[[Deploy Script|the script]]``). The store's titles come from the
catalog, read only when a link names no slug, so a store that links by slug pays nothing
more for it.
"""

from __future__ import annotations

from kura.errors import KuraError
from kura.files.link_names import Names, names
from kura.store import catalog
from kura.store.store import Store


def walk(store: Store, start: list[str], hops: int) -> list[str]:
    """The memories reached from ``start`` in up to ``hops`` steps, nearest first, each once
    (none of ``start``)."""
    seen = set(start)
    frontier = list(start)
    walked: list[str] = []
    known: list[Names] = []  # the store's names, once a link needs them
    for _ in range(max(hops, 0)):
        reached: list[str] = []
        for slug in frontier:
            try:
                links = store.show(slug).note.links
            except KuraError:  # a memory gone since the search: doctor's business, not recall's
                continue
            for target in links:
                if not _exists(store, target):
                    known = known or [names(catalog.entries(store).values())]
                    target = known[0].resolve(target) or ""
                if target and target not in seen and _exists(store, target):
                    seen.add(target)
                    reached.append(target)
        walked.extend(reached)
        frontier = reached
    return walked


def _exists(store: Store, slug: str) -> bool:
    try:
        return store.resolve(slug).is_file()
    except KuraError:  # not a memory of this store (or not a name at all)
        return False
