"""Tidy: find the ragged lines of MEMORY.md and have the scribe rewrite them from the memory.

The index is read every single time, so a line that does not help recognise its memory
costs on every turn. Finding such a line is mechanical and needs no model (so ``--dry-run``
works anywhere); each finding names the line number and why:

- **restated**: the title only repeats the slug (``deploy-notes`` → "Deploy notes") or the
  trigger, so it adds nothing to recognise the memory by.
- **too long**: the trigger is over ``TRIGGER_MAX`` characters; it is meant as a
  recognition cue, not a summary.
- **vague**: the trigger holds no number, no name (a capitalised word after the first), no
  identifier (path, command, ``snake_case``…) *and* fewer than ``MIN_CONTENT`` content
  words once stopwords and generic words ("notes", "stuff", "misc", "info"…) are dropped.
- **interchangeable**: two entries whose triggers share at least ``SAME`` of their content
  words (token-set Jaccard), so neither tells the reader which memory to open.

The rewrite is the scribe's, and it is believed about nothing it could get wrong quietly:
it is sent the memory's own text (charter first in the system prompt, as every role sends
it), answers a small JSON object read leniently, and the rewrite is refused when it brings
in a number, name or negation the memory's text does not hold (``trim.grounded``), runs
past the limits, or carries a newline, ``<<<``/``>>>`` (the map's fences) or ``[[``. A
model outage or an unreadable reply leaves the line as it is, and the lines after an outage
are not asked about.

Every accepted rewrite is applied in one ``Store.edit_index`` call, under the store lock
and with the store's policy for direct writes (a frozen store is refused before any model
is asked). A line whose text is not what was read — a person edited it while the scribe
worked — is skipped and reported, never overwritten.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kura.errors import KuraError
from kura.files import memory_index as ix
from kura.llm import NoAnswer, chat, last_json_object, with_charter
from kura.text.triggers import STOP_WORDS, grounded

if TYPE_CHECKING:
    from kura.config import ModelConfig
    from kura.store.store import Store

TRIGGER_MAX = 160
MIN_CONTENT = 3
SAME = 0.8
MAX_TOKENS = 600
GENERIC = frozenset(
    "note notes stuff misc miscellaneous info information thing things various general other "
    "todo todos details detail random etc memo memos reminder reminders useful important data "
    "item items topic topics work project projects idea ideas".split()
)
KINDS = ("restated", "too long", "vague", "interchangeable")
_FORBIDDEN = ("<<<", ">>>", "[[", "\n", "\r")
_WORD = re.compile(r"[\w'’]+")
_IDENT = re.compile(r"[_/`=@#]|\w[.\-:]\w|[a-z][A-Z]")
_INSTRUCTIONS = """You tidy the index of a memory store for AI agents. Each memory has one index
line: a short title and a recognition trigger — the words that let an agent recognise, from a
question, that this memory bears on it (its names, numbers, commands, and the conclusion).
The user message is one memory's text, its current index line and why the line is ragged.
Rewrite the title (at most 40 characters) and the trigger (at most 160 characters, one line)
from the memory's text only: no number, name or negation the memory does not contain, no
[[links]]. Reply with only one JSON object, e.g.
{"title": "…", "trigger": "…"}"""


@dataclass(frozen=True, slots=True)
class RaggedLine:
    """A ragged entry line: its 1-based line number, raw text as read, and why."""

    line: int
    slug: str
    text: str
    reasons: tuple[str, ...]
    kinds: tuple[str, ...]

    def __str__(self) -> str:
        return f"MEMORY.md:{self.line}: {self.slug}: {'; '.join(self.reasons)}"


@dataclass(frozen=True, slots=True)
class Proposal:
    """The scribe's accepted rewrite of one finding's line."""

    finding: RaggedLine
    title: str
    trigger: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """What tidy did with one finding: ``rewritten``, ``skipped`` (changed meanwhile),
    ``left`` (outage, unreadable or refused rewrite) or ``found`` (a dry run)."""

    line: int
    slug: str
    result: str
    reason: str
    before: str = ""
    after: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "slug": self.slug, "result": self.result, "reason": self.reason,
                "before": self.before, "after": self.after}  # fmt: skip


@dataclass(frozen=True, slots=True)
class TidyReport:
    findings: tuple[RaggedLine, ...]
    outcomes: tuple[Outcome, ...]
    dry_run: bool

    def count(self, result: str) -> int:
        return sum(1 for o in self.outcomes if o.result == result)

    @property
    def did_work(self) -> bool:
        return self.count("rewritten") > 0

    def line(self) -> str:
        kinds = Counter(k for f in self.findings for k in f.kinds)
        found = ", ".join(f"{kinds[k]} {k}" for k in KINDS if kinds[k])
        head = f"tidy: ragged lines {len(self.findings)}" + (f" ({found})" if found else "")
        if self.dry_run:
            return head + ", dry run: nothing written"
        return (
            f"{head}, rewritten {self.count('rewritten')}, skipped {self.count('skipped')}, "
            f"left {self.count('left')}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "ragged": len(self.findings),
            "findings": [
                {
                    "line": f.line,
                    "slug": f.slug,
                    "kinds": list(f.kinds),
                    "reasons": list(f.reasons),
                    "text": f.text,
                }
                for f in self.findings
            ],
            **{r: self.count(r) for r in ("rewritten", "skipped", "left")},
            "outcomes": [o.to_dict() for o in self.outcomes],
        }


def tidy(store: Store, model: ModelConfig | None, *, dry_run: bool = False) -> TidyReport:
    """Find ragged lines; with a scribe and not ``dry_run``, rewrite and apply them."""
    findings = find(store.index())
    if dry_run or model is None or not findings:
        return TidyReport(findings, tuple(_found(f) for f in findings), dry_run or model is None)
    store.check_write("direct")  # refused before any model is asked
    proposals, left = propose(store, findings, model)
    return TidyReport(findings, tuple(left) + apply(store, proposals), False)


# -- finding ragged lines (pure) ------------------------------------------------------------


def find(index: ix.Index) -> tuple[RaggedLine, ...]:
    """Every ragged entry line of ``index``, in order, each with its reasons."""
    entries = [(n, ln) for n, ln in enumerate(index.lines, start=1) if ln.kind == "entry"]
    words = {n: content_words(ln.trigger) for n, ln in entries}
    found: dict[int, list[tuple[str, str]]] = {n: [] for n, _ in entries}
    for n, ln in entries:
        found[n] += _line_problems(ln, words[n])
    for i, (n, _) in enumerate(entries):
        for m, _ in entries[i + 1 :]:
            score = jaccard(words[n], words[m])
            if score >= SAME:
                found[n].append(("interchangeable", f"interchangeable with line {m} (Jaccard {score:.2f})"))
                found[m].append(("interchangeable", f"interchangeable with line {n} (Jaccard {score:.2f})"))
    return tuple(
        RaggedLine(
            n,
            ln.slugs[0],
            ln.text,
            tuple(r for _, r in found[n]),
            tuple(dict.fromkeys(k for k, _ in found[n])),
        )
        for n, ln in entries
        if found[n]
    )


def _line_problems(line: ix.IndexLine, words: frozenset[str]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    title = _plain(line.title)
    if title and title == _plain(line.slugs[0].rsplit("/", 1)[-1]):
        problems.append(("restated", "the title only restates the slug"))
    elif title and title == _plain(line.trigger):
        problems.append(("restated", "the title only restates the trigger"))
    if len(line.trigger) > TRIGGER_MAX:
        problems.append(("too long", f"the trigger is too long ({len(line.trigger)} > {TRIGGER_MAX} chars)"))
    if not line.trigger.strip():
        problems.append(("vague", "the line has no trigger"))
    elif len(words) < MIN_CONTENT and not concrete(line.trigger):
        problems.append(
            ("vague", f"the trigger is vague (no name, number or identifier; {len(words)} content words)")
        )
    return problems


def content_words(text: str) -> frozenset[str]:
    """Lower-cased words of ``text`` that are neither stopwords nor generic."""
    words = (w.lower().replace("’", "'") for w in _WORD.findall(text))
    return frozenset(w for w in words if w not in STOP_WORDS and w not in GENERIC and len(w) > 1)


def concrete(text: str) -> bool:
    """True when ``text`` holds a number, an identifier, or a name (a capital after the first word)."""
    words = text.split()
    return any(
        any(c.isdigit() for c in w) or _IDENT.search(w.strip(".,;:()")) or (i > 0 and w[:1].isupper())
        for i, w in enumerate(words)
    )


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _plain(text: str) -> str:
    return " ".join(w.lower() for w in _WORD.findall(text.replace("_", " ").replace("-", " ")))


def _found(finding: RaggedLine) -> Outcome:
    return Outcome(finding.line, finding.slug, "found", "; ".join(finding.reasons), finding.text)


# -- asking the scribe ----------------------------------------------------------------------


def propose(
    store: Store, findings: tuple[RaggedLine, ...], model: ModelConfig
) -> tuple[list[Proposal], list[Outcome]]:
    """The scribe's accepted rewrites, and the findings left as they are (with why)."""
    system = system_prompt(store.charter)
    proposals: list[Proposal] = []
    left: list[Outcome] = []
    silent = False
    for f in findings:
        if silent:
            left.append(Outcome(f.line, f.slug, "left", "not asked: the scribe did not answer", f.text))
            continue
        got = _ask(store, f, model, system)
        if isinstance(got, Proposal):
            proposals.append(got)
        else:
            silent = got.startswith(_silence(model))
            left.append(Outcome(f.line, f.slug, "left", got, f.text))
    return proposals, left


