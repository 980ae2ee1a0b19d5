"""A draft that says what a memory poured since it was staged already says.

The distiller checks a candidate against the store's memories when it stages it, so a
fact said in two sessions that one pass reads (or said again before the first draft is
poured) is staged twice. Poured one after the other, the second is a restatement of the
first: it becomes one more witness of that memory — confidence counts sessions — never a
second memory saying the same thing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kura.distill.novelty import covers
from kura.files.belief import retired
from kura.life.lifecycle import from_flags, reinforce

if TYPE_CHECKING:
    from pathlib import Path

    from kura.distill.drafts import Draft
    from kura.store.store import Store


def covering(store: Store, title: str, description: str) -> str:
    """The current memory that holds nearly every content word of the claim (the distiller's
    own covered rule), or ""."""
    current = [m for m in store.list() if not retired(m.note.meta)]
    memories = [(m.slug, m.name, f"{m.description}\n{m.note.body}") for m in current]
    found = covers(f"{title} {description}".strip(), memories)
    return found.slug if found.verdict == "covered" else ""


def restatement(store: Store, draft: Draft, actor: str) -> Path | None:
    """Pour ``draft`` as one more witness of the memory that already says it, if one does
    (a draft that extends or replaces a memory, or carries no witness, is never one)."""
    seen, replaces = from_flags(draft.flags, draft.source, draft.evidence)
    if draft.extends or replaces or seen is None:
        return None
    same = covering(store, draft.title, draft.description)
    return reinforce(store, same, seen, actor=actor).path if same else None
