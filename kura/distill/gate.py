"""The evidence gate: a candidate memory survives only on quotes the raw material holds.

An agent that writes down its own assertions and reads them back as facts poisons its
memory from the inside, and no prompt stops that loop. So the write path is decided by this
deterministic function, not by a model: a candidate

    {"topic": …, "kind": "user|feedback|project|reference|idea", "why": …,
     "quotes": ["[USER] verbatim…", "[TOOL] verbatim…"], "judgement": true?}

is judged against the classed segments of the raw material and the store's own text. The
gate is the model boundary: a spotter's typed ``Candidate`` (``kura.distill.candidate``) and
a model's JSON, whatever it holds, go through the same checks to the same verdicts.

- Only the first 6 quotes count, each cut to 400 characters; a quote under 12 characters
  (after whitespace normalisation) is ignored — too short to prove anything.
- A quote must appear verbatim, whitespace-normalised, inside one segment (a quote may not
  stitch two segments together). A paraphrase or an invention is not evidence.
- A quote is filed under the class where its text really is, whatever its tag says. When
  the text is in several classes, the tag stands if it is one of them — except that USER
  never stands when the same text is also TOOL or ACT output: a tool result that contains
  the words is not the human deciding. SELF text that repeats the human does *not* demote a
  USER quote: agents echo their human constantly, and the words are still the human's.
  A re-filed quote goes to the first class it is in, in the order TOOL, ACT, USER, SELF.
- A kept quote carries the session, turn and time of the segment it was found in (the first
  one, of its class), so a witness the distiller records names where and when it was said.
- A quote found in the store's own text (ignoring case, which a memory's first letter often
  changes) is the store reading itself back (an echo) and does not count.
- No surviving quote: dropped. Only SELF quotes: dropped, unless the candidate says
  ``"judgement": true`` (the JSON boolean, nothing else) — then it is kept and flagged, to be
  written in the first person as the agent's view, never as a bare fact.
- A number in ``why`` with no surviving TOOL or ACT quote sets ``unverified_numbers``: the
  writer must not state numbers.
- ``kind: idea`` needs no quotes and is routed to a seed file (verdict ``idea``), unless its
  topic or why reports a decision by a person ("the user approved …", "we decided …"): a
  report dressed as an idea dodges the gate, so it is dropped.
- Secrets are redacted from every evidence text before it leaves this module; reasons name
  quotes by number and never echo their text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kura.distill.final_check import credits_human, numbers, violations
from kura.text.secrets import redact
from kura.transcripts.segments import CLASSES, Segment, normalise

MAX_QUOTES = 6
MAX_QUOTE_CHARS = 400
MIN_QUOTE_CHARS = 12
KINDS = ("user", "feedback", "project", "reference", "idea")
_TAG = re.compile(r"^\s*\[\s*([A-Za-z]+)\s*\]\s*", re.S)
_REFILE_ORDER = ("TOOL", "ACT", "USER", "SELF")


Decision = Literal["kept", "dropped", "idea"]  # the gate's verdict on one candidate


@dataclass(kw_only=True, frozen=True, slots=True)
class Verdict:
    """What the gate decided for one candidate; ``evidence`` is already redacted."""

    verdict: Decision
    reason: str
    classes: tuple[str, ...] = ()
    judgement: bool = False
    unverified_numbers: bool = False
    evidence: tuple[Segment, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "classes": list(self.classes),
            "judgement": self.judgement,
            "unverified_numbers": self.unverified_numbers,
            "evidence": [{"class": s.cls, "text": s.text} for s in self.evidence],
        }


@dataclass(frozen=True, slots=True)
class _Material:
    by_class: dict[str, tuple[tuple[str, Segment], ...]]  # (normalised text, its segment)
    store: str

    def found_in(self, cls: str, text: str) -> Segment | None:
        return next((seg for hay, seg in self.by_class[cls] if text in hay), None)


def judge(candidates: Iterable[object], segments: Sequence[Segment], store_text: str = "") -> list[Verdict]:
    """One verdict per candidate, in order (see the module docstring for the rules)."""
    by_class = {cls: tuple((normalise(s.text), s) for s in segments if s.cls == cls) for cls in CLASSES}
    material = _Material(by_class, normalise(store_text).casefold())
    return [_judge_one(candidate, material) for candidate in candidates]


def _judge_one(candidate: object, material: _Material) -> Verdict:
    if not isinstance(candidate, Mapping):
        return Verdict(verdict="dropped", reason="not a candidate: expected a JSON object")
    kind = candidate.get("kind")
    if kind not in KINDS:
        return Verdict(
            verdict="dropped", reason=f"unknown or missing kind; expected one of {', '.join(KINDS)}"
        )
    raw_quotes = candidate.get("quotes") or []
    if not isinstance(raw_quotes, list):
        return Verdict(verdict="dropped", reason="quotes must be a list of strings")
    evidence, notes = _sift(raw_quotes, material)
    classes = tuple(c for c in CLASSES if any(s.cls == c for s in evidence))
    judgement = candidate.get("judgement") is True
    why = candidate.get("why")
    why_text = why if isinstance(why, str) else ""
    unverified = bool(numbers(why_text)) and not ({"TOOL", "ACT"} & set(classes))
    verdict, reason = _decide(candidate, kind, classes, judgement=judgement)
    detail = f"{reason}{' (' + '; '.join(notes) + ')' if notes else ''}"
    return Verdict(
        verdict=verdict,
        reason=detail,
        classes=classes,
        judgement=judgement and verdict == "kept",
        unverified_numbers=unverified,
        evidence=evidence,
        notes=tuple(notes),
    )


def _decide(
    candidate: Mapping[str, object], kind: str, classes: tuple[str, ...], *, judgement: bool
) -> tuple[Decision, str]:
    if kind == "idea":
        said = " ".join(str(candidate.get(k) or "") for k in ("topic", "why"))
        if credits_human(said):
            return (
                "dropped",
                "a report dressed as an idea: it credits a person with a decision — "
                "file it as a fact with a USER quote",
            )
        return "idea", "an idea: it goes to a seed file, never the store"
    if not classes:
        return "dropped", "no quote survived the gate"
    if classes == ("SELF",):
        if judgement:
            return (
                "kept",
                "kept as the agent's judgement: only SELF quotes survived, write it in the first person",
            )
        return (
            "dropped",
            "only the agent's own words (SELF) survived; a fact needs USER, TOOL or ACT evidence",
        )
    return "kept", ", ".join(classes) + " evidence survived"


def _sift(raw_quotes: list[object], material: _Material) -> tuple[tuple[Segment, ...], list[str]]:
    evidence: list[Segment] = []
    notes: list[str] = []
    if len(raw_quotes) > MAX_QUOTES:
        notes.append(f"only the first {MAX_QUOTES} of {len(raw_quotes)} quotes count")
    for number, raw in enumerate(raw_quotes[:MAX_QUOTES], start=1):
        segment, note = _check_quote(raw, material)
        if note:
            notes.append(f"quote {number}: {note}")
        if segment is not None and (segment.cls, segment.text) not in {(s.cls, s.text) for s in evidence}:
            evidence.append(segment)
    return tuple(evidence), notes


def _check_quote(raw: object, material: _Material) -> tuple[Segment | None, str]:
    tag, text = _split_tag(raw)
    if text is None:
        return None, "not a string; ignored"
    text = normalise(text[:MAX_QUOTE_CHARS])
    if len(text) < MIN_QUOTE_CHARS:
        return None, f"under {MIN_QUOTE_CHARS} characters; ignored"
    found = tuple(cls for cls in CLASSES if material.found_in(cls, text) is not None)
    if not found:
        return None, "not found verbatim in the raw material (a paraphrase or an invention)"
    if text.casefold() in material.store:
        return None, "already in the store's own text (an echo); does not count"
    cls = _true_class(tag, found)
    note = ""
    if tag != cls:
        note = f"tagged [{tag}], re-filed to [{cls}]" if tag else f"untagged, filed as [{cls}]"
    shown, kinds = redact(text)
    if kinds:
        note = "; ".join(filter(None, (note, f"redacted a secret ({', '.join(kinds)})")))
    said = material.found_in(cls, text)
    assert said is not None  # cls is one of the classes the text was found in
    return Segment(cls, shown, said.session, said.turn, line=said.line, when=said.when), note


def _split_tag(raw: object) -> tuple[str, str | None]:
    if isinstance(raw, Mapping):
        cls, text = raw.get("class"), raw.get("text")
        return (str(cls).upper() if cls else ""), (text if isinstance(text, str) else None)
    if not isinstance(raw, str):
        return "", None
    match = _TAG.match(raw)
    if match is None:
        return "", raw
    return match.group(1).upper(), raw[match.end() :]


def _true_class(tag: str, found: tuple[str, ...]) -> str:
    machine = "TOOL" in found or "ACT" in found
    if tag in found and not (tag == "USER" and machine):
        return tag
    return next(cls for cls in _REFILE_ORDER if cls in found)


def check(
    candidates: Sequence[object],
    segments: Sequence[Segment],
    *,
    store_text: str = "",
    slugs: Iterable[str] = (),
    text: str = "",
) -> list[dict[str, Any]]:
    """The black-box door: each candidate's verdict plus the final-surface floor's
    violations for ``text`` and the candidate's own optional ``"text"`` field, as JSON-ready
    dicts in candidate order."""
    known = tuple(slugs)
    results = []
    for candidate, verdict in zip(candidates, judge(candidates, segments, store_text), strict=True):
        composed = "\n\n".join(filter(None, (text, _own_text(candidate))))
        found = violations(composed, verdict.evidence, known) if composed else []
        results.append({**verdict.to_dict(), "violations": found})
    return results


def _own_text(candidate: object) -> str:
    own = candidate.get("text") if isinstance(candidate, Mapping) else None
    if isinstance(own, Mapping):
        return "\n\n".join(str(v) for v in own.values() if isinstance(v, str))
    return own if isinstance(own, str) else ""
