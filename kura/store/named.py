"""A memory asked for by what its links call it.

People who also open their store in Obsidian link by title: ``[[Deploy Script]]``. Doctor,
the graph and recall's walk resolve such a link (``kura.files.link_names``), so an agent that
reads a memory and follows one of its links must be able to ask for the memory by the same
name, and must be told which memory each link reaches. A slug always wins; a title or alias
is looked up in the catalog only when no file has that slug, so a store that links by slug
pays nothing for it, and a name two current memories share reaches neither (doctor's
``titles`` check names both).
"""

from __future__ import annotations

from collections.abc import Sequence

from kura.errors import NotFound
from kura.files.link_names import Names, names
from kura.files.memory import Memory
from kura.store import catalog
from kura.store.store import Store


def read_named(store: Store, name: str) -> tuple[bytes, Memory]:
    """``store.read`` of the memory whose slug is ``name``, else whose title or alias it is;
    ``NotFound`` (the slug's own message) when neither names one."""
    try:
        return store.read(name)
    except NotFound as missing:
        slug = _names(store).resolve(name)
        if slug is None or slug == name:
            raise missing from None
        return store.read(slug)


def linked(store: Store, targets: Sequence[str]) -> list[str]:
    """Each ``[[link]]`` target as the slug it reaches, or as written when it reaches none;
    each once, in order."""
    known: list[Names] = []
    found: list[str] = []
    for target in targets:
        if not _exists(store, target):
            known = known or [_names(store)]
            target = known[0].resolve(target) or target
        if target not in found:
            found.append(target)
    return found


def _names(store: Store) -> Names:
    return names(catalog.entries(store).values())


def _exists(store: Store, slug: str) -> bool:
    try:
        return store.resolve(slug).is_file()
    except NotFound:
        return False
