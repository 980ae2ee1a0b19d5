"""Two current memories answering to one title or alias.

A ``[[Deploy Script]]`` link resolves by title or alias when no slug matches
(``kura.files.link_names``), and to nothing when two memories answer to that name: kura
will not guess which one was meant. So doctor names both files. It is a warning when a link
uses the name (that link leads nowhere now), and a note when none does (a link written
tomorrow would).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from kura.files.finding import Finding
from kura.files.link_names import Names, fold
from kura.store.catalog import Entry


def ambiguous_titles(
    store: str, entries: Mapping[str, Entry], names: Names, links: Mapping[str, Sequence[str]]
) -> Iterator[Finding]:
    """One finding per title or alias more than one current memory answers to."""
    used = {fold(target) for targets in links.values() for target in targets if target not in names.slugs}
    for key, slugs in names.ambiguous():
        said = _as_written(key, [entries[s] for s in slugs])
        paths = ", ".join(f"{store}/{entries[s].rel}" for s in slugs)
        linked = key in used
        yield Finding(
            f"{store}/{entries[slugs[0]].rel}",
            1,
            f'{len(slugs)} current memories answer to the title or alias "{said}" ({paths}): '
            + (f"[[{said}]] links reach none of them" if linked else f"a [[{said}]] link would reach none")
            + " — give each a title of its own, or move the alias to one of them",
            "warning" if linked else "note",
        )


def ambiguous_link(names: Names, entries: Mapping[str, Entry], target: str) -> str:
    """Why a link that named no memory did not: "" unless current memories share its name."""
    slugs = names.current.get(fold(target), ())
    if len(slugs) < 2:
        return ""
    return ", ".join(entries[s].rel for s in slugs if s in entries)


def _as_written(key: str, entries: Sequence[Entry]) -> str:
    """The name as a memory's frontmatter spells it (the first that does)."""
    for entry in entries:
        for name in (entry.name, *entry.aliases):
            if fold(name) == key:
                return " ".join(name.split())
    return key
