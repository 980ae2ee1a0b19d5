"""Changing where a memory stands: reinforce, supersede, archive. Nothing here deletes.

Each change is a frontmatter edit through ``Store.update`` — read and written under the
store lock, made again on an editor's newer save, so a hand edit is never lost and a writer
meanwhile never makes it fail; other keys keep their exact lines — and, where a memory
leaves the index, one locked index edit. The index names current memories
only: a superseded or archived memory keeps its file, stays findable by ``kura recall
--all`` and explained by ``kura why``, and loses its line.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from kura.errors import StoreError
from kura.files import memory_file as nt
from kura.files import memory_index as ix
from kura.files import witness as wt
from kura.store.store import Store, WriteResult


def reinforce(store: Store, slug: str, witness: wt.Witness, *, actor: str = "direct") -> WriteResult:
    """Add ``witness`` to the memory (a restatement: the same claim witnessed again), read
    and written under the store lock. A witness already recorded (same kind, session,
    source and quote) is not added twice."""
    return store.update(slug, lambda memory: witnessed(memory.note, witness, memory.slug), actor=actor)


def witnessed(note: nt.MemoryFile, witness: wt.Witness, slug: str = "<memory>") -> nt.MemoryFile:
    """The note with ``witness`` recorded (the same note when it already is)."""
    found, _ = wt.read(note.meta, slug)
    if len(wt.dedupe([*found, witness])) == len(found):
        return note
    kept = note.meta.get("witnesses")
    raw = list(kept) if isinstance(kept, list) else []
    return note.with_meta(witnesses=[*raw, witness.to_meta()])


def stated_again(note: nt.MemoryFile) -> nt.MemoryFile:
    """A forgotten memory with recorded witnesses that a person writes again at the command
    line gains their SAID witness, dated today: without new evidence the next decay would
    archive again, the same day, what they just brought back."""
    if not note.meta.get("archived") or not note.meta.get("witnesses"):
        return note
    return witnessed(
        note,
        wt.Witness(
            kind="SAID", when=dt.date.today(), session="", source="kura remember", quote=note.description
        ),
    )


def supersede(
    store: Store, old: str, new: str, *, today: dt.date | None = None, actor: str = "direct"
) -> bool:
    """``new`` replaces ``old`` (a revision: same subject, new value). ``old`` gets
    ``superseded_by`` and ``valid_until`` and leaves the index; ``new`` gets ``supersedes``.
    False when all of that was already so."""
    today = today or dt.date.today()
    if old == new:
        raise StoreError(f"{store.name}/{old}: a memory cannot supersede itself")
    was, now = store.show(old), store.show(new)
    if was.note.meta.get("superseded_by") not in (None, "", new):
        raise StoreError(
            f"{store.name}/{old}: already superseded by {was.note.meta['superseded_by']}; "
            "supersede that one instead"
        )
    named = store.update(now.slug, lambda memory: naming(memory.note, was.slug), actor=actor).changed
    marked = was.note.meta.get("superseded_by") != now.slug  # a second run keeps the first valid_until
    if marked:
        _edit(store, was.slug, actor, superseded_by=now.slug, valid_until=today.isoformat())
    removed = store.edit_index(lambda index: ix.remove(index, was.slug), actor=actor)
    return named or marked or removed


def unreplaced(store: Store, old: str, new: str, where: str) -> None:
    """Refuse, before anything is written, a revision of ``old`` that another memory has
    replaced since it was drafted (``kura remember --supersedes``, another pour): which of the
    two holds is the person's call, and written first, ``new`` would stand beside the other."""
    newer = " ".join(str(store.show(old).note.meta.get("superseded_by") or "").split())
    if newer not in ("", new):
        raise StoreError(
            f"{where}: it revises {old}, which {newer} has replaced since; nothing was written and the "
            f"draft stays staged — toss it if {newer} holds, or write it with kura remember "
            f"{new} DESCRIPTION --supersedes {newer}"
        )


def naming(note: nt.MemoryFile, old: str) -> nt.MemoryFile:
    """The note with ``old`` in its ``supersedes`` list (the same note when it already is)."""
    have = note.meta.get("supersedes")
    if isinstance(have, list) and old in [str(v) for v in have]:
        return note
    return note.with_meta(supersedes=_added(have, old))


def archive(
    store: Store, slug: str, reason: str, *, today: dt.date | None = None, actor: str = "direct"
) -> bool:
    """Archive the memory with ``reason``: out of the index, still on disk and findable.
    Already archived, only a line left naming it (a merge kept it, or a write between the
    two steps failed) is taken out; False when there was none."""
    today = today or dt.date.today()
    memory = store.show(slug)
    if memory.note.meta.get("archived"):  # its first date and reason stay
        return store.edit_index(lambda index: ix.remove(index, memory.slug), actor=actor)
    _edit(store, memory.slug, actor, archived=today.isoformat(), archived_reason=" ".join(reason.split()))
    store.edit_index(lambda index: ix.remove(index, memory.slug), actor=actor)
    return True


def _edit(store: Store, slug: str, actor: str, **changes: Any) -> None:
    store.update(slug, lambda memory: memory.note.with_meta(**changes), actor=actor)


def _added(value: Any, slug: str) -> list[str]:
    have = [str(v) for v in value] if isinstance(value, list) else [str(value)] if value else []
    return have if slug in have else [*have, slug]


def from_flags(flags: Sequence[str], source: str, evidence: Sequence[Any]) -> tuple[wt.Witness | None, str]:
    """The witness and the replaced slug a draft's flags record (``witness:FIX``,
    ``session:…``, ``when:YYYY-MM-DD`` — the day it was said, else today — ``replaces:slug``);
    the quote is its first USER evidence, else its first."""
    found = {f.split(":", 1)[0]: f.split(":", 1)[1] for f in flags if ":" in f}
    kind, replaces = wt.kind_of(found.get("witness", "")), found.get("replaces", "")
    if kind is None:
        return None, replaces
    when = wt.parse_when(found.get("when")) or dt.date.today()
    return wt.Witness(
        kind=kind, when=when, session=found.get("session", ""), source=source, quote=wt.lead_quote(evidence)
    ), replaces


def also_from_flags(flags: Sequence[str], source: str, evidence: Sequence[Any]) -> list[wt.Witness]:
    """The further witnesses a draft's ``also:KIND@DAY@QUOTE-INDEX@SESSION[@SOURCE]`` flags
    record (a claim the ladder carried across on witnesses from several sessions; the
    draft's source when none is named); a flag that does not read so is passed over."""
    out = []
    for flag in flags:
        if not flag.startswith("also:"):
            continue
        parts = flag.removeprefix("also:").split("@", 4)
        kind = wt.kind_of(parts[0]) if len(parts) >= 4 else None
        if kind is None or not parts[2].isdigit():
            continue
        at = int(parts[2])
        quote = str(evidence[at].text)[:400] if at < len(evidence) else ""
        when = wt.parse_when(parts[1]) or dt.date.today()
        said_in = parts[4] if len(parts) == 5 and parts[4] else source
        out.append(wt.Witness(kind=kind, when=when, session=parts[3], source=said_in, quote=quote))
    return out
