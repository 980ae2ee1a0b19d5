"""Drain: the scribe re-reads every staged draft cold and pours, fixes or tosses it.

The distiller stages drafts and nobody is always there to review them, so a model does the
reviewing — and is believed about nothing it could get wrong quietly:

- **The verdict is asked for, read leniently, trusted never.** The scribe answers a small
  JSON object (``{"verdict": "POUR"|"FIX"|"TOSS", "reason": …}``, with a ``body`` for a
  fix); it may sit in a code fence or after some reasoning. Anything else — no object, an
  unknown verdict, a fix with no body, a toss with no reason — is *unread*, and an unread
  draft stays staged with the reason.
- **Silence is never read as TOSS.** A model outage (``chat`` returns ``NoAnswer``) leaves
  the draft staged, and the drafts after it are left staged without asking again, so a
  drain against a dead endpoint costs one timeout, not one per draft.
- **POUR goes through the verified door** (``drafts.pour``): mark, final-surface floor,
  store policy. Its refusals are reported and the draft stays staged.
- **FIX is held to the floor before it is written.** The scribe's new text must pass
  ``surface.violations`` against the draft's own evidence; only then is the draft rewritten
  and signed again (``drafts.rewrite``) and poured. A fix that fails the floor leaves the
  original staged, untouched, with the floor's findings as the reason.
- **TOSS is logged, never deleted**: the draft moves to ``tossed/`` with the reason in its
  comment (``drafts.toss``).
- **A tampered draft is never sent to the model.** It is handed to ``pour``, which
  quarantines it; its text (a person's, or an attacker's) never reaches a prompt.
- **Ideas are not judged here**: they are never poured (they belong in a seed file), so
  they stay staged without a call.

The system prompt is the store's charter (at the head, as every role sends it, so the
roles share one cached prefix), the fixed instructions and the store's slugs (so a
duplicate can be recognised); the user message is one draft with its evidence.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from kura.distill import drafts as dr
from kura.distill.final_check import violations
from kura.errors import KuraError
from kura.llm import NoAnswer, Usage, chat, clip, last_json_object, with_charter
from kura.store.store import Store

if TYPE_CHECKING:
    from kura.config import ModelConfig

MAX_TOKENS = 1500
MAX_SLUGS = 300  # slugs listed for duplicate spotting; past this the list is cut
_INSTRUCTIONS = """You are the scribe of a memory store for AI agents. The user message is one
draft memory that a distiller proposed from an agent's transcript, with the quotes that are
its only evidence. Classes: [USER] the human's own words, [TOOL] machine output, [ACT] a
tool that was invoked, [SELF] the agent's own prose. Judge the draft cold:

- POUR when it stays inside its evidence, is not obvious, and would help an agent later.
- FIX when it is worth keeping but the wording is wrong: rewrite the body (and optionally
  the title and description). Claim nothing the quotes do not carry: no number that is not
  in TOOL/ACT output, no decision credited to the human without a USER quote, no quotation
  that is not verbatim, no [[link]] to a memory not listed below. Write it in the language
  the draft is written in.
- TOSS when it is thin, already recorded in the repository or the store, a duplicate, or a
  one-off; say which in the reason.

Reply with only one JSON object, e.g.
{"verdict": "POUR", "reason": "…"}
{"verdict": "FIX", "reason": "…", "title": "…", "description": "…", "body": "…"}
{"verdict": "TOSS", "reason": "…"}"""
Action = Literal["pour", "fix", "toss"]  # what the scribe may say to do with a draft
Result = Literal["poured", "fixed", "tossed", "staged", "quarantined"]  # what the drain did
_VERDICTS: tuple[Action, ...] = get_args(Action)
RESULTS: tuple[Result, ...] = get_args(Result)


@dataclass(frozen=True, slots=True)
class ScribeVerdict:
    """The scribe's verdict as read back; ``title``/``description``/``body`` only for a fix."""

    action: Action
    reason: str
    title: str = ""
    description: str = ""
    body: str = ""


