"""Which memory a ``[[link]]`` names: its slug, else its title or one of its aliases.

People who also open their store in Obsidian link the way Obsidian does: ``[[Deploy Script]]``
or ``[[Deploy Script|the script]]``, by the note's title, or by a name listed in its
frontmatter ``aliases`` (Obsidian's key; ``alias`` too). A slug still wins: a link resolves
to the memory whose slug it is — spelled in any case, as Obsidian and a case-insensitive disk
read it, so no other memory can take a slug's name by listing it as an alias — and only when
no slug matches to the one memory whose title (``name``) or alias it is, compared with case
and runs of spaces ignored. Two memories
answering to one title or alias are ambiguous: a link to that name resolves to neither (a
wrong neighbour is worse than none), and doctor names both files. Current memories answer
first; a title only a superseded or archived memory holds still reaches it, as a slug would.

Every reader that follows links (doctor's link graph, the graph page, recall's walk, the web
page of a memory) resolves them here, so they agree on where a link leads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

ALIAS_KEYS = ("aliases", "alias")
MAX_ALIASES = 64  # a memory is one fact: more names than this is not a list of its names
MAX_NAME = 200  # characters of a title or alias a link may name


class Named(Protocol):
    """What resolving needs of a memory (a catalog entry has it)."""

    @property
    def slug(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...
    @property
    def retired(self) -> bool: ...


def aliases_of(meta: Mapping[str, Any]) -> tuple[str, ...]:
    """The frontmatter's aliases: a list or a single string under ``aliases`` or ``alias``;
    anything else (a number, a mapping) is no name a person links by."""
    found: list[str] = []
    for key in ALIAS_KEYS:
        value = meta.get(key)
        values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        found += [" ".join(v.split()) for v in values[:MAX_ALIASES] if isinstance(v, str)]
    return tuple(dict.fromkeys(a for a in found if a and len(a) <= MAX_NAME))


def fold(name: str) -> str:
    """A title as a link matches it: case and runs of spaces ignored."""
    return " ".join(name.split()).casefold()


@dataclass(frozen=True, slots=True)
class Names:
    """The store's slugs and who answers to each title or alias."""

    slugs: frozenset[str]
    current: Mapping[str, tuple[str, ...]]  # folded title or alias -> current memories' slugs
    retired: Mapping[str, tuple[str, ...]]  # the same, for superseded and archived ones
    spelled: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # casefolded -> slugs not so spelled

    def resolve(self, target: str) -> str | None:
        """The slug ``target`` names, or None (no such memory, or an ambiguous name)."""
        if target in self.slugs:
            return target
        key = fold(target)
        slugs = (key,) * (key in self.slugs) + self.spelled.get(key, ())
        found = slugs or self.current.get(key) or self.retired.get(key) or ()
        return found[0] if len(found) == 1 else None

    def linked(self, targets: Sequence[str]) -> tuple[str, ...]:
        """Each target as the slug it names, or as written when it names none; each once."""
        return tuple(dict.fromkeys(self.resolve(t) or t for t in targets))

    def ambiguous(self) -> list[tuple[str, tuple[str, ...]]]:
        """Each title or alias more than one current memory answers to, with their slugs."""
        return sorted((key, slugs) for key, slugs in self.current.items() if len(slugs) > 1)


def names(memories: Iterable[Named]) -> Names:
    """The ``Names`` of ``memories``."""
    slugs: set[str] = set()
    by_name: dict[bool, dict[str, list[str]]] = {False: {}, True: {}}
    for memory in memories:
        slugs.add(memory.slug)
        answers = {fold(n) for n in (memory.name, *memory.aliases) if n and len(n) <= MAX_NAME}
        for key in answers - {""}:
            by_name[memory.retired].setdefault(key, []).append(memory.slug)
    spelled: dict[str, list[str]] = {}
    for slug in slugs:  # a slug is one word: casefolded is folded (most are so spelled already)
        if (key := slug.casefold()) != slug:
            spelled.setdefault(key, []).append(slug)
    return Names(
        frozenset(slugs),
        {k: tuple(sorted(v)) for k, v in by_name[False].items()},
        {k: tuple(sorted(v)) for k, v in by_name[True].items()},
        {k: tuple(sorted(v)) for k, v in spelled.items()},
    )


def linked(memories: Mapping[str, Named], links: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """``slug -> its links`` with every link resolved (``Names.linked``)."""
    found = names(memories.values())
    return {slug: found.linked(targets) for slug, targets in links.items()}
