"""Where a memory stands today: its confidence, its strength, and its place in a lifecycle.

A memory's frontmatter may carry, besides its witnesses (``kura.files.witness``):

- ``supersedes: [old-slug]`` / ``superseded_by: new-slug`` and ``valid_until: DATE`` — a
  revision replaced it; both files stay, the index names only the current one;
- ``contradicted_by: slug`` — a live memory disagrees (it damps the confidence while that
  memory exists);
- ``archived: DATE`` and ``archived_reason`` — forgotten on purpose or spent by decay: out
  of the index, out of recall unless asked for everything, never deleted.

**Strength** is how well the memory is holding up in use, separate from how well it is
evidenced: it halves over a half-life set by its type (facts about people and rules of
work slowly, project facts — the most episodic — fastest), lengthened by the weight of its
best witness (importance) and by use (recall records the days it was used). A memory with
a SAID witness — the person said to remember it, or wrote it by hand — does not fade.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kura.files import witness as wt
from kura.files.finding import Finding
from kura.files.memory_file import note_type

HALF_LIFE_DAYS = {"user": 365, "feedback": 365, "reference": 180, "project": 90}
LABELS = ((0.7, "high"), (0.3, "fading"), (0.1, "weak"), (0.0, "spent"))
SPENT = 0.1


@dataclass(frozen=True, slots=True)
class Use:
    last: dt.date | None = None
    count: int = 0


Status = Literal["asserted", "on record", "withheld", "superseded", "archived"]  # see ``Standing.status``


@dataclass(kw_only=True, frozen=True, slots=True)
class Standing:
    slug: str
    type: str
    witnesses: tuple[wt.Witness, ...]
    confidence: wt.Confidence
    strength: float
    since: dt.date | None = None
    until: dt.date | None = None
    superseded_by: str = ""
    supersedes: tuple[str, ...] = ()
    contradicted_by: str = ""
    archived: dt.date | None = None
    archived_reason: str = ""
    findings: tuple[Finding, ...] = field(default=(), compare=False)

    @property
    def asserted(self) -> bool:
        return self.confidence.asserted and self.archived is None

    @property
    def findable(self) -> bool:
        return self.confidence.findable

    @property
    def current(self) -> bool:
        """In the index: neither superseded nor archived."""
        return not self.superseded_by and self.archived is None

    @property
    def status(self) -> Status:
        if self.archived is not None:
            return "archived"
        if self.superseded_by:
            return "superseded"
        return "asserted" if self.asserted else "on record" if self.findable else "withheld"

    @property
    def label(self) -> str:
        return next(name for floor, name in LABELS if self.strength >= floor)

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug, "status": self.status, "asserted": self.asserted,
            "confidence": round(self.confidence.value, 2), "strength": round(self.strength, 2),
            "pinned": self.confidence.pinned, "witnesses": len(self.witnesses),
            "sessions": self.confidence.sessions, "superseded_by": self.superseded_by or None,
            "supersedes": list(self.supersedes),
            "archived": self.archived.isoformat() if self.archived else None,
        }  # fmt: skip


def standing(
    slug: str,
    meta: Mapping[str, Any],
    today: dt.date,
    *,
    use: Use | None = None,
    live: Callable[[str], bool] = lambda slug: True,
) -> Standing:
    """Where the memory ``slug`` with frontmatter ``meta`` stands on ``today``; ``live``
    says whether a slug names a memory that exists and is current (for contradictions)."""
    where = slug
    witnesses, findings = wt.of_memory(meta, where)
    superseded_by = _text(meta.get("superseded_by"))
    contradicted_by = _text(meta.get("contradicted_by"))
    contradicted = bool(contradicted_by) and live(contradicted_by)
    confidence = wt.confidence(witnesses, today, superseded=bool(superseded_by), contradicted=contradicted)
    kind = note_type(dict(meta)) or "project"
    dates = [w.when for w in witnesses if w.when]
    created = wt.parse_when(meta.get("created"))
    since = min(dates + ([created] if created else []), default=None)
    return Standing(
        slug=slug,
        type=kind,
        witnesses=tuple(witnesses),
        confidence=confidence,
        strength=strength(witnesses, kind, today, use or Use()),
        since=since,
        until=wt.parse_when(meta.get("valid_until")),
        superseded_by=superseded_by,
        supersedes=_slugs(meta.get("supersedes")),
        contradicted_by=contradicted_by,
        archived=wt.parse_when(meta.get("archived")),
        archived_reason=_text(meta.get("archived_reason")),
        findings=tuple(findings),
    )


def retired(meta: Mapping[str, Any]) -> bool:
    """Superseded or archived: off the index by design, not a live claim."""
    return bool(meta.get("superseded_by")) or bool(meta.get("archived"))


LIFECYCLE = ("superseded_by", "supersedes", "valid_until", "contradicted_by", "archived", "archived_reason")
_LIFECYCLE = frozenset(LIFECYCLE)


def summary(meta: Mapping[str, Any]) -> str:
    """What a memory's standing is computed from, as compact JSON for the catalog: its
    witnesses (without their quotes), its lifecycle fields, its type and creation date; ""
    for a memory with none of them (its author stated it; nothing to compute)."""
    if "witnesses" not in meta and _LIFECYCLE.isdisjoint(meta):
        return ""  # the common case, said at once: nothing below would be kept
    found, _ = wt.read(meta)
    fields = {k: _text(meta.get(k)) if k != "supersedes" else list(_slugs(meta.get(k))) for k in LIFECYCLE}
    kept: dict[str, Any] = {k: v for k, v in fields.items() if v}
    if not found and not kept:
        return ""
    if found:
        kept["witnesses"] = [{k: v for k, v in w.to_meta().items() if k != "quote"} for w in found]
    kept["type"] = note_type(dict(meta)) or "project"
    created = wt.parse_when(meta.get("created"))
    if created:
        kept["created"] = created.isoformat()
    return json.dumps(kept, sort_keys=True, separators=(",", ":"))


def from_summary(
    slug: str,
    text: str,
    today: dt.date,
    *,
    use: Use | None = None,
    live: Callable[[str], bool] = lambda s: True,
) -> Standing | None:
    """The standing a catalog summary describes; None for a memory with none (asserted)."""
    if not text:
        return None
    try:
        meta = json.loads(text)
    except ValueError:
        return None
    return standing(slug, meta, today, use=use, live=live) if isinstance(meta, dict) else None


def strength(witnesses: list[wt.Witness], kind: str, today: dt.date, use: Use) -> float:
    """1.0 fresh (or pinned by a SAID witness), halving over the memory's half-life."""
    if not witnesses or any(w.kind == "SAID" for w in witnesses):
        return 1.0
    dates = [w.when for w in witnesses if w.when] + ([use.last] if use.last else [])
    if not dates:
        return 1.0
    days = max(0, (today - max(dates)).days)
    importance = max(w.weight for w in witnesses)
    half = HALF_LIFE_DAYS.get(kind, 90) * (0.5 + importance) * (1 + math.log1p(use.count))
    return float(0.5 ** (days / half))


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if value not in (None, "", []) else ""


def _slugs(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(s for s in (_text(v) for v in value) if s)
    return (_text(value),) if _text(value) else ()
