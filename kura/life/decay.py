"""``kura decay``: what today's forgetting would take, before it takes it.

Read from the catalog's lifecycle summaries (a hand-written memory has none: its author
stated it, it does not fade). Three outcomes, worst first:

- **archive** — spent: strength below 0.10, or confidence below the findable floor;
- **no longer asserted** — still findable, but its evidence no longer carries it as
  current truth (recall and the map already show it as "on record, may be stale");
- **fading** — strength below one half, still asserted.

The plan changes nothing. ``apply`` archives the spent ones (a frontmatter field and
their index line; the file stays, ``kura recall --all`` still finds it): never a deletion.

A correction is never archived while the memory it replaced is findable. Decay leaves a
superseded memory alone (it is history, not a live claim), so archiving its successor would
leave the replaced fact as the only answer recall has — the fact made current again by
forgetting its correction. Such a successor stays, no longer asserted, until what it
replaced is archived or purged.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import Any

from kura.files.belief import SPENT, Standing, from_summary
from kura.life.lifecycle import archive
from kura.life.usage import load
from kura.store import catalog
from kura.store.store import Store

FADING = 0.5


@dataclass(frozen=True, slots=True)
class Fate:
    slug: str
    outcome: str  # archive | unasserted | fading
    reason: str
    confidence: float
    strength: float

    def to_dict(self) -> dict[str, Any]:
        return {"slug": self.slug, "outcome": self.outcome, "reason": self.reason,
                "confidence": round(self.confidence, 2), "strength": round(self.strength, 2)}  # fmt: skip


def plan(store: Store, today: dt.date) -> list[Fate]:
    """Every current memory decay would touch today, worst first, then by slug."""
    entries = catalog.entries(store)
    used = load(store.state_dir)
    live = {slug for slug, e in entries.items() if not e.retired}
    fates: list[Fate] = []
    for slug, entry in entries.items():
        if entry.retired or not entry.standing:
            continue
        found = from_summary(slug, entry.standing, today, use=used.get(slug), live=live.__contains__)
        if found is None:
            continue
        fate = _fate(found)
        replaced = [old for old in found.supersedes if _findable(entries.get(old))]
        if fate is not None and fate.outcome == "archive" and replaced:
            fate = _kept(fate, replaced[0], asserted=found.asserted)
        if fate is not None:
            fates.append(fate)
    order = {"archive": 0, "unasserted": 1, "fading": 2}
    return sorted(fates, key=lambda f: (order[f.outcome], f.slug))


def _fate(s: Standing) -> Fate | None:
    c, k = s.confidence.value, s.strength
    if k < SPENT:
        return Fate(s.slug, "archive", f"strength {k:.2f}: spent", c, k)
    if not s.findable:
        return Fate(s.slug, "archive", f"confidence {c:.2f} is below the findable floor", c, k)
    if not s.asserted:
        return Fate(s.slug, "unasserted", "; ".join(s.confidence.reasons), c, k)
    if k < FADING:
        return Fate(s.slug, "fading", f"strength {k:.2f} ({s.label})", c, k)
    return None


def _findable(entry: catalog.Entry | None) -> bool:
    """Whether a memory is still found by recall: it exists and is not archived (superseded
    counts as found — recall shows it, marked). Read as ``catalog.Entry.retired`` reads."""
    return entry is not None and '"archived"' not in entry.standing


def _kept(fate: Fate, replaced: str, *, asserted: bool) -> Fate:
    """A spent correction, kept: archived, it would leave ``replaced`` the only answer."""
    why = (
        f"{fate.reason}, but kept — it replaced {replaced}, which is still findable "
        "(archived, the replaced fact would be the only answer)"
    )
    return replace(fate, outcome="fading" if asserted else "unasserted", reason=why)


def apply(store: Store, fates: list[Fate], today: dt.date, *, actor: str = "direct") -> list[str]:
    """Archive the spent memories of ``fates``; the slugs archived."""
    done = []
    for fate in fates:
        if fate.outcome == "archive" and archive(
            store, fate.slug, f"decay: {fate.reason}", today=today, actor=actor
        ):
            done.append(fate.slug)
    return done
