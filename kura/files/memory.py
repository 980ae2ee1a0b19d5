"""One memory as read from disk, and what a write did: plain values the store hands out."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kura.errors import StoreError
from kura.files import memory_file as nt
from kura.files import memory_index as ix
from kura.request import REMEMBER


@dataclass(frozen=True, slots=True)
class Memory:
    """One memory as read from disk."""

    slug: str
    path: Path
    note: nt.MemoryFile

    @property
    def name(self) -> str:
        return self.note.name

    @property
    def description(self) -> str:
        return self.note.description

    @property
    def type(self) -> str | None:
        return self.note.type

    @property
    def findings(self) -> tuple[nt.Finding, ...]:
        return self.note.findings

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "path": str(self.path),
            "name": self.name,
            "description": self.description,
            "type": self.type,
            "meta": json.loads(json.dumps(self.note.meta, default=str)),
            "body": self.note.body,
            "links": list(self.note.links),
            "findings": [str(f) for f in self.findings],
        }


@dataclass(kw_only=True, frozen=True, slots=True)
class WriteResult:
    slug: str
    path: Path
    created: bool
    changed: bool
    index_changed: bool = False
    restored: tuple[str, ...] = ()  # memories whose index lines an editor's stale save dropped, put back
    body_kept: bool = False  # a body someone wrote, kept under a description that changed
    revived: str = ""  # it was archived (forgotten) on this day and is current again

    @property
    def did_work(self) -> bool:
        return self.created or self.changed or self.index_changed


def remembered(
    old: nt.MemoryFile | None,
    slug: str,
    description: str,
    body: str | None,
    *,
    type: str | None,
    title: str | None,
    amend: Callable[[nt.MemoryFile], nt.MemoryFile] | None = None,
) -> nt.MemoryFile:
    """What ``kura remember`` makes of a memory (``old``: None for a new one): its
    description, title, type and body as given, the rest as it was; ``old`` itself when
    nothing changed, and ``updated`` set when something did."""
    if old is None:
        name = title or ix.title_for("", description, slug)
        meta: dict[str, Any] = {"name": name, "description": description, "type": type or REMEMBER.NEW_TYPE,
                                "created": dt.date.today()}  # fmt: skip
        note = nt.new_note(meta, body if body is not None else description)
    else:
        note = old.with_meta(description=description)
        if not title and str(old.meta.get("name") or "") == ix.title_for("", old.description, slug):
            title = ix.title_for("", description, slug)  # kura made it from the description: it follows
        note = note.with_meta(name=title) if title else note
        note = note.with_type(type) if type else note
        if body is None and derived(old):
            body = old.body.replace(old.body.strip(), description, 1)  # its blank lines kept
        note = note.with_body(body) if body is not None else note
    note = amend(note) if amend is not None else note
    if old is None:
        return note
    text = nt.render(note)
    if text == old.raw:
        return old
    return note.with_meta(updated=dt.date.today())


def current(
    amend: Callable[[nt.MemoryFile], nt.MemoryFile] | None,
) -> Callable[[nt.MemoryFile], nt.MemoryFile]:
    """``amend`` (if any), then current again: a memory remembered again is stated anew, so
    the write undoes a forget (``archived``), in the same locked write."""

    def made(note: nt.MemoryFile) -> nt.MemoryFile:
        note = amend(note) if amend is not None else note
        return note.with_meta(archived=None, archived_reason=None)

    return made


def not_superseded(old: nt.MemoryFile, where: str, file: str) -> None:
    """Refuse to write over a memory a correction replaced: it would bring the replaced fact
    back beside its successor."""
    newer = " ".join(str(old.meta.get("superseded_by") or "").split())
    if newer:
        raise StoreError(
            f"{where}: superseded by {newer}; write to {newer} instead, or take `superseded_by` "
            f"out of {file} to make it current again — nothing was written"
        )


def derived(note: nt.MemoryFile) -> bool:
    """Whether the note's body is the one kura made from its description (``remember`` with
    no body writes the description as the body): the body follows a new description then.
    Recognised by its text alone — the description, surrounding whitespace aside — so no
    marker is written into a person's file, and a body anyone changed by a single character
    is theirs and is kept."""
    return bool(note.description) and note.body.strip() == note.description.strip()


def body_kept(old: nt.MemoryFile | None, description: str, body: str | None) -> bool:
    """Whether ``remember`` keeps a body someone wrote under a description it changes: worth
    saying, since the body may still say what the old description said."""
    if old is None or body is not None or not old.body.strip() or derived(old):
        return False
    return " ".join(old.description.split()) != description


def own_line(
    index: ix.Index, *, slug: str, note: nt.MemoryFile, title: str | None, was: nt.MemoryFile | None = None
) -> ix.Index:
    """The index with the memory's own line set from ``note``. ``was``: the memory before this
    write — when the line still shows the title kura chose for it then (its name, or, for a
    name too long for the index, its old description), the line's title is chosen anew, so
    it follows a new description (a title a person gave the line stays)."""
    line = index.line_for(slug)
    if not title and was is not None and line is not None:
        made = ix.title_for(was.name, was.description, slug)
        now = ix.title_for(note.name, note.description, slug)
        if line.title in (was.name, made) and now != line.title:
            title = now
    return ix.upsert(
        index, slug, ix.own_line(index, slug, name=note.name, description=note.description, title=title)
    )
