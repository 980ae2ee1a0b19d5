"""What the web pages read from a big store: a page of rows, the links into one memory, the
descriptions of the few memories a page names.

At 10,000 memories a page that lists everything (1.5 MB of HTML) or parses every file to
find the few it shows (the memories that link to one; the descriptions of three recalled
memories) takes seconds. So the pages show a page of rows at a time (``Paged``), and read
what they show from the catalog (``kura.store.catalog``: a stat of each file and one
SQLite read, no file parsed unless it changed) or from the few files they name.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from kura.errors import InvalidRequest, KuraError
from kura.store.catalog import entries
from kura.store.store import Store

T = TypeVar("T")
PAGE = 200  # rows a page shows (memories, findings)
_MAX_PAGE_DIGITS = 6


@dataclass(frozen=True, slots=True)
class Paged(Generic[T]):
    """One page of ``total`` rows: ``rows`` are the ``number``-th ``size`` of them (1-based)."""

    rows: tuple[T, ...]
    number: int
    pages: int
    total: int
    size: int = PAGE

    @property
    def first(self) -> int:
        """The 1-based position of the page's first row (0 when there are none)."""
        return (self.number - 1) * self.size + 1 if self.rows else 0

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1 if self.rows else 0


def page_number(raw: str | None) -> int:
    """``?page=`` as a number from 1; a page past the last is answered as the last."""
    if raw in (None, ""):
        return 1
    assert raw is not None
    if not (raw.isascii() and raw.isdigit() and len(raw) <= _MAX_PAGE_DIGITS) or int(raw) < 1:
        raise InvalidRequest("page must be a whole number from 1")
    return int(raw)


def paged(rows: Sequence[T], number: int, size: int = PAGE) -> Paged[T]:
    """The ``number``-th page of ``rows`` (the last one when ``number`` is past it)."""
    pages = max(1, math.ceil(len(rows) / size))
    number = min(number, pages)
    start = (number - 1) * size
    return Paged(tuple(rows[start : start + size]), number, pages, len(rows), size)


def links_into(store: Store, slug: str) -> tuple[list[str], set[str]]:
    """(the memories whose ``[[links]]`` name ``slug``, sorted; every memory's slug), from
    the catalog: no file is read unless it changed since the last scan."""
    catalog = entries(store)
    into = sorted(other for other, entry in catalog.items() if slug in entry.links)
    return into, set(catalog)


def descriptions(store: Store, slugs: Iterable[str]) -> dict[str, str]:
    """Each named memory's description, read from its own file ("" when it cannot be read)."""
    found: dict[str, str] = {}
    for slug in dict.fromkeys(slugs):
        try:
            found[slug] = store.show(slug).description or ""
        except KuraError:
            found[slug] = ""
    return found
