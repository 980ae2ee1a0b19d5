"""A memory asked for by what its links call it.

People who also open their store in Obsidian link by title: ``[[Deploy Script]]``. Doctor,
the graph and recall's walk resolve such a link (``kura.files.link_names``), so an agent that
reads a memory and follows one of its links must be able to ask for the memory by the same
name, and must be told which memory each link reaches. A slug always wins; a title or alias
is looked up in the catalog only when no file has that slug, so a store that links by slug
pays nothing for it, and a name two current memories share reaches neither (doctor's
``titles`` check names both).

A lookup costs what the name needs, not the store's every name: when the catalog is current
(``catalog.naming_rows``: four columns, no file read) only the memories whose slug, title or
alias folds to the name asked are made into ``Names`` (the only ones ``Names.resolve`` reads
for it), so a read by title at 20,000 memories no longer builds 20,000 entries and their
names. A catalog that is not current is brought up to date first, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from kura.errors import KuraError, NotFound
from kura.files.link_names import Names, fold, names
from kura.files.memory import Memory
from kura.store import catalog
from kura.store.store import Store


class Resolver:
    """One store's link targets as slugs: the store's titles and aliases are read from the
    catalog once, when a target first names no file."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._names: Names | None = None  # every memory's, when the catalog was not current
        self._rows: list[tuple[Any, ...]] | None = None  # else the catalog's rows (``Naming``) ...
        self._texts: list[str] = []  # ... and each one's slug, title and aliases, casefolded

    def slug(self, target: str) -> str | None:
        """The memory ``target`` reaches (by slug, else by title or alias), or None."""
        if self.exists(target):
            return target
        found = self.by_name(target)
        return found if found is not None and self.exists(found) else None

    def by_name(self, name: str) -> str | None:
        """The slug whose memory has ``name`` as its title or an alias (None: none, or several)."""
        if self._names is None and self._rows is None:
            self._rows = catalog.naming_rows(self.store)
            if self._rows is None:
                self._names = names(catalog.entries(self.store).values())
            else:
                self._texts = _texts(self._rows)
        if self._names is not None:
            return self._names.resolve(name)
        return names(self._answering(fold(name))).resolve(name)

    def _answering(self, key: str) -> list[catalog.Naming]:
        """The rows whose slug, title or an alias folds to ``key``: all ``Names.resolve``
        reads to resolve a name folded so. Such a row's text holds the key's longest word
        (folding casefolds, and changes no space into a letter), which rules out nearly
        every row at the cost of a substring search."""
        word = max(key.split(), key=len, default="")
        rows = zip(self._rows or [], self._texts, strict=True)
        held = [catalog.Naming._make(row) for row, text in rows if word in text]
        return [row for row in held if key in {_slug(row.slug), _folded(row.name), *_aliases(row)}]

    def exists(self, slug: str) -> bool:
        try:
            return self.store.resolve(slug).is_file()
        except KuraError:  # not a memory of this store (or not a name at all)
            return False


def _texts(rows: list[tuple[Any, ...]]) -> list[str]:
    """Each row's slug, title and aliases, casefolded, in one string."""
    try:
        return list(map(str.casefold, map("\n".join, map(itemgetter(0, 1, 2), rows))))
    except TypeError:  # a row kura did not write (a number for a title): each on its own
        return ["\n".join(v if isinstance(v, str) else "" for v in row[:3]).casefold() for row in rows]


def _folded(name: object) -> str:
    return fold(name) if isinstance(name, str) else ""  # a row kura did not write: no name


def _slug(slug: object) -> str:
    return slug.casefold() if isinstance(slug, str) else ""


def _aliases(row: catalog.Naming) -> list[str]:
    return list(map(_folded, row.aliases)) if isinstance(row.aliases_text, str) else []


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