def _ask(store: Store, finding: RaggedLine, model: ModelConfig, system: str) -> Proposal | str:
    try:
        memory = store.show(finding.slug)
    except KuraError as err:
        return f"the memory could not be read ({err}); the line is left as is"
    source = memory.note.raw or f"{memory.name}\n{memory.description}\n{memory.note.body}"
    user = (
        f"Memory {finding.slug}:\n{source.strip()}\n\nCurrent index line {finding.line}:\n{finding.text}\n\n"
        f"Why it is ragged: {'; '.join(finding.reasons)}\n"
    )
    reply = chat(model, system, user, max_tokens=MAX_TOKENS)
    if isinstance(reply, NoAnswer):
        return f"{_silence(model)} ({reply.reason})"
    return read_rewrite(reply, finding, source)


def read_rewrite(reply: str, finding: RaggedLine, source: str) -> Proposal | str:
    """The rewrite in ``reply`` if it passes every check, else why it was refused."""
    value = last_json_object(reply, "trigger")
    if value is None:
        return "the scribe's reply held no JSON rewrite; the line is left as is"
    title, trigger = value.get("title"), value.get("trigger")
    if not isinstance(title, str) or not isinstance(trigger, str):
        return "the scribe's rewrite lacks a text title or trigger; the line is left as is"
    title, trigger = title.strip(), trigger.strip()
    for text in (title, trigger):
        bad = next((m for m in _FORBIDDEN if m in text), None)
        if bad is not None:
            return f"refused: the rewrite contains {bad!r}"
    if not 1 <= len(title) <= ix.TITLE_MAX:
        return f"refused: the title must be 1–{ix.TITLE_MAX} characters (got {len(title)})"
    if not 1 <= len(trigger) <= TRIGGER_MAX:
        return f"refused: the trigger must be 1–{TRIGGER_MAX} characters (got {len(trigger)})"
    added = grounded(f"{title} {trigger}", f"{finding.slug}\n{source}")
    if added is not None:
        return f"refused: the rewrite {added} the memory does not contain"
    return Proposal(finding, title, trigger)


