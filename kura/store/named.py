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

from kura.errors import KuraError, NotFound
from kura.files.link_names import Names, names
from kura.files.memory import Memory
from kura.store import catalog
from kura.store.store import Store


class Resolver:
    """One store's link targets as slugs: the store's titles and aliases are read from the
    catalog once, when a target first names no file."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._names: Names | None = None

    def slug(self, target: str) -> str | None:
        """The memory ``target`` reaches (by slug, else by title or alias), or None."""
        if self.exists(target):
            return target
        found = self.by_name(target)
        return found if found is not None and self.exists(found) else None

    def by_name(self, name: str) -> str | None:
        """The slug whose memory has ``name`` as its title or an alias (None: none, or several)."""
        if self._names is None:
            self._names = names(catalog.entries(self.store).values())
        return self._names.resolve(name)

    def exists(self, slug: str) -> bool:
        try:
            return self.store.resolve(slug).is_file()
        except KuraError:  # not a memory of this store (or not a name at all)
            return False


def read_named(store: Store, name: str) -> tuple[bytes, Memory]:
    """``store.read`` of the memory whose slug is ``name``, else whose title or alias it is;
    ``NotFound`` (the slug's own message) when neither names one."""
    try:
        return store.read(name)
    except NotFound as missing:
        slug = Resolver(store).by_name(name)
        if slug is None or slug == name:
            raise missing from None
        return store.read(slug)


def linked(store: Store, targets: Sequence[str]) -> list[str]:
    """Each ``[[link]]`` target as the slug it reaches, or as written when it reaches none;
    each once, in order."""
    resolver = Resolver(store)
    return list(dict.fromkeys(resolver.slug(target) or target for target in targets))
