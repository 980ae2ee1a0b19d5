"""Recall as of a date: what the store asserted on that day, not what it asserts today.

A store keeps its history in its files: a revision leaves the old memory on disk with
``superseded_by`` and ``valid_until``, a forgotten one with ``archived``, and a memory's
birth is its frontmatter ``created`` (else, where the store is in git, the day git first
committed the file). So the store as it stood on ``day`` is read from today's files:

- a memory created after ``day`` did not exist yet: left out (one with no date of birth at
  all counts as having existed);
- a memory whose ``valid_until`` is on or before ``day`` had been replaced: left out;
  one replaced later was current then, and is answered as current — its ``superseded_by``
  and ``valid_until`` are not yet written;
- a memory archived after ``day`` was live then, and is answered so; one archived on or
  before it is archived then as now;
- witnesses dated after ``day`` had not been heard yet: its confidence is judged without them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from kura.errors import KuraError
from kura.files import witness as wt
from kura.map.age import added_days
from kura.store.store import Store

_LATER_SUPERSEDED = ("superseded_by", "valid_until")
_LATER_ARCHIVED = ("archived", "archived_reason")


class AsOf:
    """The store ``store`` as it stood on ``day`` (git's dates read once, when first needed)."""

    def __init__(self, store: Store, day: dt.date) -> None:
        self.store, self.day = store, day
        self._added: dict[str, dt.date] | None = None
        self._known: dict[str, bool] = {}

    def existed(self, slug: str) -> bool:
        """Whether ``slug`` was a memory of the store on ``day``, not yet replaced."""
        if slug not in self._known:
            self._known[slug] = self._existed(slug)
        return self._known[slug]

    def meta(self, meta: Mapping[str, Any]) -> dict[str, Any]:
        """``meta`` as it read on ``day``: a later revision, archive and later witnesses unwritten."""
        then = dict(meta)
        until = wt.parse_when(then.get("valid_until"))
        if until is not None and until > self.day:
            for key in _LATER_SUPERSEDED:
                then.pop(key, None)
        archived = wt.parse_when(then.get("archived"))
        if archived is not None and archived > self.day:
            for key in _LATER_ARCHIVED:
                then.pop(key, None)
        witnesses = then.get("witnesses")
        if isinstance(witnesses, list):
            then["witnesses"] = [w for w in witnesses if not self._later(w)]
        return then

    def _later(self, witness: Any) -> bool:
        when = wt.parse_when(witness.get("when")) if isinstance(witness, Mapping) else None
        return when is not None and when > self.day

    def _existed(self, slug: str) -> bool:
        try:
            _, memory = self.store.read(slug)
            path = self.store.resolve(slug)
        except KuraError:
            return False
        meta = memory.note.meta
        until = wt.parse_when(meta.get("valid_until"))
        if until is not None and until <= self.day:
            return False
        born = self.born(meta, path)
        return born is None or born <= self.day

    def born(self, meta: Mapping[str, Any], path: Any) -> dt.date | None:
        """The memory's day of birth: its ``created``, else the day git first committed ``path``."""
        return wt.parse_when(meta.get("created")) or self._git_added(path)

    def _git_added(self, path: Any) -> dt.date | None:
        if self._added is None:
            self._added = added_days(self.store.root)
        try:
            rel = path.relative_to(self.store.root).as_posix()
        except ValueError:
            return None
        return self._added.get(rel)
