"""Which memories a listing shows: the current ones, and when asked for all, the retired too.

``kura forget`` and decay archive a memory, and a correction supersedes one; either way the
file stays (``kura recall --all`` finds it, ``kura why`` explains it) and its line leaves
the index. A listing that showed them beside the current ones would make a forgotten fact
look live, so ``kura list``, HTTP ``GET /memories`` and MCP ``kura_list`` leave them out
unless asked for all, and then mark each with why it is not current. One function for the
three edges, so they cannot disagree; ``retirement`` also gives doctor its words.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kura.store.store import Store

State = Literal["current", "archived", "superseded"]
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, slots=True)
class Retired:
    """Why a memory is off the index, as its frontmatter says (``archived``: the date, ""
    when the file gives none; a memory may be both superseded and archived)."""

    archived: str | None = None
    reason: str = ""
    superseded_by: str = ""

    @property
    def state(self) -> State:
        return "superseded" if self.superseded_by else "archived"

    @property
    def key(self) -> str:
        """The frontmatter key that retires it."""
        return "superseded_by" if self.superseded_by else "archived"

    @property
    def mark(self) -> str:
        """``[superseded by X]``, ``[archived 2026-12-01: reason]``, or both."""
        marks = [f"superseded by {self.superseded_by}"] if self.superseded_by else []
        if self.archived is not None:
            marks.append(
                " ".join(filter(None, ("archived", self.archived)))
                + (f": {self.reason}" if self.reason else "")
            )
        return f"[{'; '.join(marks)}]"

    def said(self) -> str:
        """``superseded by X`` or ``archived on 2026-12-01 (reason)``, for a sentence."""
        if self.superseded_by:
            return f"superseded by {self.superseded_by}"
        return (
            "archived"
            + (f" on {self.archived}" if self.archived else "")
            + (f" ({self.reason})" if self.reason else "")
        )


def retirement(meta: Mapping[str, Any]) -> Retired | None:
    """Why a memory with this frontmatter (or its catalog summary) is not current; None
    when it is."""
    archived, superseded = meta.get("archived"), _text(meta.get("superseded_by"))
    if not archived and not superseded:
        return None
    return Retired(
        archived=_when(archived) if archived else None,
        reason=_text(meta.get("archived_reason")) if archived else "",
        superseded_by=superseded,
    )


@dataclass(frozen=True, slots=True)
class Listed:
    slug: str
    name: str
    description: str
    type: str | None
    retired: Retired | None = None

    @property
    def state(self) -> State:
        return self.retired.state if self.retired else "current"

    def to_dict(self) -> dict[str, Any]:
        gone = self.retired or Retired()
        return {"slug": self.slug, "type": self.type, "name": self.name, "description": self.description,
                "state": self.state, "archived": gone.archived, "archived_reason": gone.reason or None,
                "superseded_by": gone.superseded_by or None}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Listing:
    memories: tuple[Listed, ...]
    hidden: int  # retired memories left out


def listing(store: Store, *, type: str | None = None, everything: bool = False) -> Listing:
    """The store's memories (of ``type``), sorted by slug: the current ones, or every one."""
    rows = [Listed(m.slug, m.name, m.description, m.type, retirement(m.note.meta)) for m in store.list(type)]
    shown = tuple(r for r in rows if everything or r.retired is None)
    return Listing(shown, len(rows) - len(shown))


def _when(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    found = _DATE.match(_text(value))
    return found.group(0) if found else ""


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if value not in (None, "", []) and not isinstance(value, bool) else ""
