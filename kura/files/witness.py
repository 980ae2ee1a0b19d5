"""Witnesses and the confidence computed from them.

Every durable memory can name its witnesses — the evidence it was believed on — in its
frontmatter::

    witnesses:
    - kind: FIX
      when: 2026-09-02
      session: 6f1c2a8e
      source: ferry/6f1c2a8e.jsonl#u2
      quote: No, use the blue-green deploy, not the rolling one.
      domain: docs.example.com      # optional: the ultimate origin (a web page, a repo)

Confidence is never stored: it is computed here, on read, from the witnesses, so a hand
edit or a merge can never leave a number that disagrees with its evidence. The kinds and
their weights are the design:

    SAID 1.00 the person said to remember it (and it pins)   FIX 0.80 the person corrected
    SCAR 0.50 it was expensive to learn                      MANUAL 0.40 an agent wrote it
    INFERRED 0.35 a model read prose and suggested it        TIDE 0.30 distilled from a window
    CALLUS 0.25 it recurred in unrelated sessions            SLEEP 0.20 a consolidation made it

The formula, with the properties it must have:

- a witness's value ages but never below a quarter of its weight:
  ``weight × (0.25 + 0.75·e^(−days/365))``;
- diversity beats volume: witnesses are grouped by domain (by session when they name
  none); a group counts its strongest × (1 + 0.25·(1 − 1/n)), so repeats add at most a
  quarter; ``E`` is the sum over groups;
- it saturates: ``c = E / (E + 0.5) × d`` with ``d = 1 − 0.25·e^(−(k−1))`` for ``k``
  groups (0.75 for one), so ten copies of one web page quoted in ten sessions stay one
  group and below the asserted floor;
- a live memory that contradicts it halves it; being superseded quarters it (well below
  the floor, still findable for a while);
- a SAID witness pins: the memory stays asserted however old, unless it was superseded or
  contradicted.

Reference values (fresh): one SAID 0.50, one FIX 0.46, TIDE in one session + CALLUS in
another 0.48, three CALLUS repeats in one session 0.28.

Two floors: **asserted** ≥ 0.35 — stated as current truth; **findable** ≥ 0.10 — still
searchable and explained, but offered as "on record, may be stale", never as fact. A
memory written by hand with no witnesses is stated by its author: it counts as one SAID.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from kura.files.finding import Finding

Kind = Literal["SAID", "FIX", "SCAR", "MANUAL", "INFERRED", "TIDE", "CALLUS", "SLEEP"]
KINDS: tuple[Kind, ...] = get_args(Kind)
WEIGHTS: dict[Kind, float] = {
    "SAID": 1.00, "FIX": 0.80, "SCAR": 0.50, "MANUAL": 0.40,
    "INFERRED": 0.35, "TIDE": 0.30, "CALLUS": 0.25, "SLEEP": 0.20,
}  # fmt: skip
MEANING: dict[Kind, str] = {
    "SAID": "the person said to remember it",
    "FIX": "the person corrected something",
    "SCAR": "it was expensive to learn",
    "MANUAL": "an agent wrote it over a tool",
    "INFERRED": "a model read prose and suggested it",
    "TIDE": "distilled from a transcript",
    "CALLUS": "it recurred in unrelated sessions",
    "SLEEP": "a consolidation produced it",
}
ASSERTED = 0.35
FINDABLE = 0.10
CONTRADICTED = 0.5
SUPERSEDED = 0.25
AUTHOR = "author"  # the session of the implicit witness of a hand-written memory
_FIELDS = ("kind", "when", "session", "source", "quote", "domain")


@dataclass(frozen=True, slots=True)
class Witness:
    kind: Kind
    when: dt.date | None = None
    session: str = ""
    source: str = ""
    quote: str = ""
    domain: str = ""
    implicit: bool = False  # the author of a hand-written memory, not a recorded witness

    @property
    def weight(self) -> float:
        return WEIGHTS[self.kind]

    @property
    def group(self) -> str:
        return self.domain or self.session

    def age(self, today: dt.date) -> int:
        return max(0, (today - self.when).days) if self.when else 0

    def value(self, today: dt.date) -> float:
        """The weight, aged: never below a quarter of it."""
        return self.weight * (0.25 + 0.75 * math.exp(-self.age(today) / 365))

    def to_meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.when:
            out["when"] = self.when.isoformat()
        for name in ("session", "source", "quote", "domain"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        return out


@dataclass(kw_only=True, frozen=True, slots=True)
class Confidence:
    value: float
    asserted: bool
    findable: bool
    pinned: bool
    groups: int
    sessions: int
    reasons: tuple[str, ...] = ()


def read(meta: Mapping[str, Any], where: str = "<memory>") -> tuple[list[Witness], list[Finding]]:
    """The witnesses a memory's frontmatter names; a malformed entry is a finding (and not
    counted), never a crash."""
    raw = meta.get("witnesses")
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        return [], [
            Finding(where, 1, "witnesses: expected a list of witnesses; none were counted", "warning")
        ]
    out: list[Witness] = []
    findings: list[Finding] = []
    for number, item in enumerate(raw, start=1):
        witness, problem = _one(item)
        if witness is None:
            findings.append(Finding(where, 1, f"witness {number}: {problem}; it is not counted", "warning"))
        else:
            out.append(witness)
    return out, findings


def _one(item: Any) -> tuple[Witness | None, str]:
    if not isinstance(item, Mapping):
        return None, "expected a mapping with kind, when, session, source, quote"
    kind = kind_of(str(item.get("kind", "")).strip())
    if kind is None:
        return None, f"kind {item.get('kind')!r} is not one of {', '.join(WEIGHTS)}"
    when = parse_when(item.get("when"))
    if item.get("when") is not None and when is None:
        return None, f"when {item.get('when')!r} is not a date (YYYY-MM-DD)"
    session, source, quote, domain = (" ".join(str(item.get(k) or "").split()) for k in _FIELDS[2:])
    return Witness(kind=kind, when=when, session=session, source=source, quote=quote, domain=domain), ""


def kind_of(name: str) -> Kind | None:
    """The witness kind ``name`` spells in any case, or None when it names none."""
    kind = name.upper()
    return kind if kind in KINDS else None


def parse_when(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    return None


def of_memory(meta: Mapping[str, Any], where: str = "<memory>") -> tuple[list[Witness], list[Finding]]:
    """The recorded witnesses, or the author's implicit SAID when there are none."""
    found, findings = read(meta, where)
    if found or meta.get("witnesses"):
        return found, findings
    when = parse_when(meta.get("created"))
    return [Witness(kind="SAID", when=when, session=AUTHOR, implicit=True)], findings


