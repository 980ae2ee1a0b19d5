"""Recall's walk along ``[[links]]``: from each pick, the memories it links to, ``hops`` steps
out.

A link names a memory by its slug, else by its title or an alias (``kura.files.link_names``:
``[[Deploy Script]]``, ``[[Deploy Script|the script]]``). The store's titles come from the
catalog, read only when a link names no slug, so a store that links by slug pays nothing
more for it.
"""

from __future__ import annotations

from kura.errors import KuraError
from kura.store.named import Resolver
from kura.store.store import Store


def walk(store: Store, start: list[str], hops: int) -> list[str]:
    """The memories reached from ``start`` in up to ``hops`` steps, nearest first, each once
    (none of ``start``)."""
    seen = set(start)
    frontier = list(start)
    walked: list[str] = []
    resolver = Resolver(store)  # the store's names, once a link needs them
    for _ in range(max(hops, 0)):
        reached: list[str] = []
        for slug in frontier:
            try:
                links = store.show(slug).note.links
            except KuraError:  # a memory gone since the search: doctor's business, not recall's
                continue
            for target in links:
                found = resolver.slug(target)
                if found is not None and found not in seen:
                    seen.add(found)
                    reached.append(found)
        walked.extend(reached)
        frontier = reached
    return walked