@dataclass(frozen=True, slots=True)
class Unread:
    reason: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the drain did with one draft: ``poured``, ``fixed`` (rewritten and poured),
    ``tossed``, ``staged`` (left as it was, or rewritten but refused) or ``quarantined``."""

    id: str
    result: Result
    reason: str
    slug: str = ""
    memory: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "result": self.result, "reason": self.reason, "slug": self.slug,
                "memory": str(self.memory) if self.memory else None}  # fmt: skip


@dataclass(frozen=True, slots=True)
class DrainMetrics:
    outcomes: tuple[Outcome, ...]
    usage: Usage = field(default_factory=Usage)

    def count(self, result: Result) -> int:
        return sum(1 for o in self.outcomes if o.result == result)

    def reasons(self, result: Result) -> dict[str, int]:
        return dict(Counter(o.reason for o in self.outcomes if o.result == result))

    @property
    def did_work(self) -> bool:
        return any(o.result != "staged" for o in self.outcomes)

    def line(self) -> str:
        def why(result: Result) -> str:
            found = self.reasons(result)
            return f" ({'; '.join(f'{n}× {r}' for r, n in found.items())})" if found else ""

        return (
            f"drain: drafts {len(self.outcomes)}, poured {self.count('poured')}, "
            f"fixed {self.count('fixed')}, tossed {self.count('tossed')}{why('tossed')}, "
            f"left staged {self.count('staged')}{why('staged')}, quarantined {self.count('quarantined')}, "
            + self.usage.line()
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "drafts": len(self.outcomes),
            **{r: self.count(r) for r in RESULTS},
            "tossed_reasons": self.reasons("tossed"),
            "staged_reasons": self.reasons("staged"),
            "outcomes": [o.to_dict() for o in self.outcomes],
            **self.usage.to_dict(),
        }


def drain(store: Store, model: ModelConfig) -> DrainMetrics:
    """Judge every staged draft with the scribe ``model`` (see the module docstring)."""
    system = system_prompt(store.charter, store.slugs())
    outcomes: list[Outcome] = []
    usage = Usage()
    silent = False
    for info in dr.drafts(store):
        if info.incomplete:
            outcomes.append(Outcome(info.id, "staged", info.problem))
        elif info.tampered:
            outcomes.append(_poured(dr.pour(store, info.id)))
        elif info.kind == "idea":
            outcomes.append(Outcome(info.id, "staged", "an idea is not judged; it waits for a seed file"))
        elif silent:
            outcomes.append(Outcome(info.id, "staged", "not judged: the scribe did not answer"))
        else:
            try:
                outcome = review(store, dr.load(store, info.id), model, system, usage=usage)
            except KuraError as err:  # e.g. another drain took the draft meanwhile
                outcome = Outcome(info.id, "staged", str(err))
            silent = outcome.reason.startswith(_silence(model))
            outcomes.append(outcome)
    return DrainMetrics(tuple(outcomes), usage)


def review(
    store: Store, draft: dr.Draft, model: ModelConfig, system: str, *, usage: Usage | None = None
) -> Outcome:
    """Ask the scribe about one draft and act on its verdict."""
    if draft.tampered:
        return _poured(dr.pour(store, draft.id))
    reply = chat(model, system, user_message(draft), max_tokens=MAX_TOKENS, usage=usage)
    if isinstance(reply, NoAnswer):
        return Outcome(draft.id, "staged", f"{_silence(model)} ({reply.reason})")
    verdict = read_verdict(reply)
    if isinstance(verdict, Unread):
        return Outcome(draft.id, "staged", verdict.reason)
    if verdict.action == "toss":
        dr.toss(store, draft.id, f"scribe: {verdict.reason}")
        return Outcome(draft.id, "tossed", verdict.reason, draft.slug)
    if verdict.action == "fix":
        return _fix(store, draft, verdict)
    return _poured(dr.pour(store, draft.id))


def _fix(store: Store, draft: dr.Draft, verdict: ScribeVerdict) -> Outcome:
    title = verdict.title or draft.title
    description = verdict.description or draft.description
    text = "\n\n".join(filter(None, (title, "" if draft.extends else description, verdict.body)))
    found = violations(text, draft.evidence, store.slugs())
    if found:
        return Outcome(
            draft.id, "staged", "the scribe's fix fails the final-surface floor: " + "; ".join(found)
        )
    try:
        dr.rewrite(store, draft, title=title, description=description, body=verdict.body)
    except KuraError as err:
        return Outcome(draft.id, "staged", str(err))
    result = _poured(dr.pour(store, draft.id))
    return (
        Outcome(draft.id, "fixed", verdict.reason, result.slug, result.memory)
        if result.result == "poured"
        else result
    )


def _poured(result: dr.PourResult) -> Outcome:
    if result.quarantined:
        return Outcome(result.id, "quarantined", result.reason, result.slug)
    if not result.poured:
        return Outcome(result.id, "staged", result.reason, result.slug)
    return Outcome(result.id, "poured", "poured", result.slug, result.memory)


def _silence(model: ModelConfig) -> str:
    return f"the scribe ({model.model} at {model.url}) did not answer; the draft stays staged"


# -- the prompt ---------------------------------------------------------------------------


def system_prompt(charter: str, slugs: list[str] | tuple[str, ...]) -> str:
    """The charter at the head (as every role sends it), the instructions, the store's slugs."""
    listed = sorted(slugs)[:MAX_SLUGS]
    known = "\n".join(listed) if listed else "(none yet)"
    return with_charter(charter, f"{_INSTRUCTIONS}\n\nMemories already in the store:\n{known}\n")


def user_message(draft: dr.Draft) -> str:
    """One draft as the scribe reads it: what it proposes, then its evidence."""
    lines = [f"Kind: {draft.kind}", f"Flags: {', '.join(draft.flags) or 'none'}", f"Title: {draft.title}"]
    lines.append(f"Extends: {draft.extends}" if draft.extends else f"Description: {draft.description}")
    lines += ["", "Body:", draft.body.strip("\n"), "", "Evidence:"]
    lines += [f"[{s.cls}] {s.text}" for s in draft.evidence] or ["(none)"]
    return "\n".join(lines) + "\n"


# -- reading the verdict --------------------------------------------------------------------


def read_verdict(reply: str) -> ScribeVerdict | Unread:
    """The last JSON object in the reply that carries a verdict, checked field by field."""
    value = last_json_object(reply, "verdict")
    if value is None:
        return Unread(f"the scribe's reply held no JSON verdict: {clip(reply)!r}")
    action = value.get("verdict")
    action = action.strip().lower() if isinstance(action, str) else ""
    if action not in _VERDICTS:
        return Unread(f"the scribe's verdict {clip(str(value.get('verdict')))!r} is not POUR, FIX or TOSS")
    fields = {k: value.get(k) for k in ("reason", "title", "description", "body")}
    if any(v is not None and not isinstance(v, str) for v in fields.values()):
        return Unread("the scribe's verdict has a field that is not text")
    text = {k: (v or "").strip() for k, v in fields.items()}
    if action == "toss" and not text["reason"]:
        return Unread("the scribe said TOSS without a reason; a toss must say why")
    if action == "fix" and not text["body"]:
        return Unread("the scribe said FIX without a body")
    reason = text["reason"] or action
    if action != "fix":
        return ScribeVerdict(action, reason)
    return ScribeVerdict(action, reason, text["title"], text["description"], text["body"])
