"""Editing a memory in place: append, prepend, replace a phrase, replace a section, rename,
forget, purge — one request (``kura.request.EditRequest``) that the CLI, HTTP and MCP adapt.

An edit goes through the same door as ``kura remember``, so nothing an edit writes could not
have been written whole: the store's policy is checked first, the new words are refused
when they hold a secret or break a limit (``kura.store.write_checks``), the file is read
and written back under the store lock from the bytes as they are then (``Store.update``: an
editor's save meanwhile is edited, never overwritten), the index line follows a changed
description, a memory a correction replaced is refused as ``remember`` refuses it (write to
its successor), and a new claim that appears to revise another live memory is named. An
agent's edit over HTTP or MCP records a MANUAL witness, as its ``remember`` does: the words
are an agent's until the person or other evidence confirms them. A forget keeps the file
(``kura.life.lifecycle.archive``); a purge is ``kura forget --purge`` (``kura.life.purge``)
and asks for the slug again as its confirmation.

A rename is several locked steps, ordered so that a crash between any two loses nothing:
the file is copied to its new name byte for byte (git then sees a rename), the index line
is moved to name it where the old one stood, every ``[[old]]`` link and frontmatter pointer
in the store is rewritten, and only then is the old file removed — and only if nobody
changed it meanwhile.
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from kura.errors import KuraError, NotFound, PolicyRefused, StoreError
from kura.files import memory_file as nt
from kura.files import memory_index as ix
from kura.files.memory import derived, own_line
from kura.files.slugs import new_slug
from kura.files.witness import Witness
from kura.life import edit_text as et
from kura.life import lifecycle, usage
from kura.life import purge as pg
from kura.life.corrections import revision
from kura.life.edit_say import notes
from kura.request import EditRequest
from kura.store import catalog, write_checks
from kura.store.atomic import fsync_dir, locked
from kura.store.store import Memory, Store
from kura.text.secrets import find_secret, refuse_secrets

CONTENT = ("append", "prepend", "replace", "section")  # the ops that change a memory's words


@dataclass(frozen=True, slots=True)
class Edited:
    """What an edit did. ``slug`` is the memory's name after it (a rename's new one)."""

    store: str
    op: str
    slug: str
    changed: bool
    path: str = ""  # relative to the store; "" once purged
    was: str = ""  # a rename's old slug
    detail: str = ""  # where a phrase was replaced, whether a section was added, why it was forgotten
    index_changed: bool = False
    relinked: tuple[str, ...] = ()  # memories whose links or pointers now name the new slug
    revises: str = ""  # a live memory the new words appear to revise, left current
    revised_claim: str = ""
    purged: dict[str, Any] | None = None  # the closure removed (``kura.life.purge.Closure``)

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "op": self.op,
            "slug": self.slug,
            "changed": self.changed,
            "path": self.path,
            "was": self.was or None,
            "detail": self.detail,
            "index_changed": self.index_changed,
            "relinked": list(self.relinked),
            "revises": self.revises or None,
            "revised_claim": self.revised_claim or None,
            "purged": self.purged,
        }

    def said(self) -> dict[str, Any]:
        """``to_dict()`` with the notes the writer should read (``kura.life.edit_say``)."""
        done = self.to_dict()
        return {**done, "notes": notes(done)}


def edit(store: Store, request: EditRequest, *, origin: str = "", today: dt.date | None = None) -> Edited:
    """Make the change ``request`` asks for. ``origin``: "" for a person at the command line,
    else the surface an agent used (``HTTP``, ``MCP``), recorded with the change."""
    request.checked()
    today = today or dt.date.today()
    if request.op in CONTENT:
        return _content(store, request, origin, today)
    if request.op == "rename":
        return rename(store, request.slug, request.to)
    if request.op == "forget":
        return _forget(store, request, origin, today)
    return _purge(store, request.slug)


# -- the words -----------------------------------------------------------------------------


def _content(store: Store, request: EditRequest, origin: str, today: dt.date) -> Edited:
    where = f"{store.name}/{request.slug}"
    store.check_write()
    refuse_secrets(where, request.text, request.heading)  # before anything is read (``find`` is not written)
    write_checks.check_text(where, title="", description="", body=request.text)
    made: list[tuple[nt.MemoryFile, nt.MemoryFile, str]] = []

    def change(memory: Memory) -> nt.MemoryFile | None:  # may run again, on an editor's newer save
        made.clear()
        old = memory.note
        editable(old, f"{store.name}/{memory.slug}")
        description, body, detail = _words(old, request, f"{store.name}/{memory.slug}")
        if (description, body) == (old.description, old.body):
            return None
        write_checks.check_text(where, title="", description=description, body=body)
        _no_secret_left(where, description, body)
        note = old.with_body(body)
        if description != old.description:
            if not description.strip():
                raise StoreError(f"{where}: the description would be empty; nothing was changed")
            note = note.with_meta(description=description)
            if str(old.meta.get("name") or "") == ix.title_for("", old.description, memory.slug):
                note = note.with_meta(name=ix.title_for("", description, memory.slug))  # kura's title follows
        if origin:
            note = lifecycle.witnessed(note, _witness(request, origin, today), memory.slug)
        made.append((old, note.with_meta(updated=today), detail))
        return made[-1][1]

    result = store.update(request.slug, change)
    if not made:
        return Edited(store.name, request.op, result.slug, False, path=_rel(store, result.path))
    old, note, detail = made[-1]
    moved = False
    if note.description != old.description and not _retired(note):
        moved = store.edit_index(partial(own_line, slug=result.slug, note=note, title=None, was=old))
    found = _revises(store, result.slug, request, note)
    return Edited(
        store.name,
        request.op,
        result.slug,
        result.changed,
        path=_rel(store, result.path),
        detail=detail,
        index_changed=moved,
        revises=found[0],
        revised_claim=found[1],
    )


def _words(note: nt.MemoryFile, request: EditRequest, where: str) -> tuple[str, str, str]:
    """(description, body, detail) after the edit."""
    description, body = note.description, note.body
    if request.op == "append":
        return description, et.appended(body, request.text), ""
    if request.op == "prepend":
        return description, et.prepended(body, request.text), ""
    if request.op == "replace" and derived(note):  # kura wrote the body from the description: one text
        said, _, place = et.replaced(description, "", request.find, request.text, where=where)
        return said, body.replace(description.strip(), said.strip(), 1), f"replaced in {place} (and the body)"
    if request.op == "replace":
        description, body, place = et.replaced(description, body, request.find, request.text, where=where)
        return description, body, f"replaced in {place}"
    body, added = et.sectioned(body, request.heading, request.text, where=where)
    return description, body, "section added at the end" if added else "section replaced"


def editable(note: nt.MemoryFile, where: str) -> None:
    """Refuse to edit what ``remember`` would not write over: a memory a correction replaced
    (its successor holds) or a forgotten one (bring it back first). ``Store.update`` refuses
    a file kura would mangle."""
    newer = " ".join(str(note.meta.get("superseded_by") or "").split())
    if newer:
        raise StoreError(
            f"{where}: superseded by {newer}, so it is history; edit {newer} instead — nothing was changed"
        )
    if note.meta.get("archived"):
        raise StoreError(
            f"{where}: forgotten (archived {note.meta['archived']}); bring it back with kura remember "
            "first if it holds again — nothing was changed"
        )


def _no_secret_left(where: str, description: str, body: str) -> None:
    """Refuse an edit that would write a memory still holding a secret (one pasted by hand
    earlier), as ``remember`` refuses to write one; replacing the secret itself is how out."""
    kind = find_secret(description) or find_secret(body)
    if kind:
        raise PolicyRefused(
            f"{where}: the memory holds what looks like a secret ({kind}), so kura will not write it "
            "again; replace the secret first (op replace, find it, text: where it is kept) — nothing was "
            "changed"
        )


def _witness(request: EditRequest, origin: str, today: dt.date) -> Witness:
    quote = " ".join(request.text.split())
    return Witness(kind="MANUAL", when=today, source=f"{origin} edit {request.op}", quote=quote[:200])


def _revises(store: Store, slug: str, request: EditRequest, note: nt.MemoryFile) -> tuple[str, str]:
    """A live memory the edit's new words appear to revise (the correction rule ``remember``
    applies to a description), or ("", "")."""
    said = [note.description, *(line for line in request.text.split("\n") if line.strip())][:20]
    try:
        for text in said:
            found = revision(store, slug, text)
            if found:
                return found
    except (KuraError, OSError, sqlite3.Error):  # advice after a write that succeeded never fails it
        pass
    return "", ""


# -- rename ----------------------------------------------------------------------------------


def rename(store: Store, old: str, new: str) -> Edited:
    """``old`` becomes ``new``: the file, its index line, and every link and pointer to it."""
    store.check_write()
    refuse_secrets(f"store '{store.name}', the new slug", new)
    new = new_slug(new.strip())
    data, memory = store.read(old)
    where = f"{store.name}/{memory.slug}"
    if not data and memory.findings:
        raise StoreError(f"{where}: {memory.findings[0].message}; nothing was renamed")
    write_checks.check_rewritable(memory.path, memory.note)
    if new == memory.slug:
        return Edited(store.name, "rename", new, False, path=_rel(store, memory.path), was=memory.slug)
    _free(store, new, data, where)
    written = store.write_file(new, data)
    moved = store.edit_index(partial(_moved, old=memory.slug, new=new))
    relinked = [
        slug
        for slug in _naming(store, memory.slug)
        if store.update(slug, partial(_relinked, old=memory.slug, new=new)).changed
    ]
    _remove(store, memory, data)
    usage.moved(store.state_dir, memory.slug, new)
    return Edited(
        store.name,
        "rename",
        new,
        True,
        path=_rel(store, written.path),
        was=memory.slug,
        index_changed=moved or written.index_changed,
        relinked=tuple(relinked),
    )


def _free(store: Store, new: str, data: bytes, where: str) -> None:
    """Refuse a new name another memory has (the same bytes there: a rename cut short, resumed)."""
    try:
        there = store.read(new)[0]
    except NotFound:
        return
    if there != data:
        raise StoreError(
            f"{where}: cannot be renamed to {new}: a memory {new} exists; nothing was renamed — choose "
            "another name, or merge the two by hand"
        )


def _naming(store: Store, old: str) -> list[str]:
    """The memories that may link or point to ``old``, from the catalog (no file is parsed
    twice on a big store); each is read again under the lock before it is changed."""
    entries = catalog.entries(store)
    return [s for s, e in sorted(entries.items()) if s != old and (old in e.links or old in e.standing)]


def _moved(index: ix.Index, *, old: str, new: str) -> ix.Index:
    """The index naming ``new`` where it named ``old``, and the line the copy got dropped."""
    if old not in index.named():
        return index
    target = re.compile(r"\]\(\s*<?(?:\./)*" + re.escape(old) + r"\.md(#[^)>\s]*)?>?\s*\)")
    written = f"{new}.md" if not re.search(r"[\s()<>]", new) else f"<{new}.md>"
    lines = []
    for line in index.lines:
        if line.kind == "entry" and line.slugs == (new,):
            continue
        if old in line.slugs:
            line = ix.classify_line(target.sub(lambda m: f"]({written}{m.group(1) or ''})", line.text))
        lines.append(line)
    return replace(index, lines=tuple(lines))


def _relinked(memory: Memory, *, old: str, new: str) -> nt.MemoryFile | None:
    note = memory.note
    body = et.relinked(note.body, old, new)
    pointers = et.repointed(note.meta, old, new)
    if body == note.body and not pointers:
        return None
    return note.with_body(body).with_meta(**pointers)


def _remove(store: Store, memory: Memory, data: bytes) -> None:
    """Remove the old file, under the lock, unless someone changed it since it was copied."""
    with locked(store.state_dir / "lock"):
        try:
            now = store.read(memory.slug)[0]
        except NotFound:
            return
        if now != data:
            raise StoreError(
                f"{store.name}/{memory.slug}: changed while it was renamed, so it was kept beside the new "
                "copy; compare the two and remove the one you do not want"
            )
        memory.path.unlink()
        fsync_dir(memory.path.parent)


# -- forget and purge ---------------------------------------------------------------------------


def _forget(store: Store, request: EditRequest, origin: str, today: dt.date) -> Edited:
    where = f"{store.name}/{request.slug}"
    reason = " ".join(request.reason.split()) or "forgotten on purpose"
    refuse_secrets(where, reason)
    write_checks.check_text(where, title="", description=reason, body="")
    if origin:
        reason += f" ({origin})"
    memory = store.show(request.slug)
    done = lifecycle.archive(store, memory.slug, reason, today=today)
    kept = str(store.show(memory.slug).note.meta.get("archived_reason") or reason)
    return Edited(store.name, "forget", memory.slug, done, path=_rel(store, memory.path), detail=kept)


def _purge(store: Store, slug: str) -> Edited:
    store.check_write("purge")  # a frozen store refuses before anything is looked at
    found = pg.closure(store, slug)
    pg.purge(store, found, actor="purge")
    closure = found.to_dict()
    for key in ("files", "drafts", "state"):
        closure[key] = [_rel(store, Path(p)) for p in closure[key]]
    return Edited(store.name, "purge", found.slug, True, detail="purged", purged=closure)


def _retired(note: nt.MemoryFile) -> bool:
    return bool(note.meta.get("archived") or note.meta.get("superseded_by"))


def _rel(store: Store, path: Path) -> str:
    try:
        return path.relative_to(store.root).as_posix()
    except ValueError:
        return path.name