def system_prompt(charter: str) -> str:
    return with_charter(charter, f"{_INSTRUCTIONS}\n")


def _silence(model: ModelConfig) -> str:
    return f"the scribe ({model.model} at {model.url}) did not answer; the line is left as is"


# -- applying ---------------------------------------------------------------------------------


def apply(store: Store, proposals: list[Proposal]) -> tuple[Outcome, ...]:
    """Apply every proposal in one index edit; a line changed since it was read is skipped."""
    if not proposals:
        return ()
    outcomes: list[Outcome] = []

    def change(index: ix.Index) -> ix.Index:
        outcomes.clear()  # the store may run this again on a fresher index
        lines = list(index.lines)
        for p in proposals:
            position = _position(lines, p.finding)
            if position is None:
                why = "the line changed since it was read; left as the person wrote it"
                outcomes.append(Outcome(p.finding.line, p.finding.slug, "skipped", why, p.finding.text))
                continue
            new = ix.update_entry(lines[position], p.title, p.trigger)
            if new == lines[position].text:
                same = "the scribe's rewrite is the line as it was"
                outcomes.append(Outcome(position + 1, p.finding.slug, "left", same, p.finding.text))
                continue
            lines[position] = ix.classify_line(new)
            done = "rewritten from the memory's text"
            outcomes.append(Outcome(position + 1, p.finding.slug, "rewritten", done, p.finding.text, new))
        if not any(o.result == "rewritten" for o in outcomes):
            return index
        return replace(index, lines=tuple(lines))

    store.edit_index(change, actor="direct")
    return tuple(outcomes)


def _position(lines: list[ix.IndexLine], finding: RaggedLine) -> int | None:
    """Where the finding's line is now: at its number if its text is unchanged, else the
    one entry line with exactly that text (a person may have added lines above it)."""
    at = finding.line - 1
    if at < len(lines) and lines[at].text == finding.text and lines[at].kind == "entry":
        return at
    same = [i for i, ln in enumerate(lines) if ln.text == finding.text and ln.kind == "entry"]
    return same[0] if len(same) == 1 else None