def confidence(
    witnesses: Sequence[Witness],
    today: dt.date,
    *,
    superseded: bool = False,
    contradicted: bool = False,
) -> Confidence:
    """The confidence the witnesses carry today (see the module docstring)."""
    k = len({witness.group for witness in witnesses})
    evidence = weight_of(witnesses, today)
    diversity = 1 - 0.25 * math.exp(-(k - 1)) if k else 0.0
    value = evidence / (evidence + 0.5) * diversity if evidence else 0.0
    reasons: list[str] = []
    if contradicted:
        value *= CONTRADICTED
        reasons.append("a live memory contradicts it")
    if superseded:
        value *= SUPERSEDED
        reasons.append("it was superseded")
    pinned = any(w.kind == "SAID" for w in witnesses) and not superseded and not contradicted
    asserted = pinned or value >= ASSERTED
    if not asserted:
        reasons.append(f"confidence {value:.3f} is below the asserted floor {ASSERTED:.2f}")
    sessions = len({w.session for w in witnesses if w.session})
    return Confidence(
        value=round(value, 4),
        asserted=asserted,
        findable=asserted or value >= FINDABLE,
        pinned=pinned,
        groups=k,
        sessions=sessions,
        reasons=tuple(reasons),
    )


def weight_of(witnesses: Sequence[Witness], today: dt.date) -> float:
    """``E``, the evidence before it saturates: per group its strongest aged value, repeats
    adding at most a quarter, summed. The ladder's floors (``kura.life.scratch``) compare this
    sum — TIDE 0.30 + CALLUS 0.25 is 0.55 — where a memory's asserted floor reads ``confidence``."""
    groups: dict[str, list[float]] = {}
    for witness in witnesses:
        groups.setdefault(witness.group, []).append(witness.value(today))
    return sum(max(values) * (1 + 0.25 * (1 - 1 / len(values))) for values in groups.values())


def lead(evidence: Sequence[Any]) -> Any:
    """The segment a witness stands on (segments with ``cls`` and ``text``): the human's
    first, else the first of any class; None for no evidence."""
    return next((s for s in evidence if s.cls == "USER"), evidence[0] if evidence else None)


def lead_quote(evidence: Sequence[Any]) -> str:
    """The words a witness quotes from its evidence: those of its ``lead`` segment."""
    first = lead(evidence)
    return str(first.text if first is not None else "")[:400]


def said_in(evidence: Sequence[Any], fallback: dt.date) -> tuple[str, dt.date]:
    """The session and the day the evidence was said in: the ``lead`` segment's (its
    ``session``, its ``when`` timestamp), else any segment's; ``fallback`` for the day when
    no segment carries a readable one. A witness is dated by when it was said, never by the
    day it was read or poured, or an old transcript would read as fresh news."""
    ordered = [s for s in (lead(evidence), *evidence) if s is not None]
    session = next((str(s.session) for s in ordered if getattr(s, "session", "")), "")
    day = next((d for s in ordered if (d := parse_when(getattr(s, "when", ""))) is not None), None)
    return session, day or fallback


def dedupe(witnesses: Iterable[Witness]) -> list[Witness]:
    """Witnesses without exact repeats (the same kind, session, source and quote)."""
    seen: set[tuple[str, str, str, str]] = set()
    out = []
    for w in witnesses:
        key = (w.kind, w.session, w.source, w.quote)
        if key not in seen:
            seen.add(key)
            out.append(w)
    return out
