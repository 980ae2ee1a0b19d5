"""The three arms of ``kura eval``, run side by side over one scenario.

- **kura**: before each session the agent is given ``kura.recall.context`` for its task from a
  real store in a temporary folder; after it, the session's transcript is written as a
  ``chat`` JSONL journal, one rule-based distiller pass reads it (``run_pass``, no model;
  its ladder measures what fell out of the working window against the same budget the
  window arm gets, so a fact is a TIDE exactly when the window arm has lost it too)
  and every staged draft is poured — the real path from transcript to memory, with no
  person reviewing the drafts, which is the hands-off case.
- **window**: the agent is given the raw history of the earlier sessions, as much of its
  end as fits the same token budget kura's context gets: no memory layer at all.
- **none**: the agent is given nothing.

All three see the same world, tasks and chatter; each writes its own history, because
what an agent did (failed, or got it right first) is what its next session can learn from.
Recall runs lexical-only: the embedder is ``Unavailable`` on purpose, so no model is
loaded and the result does not depend on one being installed. Witness dates are the real
today on both sides (the distiller stamps them, ``context`` judges with the same day), so
every age is zero and no run depends on the calendar.
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kura.distill.drafts import drafts, pour, toss
from kura.distill.run import run_pass
from kura.evals import agent
from kura.evals.scenarios import WINDOW, Scenario, Session, Step, chat_rows, render, transcript
from kura.recall.context import context
from kura.recall.embed import Unavailable
from kura.store.store import Store, init_store
from kura.text.tokens import estimate_tokens
from kura.transcripts.journals import Journals, Root

ARMS = ("kura", "window", "none")
DEFAULT_BUDGET = WINDOW  # tokens: kura's context budget and the window's size alike
Progress = Callable[[str, int, int], None]  # scenario, sessions done, sessions
Watch = Callable[[Session, str, str], None]  # session, arm, the text the arm was given


@dataclass(frozen=True, slots=True)
class Turn:
    """What one arm did in one session."""

    tried: str
    ok: bool
    stated: str | None
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {"tried": self.tried, "ok": self.ok, "stated": self.stated, "tokens": self.tokens}


@dataclass(frozen=True, slots=True)
class Kept:
    """What the kura arm's store held at the end: how many memories, which of them were
    superseded (old slug, new slug), how many staged drafts a pour refused, and each
    memory's evidence quotes (slug, quotes) — what it was written from."""

    memories: int
    superseded: tuple[tuple[str, str], ...]
    refused: int
    evidence: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class Run:
    scenario: Scenario
    budget: int
    turns: dict[str, tuple[Turn, ...]]
    store: Kept


def run(
    scenario: Scenario,
    *,
    budget: int = DEFAULT_BUDGET,
    progress: Progress | None = None,
    watch: Watch | None = None,
    folder: Path | None = None,
) -> Run:
    """Every session of ``scenario`` through all three arms. ``watch`` sees the text each
    arm was given; the kura arm's store and journals live in ``folder`` (which must not
    exist yet) when one is given, else in a temporary folder removed at the end."""
    if folder is not None:
        folder.mkdir(parents=True)
        return _run(scenario, budget, folder, progress, watch)
    with tempfile.TemporaryDirectory(prefix="kura-eval-") as tmp:
        return _run(scenario, budget, Path(tmp), progress, watch)


def _run(
    scenario: Scenario, budget: int, folder: Path, progress: Progress | None, watch: Watch | None
) -> Run:
    turns: dict[str, list[Turn]] = {arm: [] for arm in ARMS}
    history: list[str] = []
    memory = _Memory(folder, budget, dt.date.today())
    for session in scenario.sessions:
        given = {"kura": memory.context(session.lesson.ask), "window": window(history, budget), "none": ""}
        for arm in ARMS:
            if watch is not None:
                watch(session, arm, given[arm])
            turn, steps = _act(session, given[arm])
            turns[arm].append(turn)
            if arm == "kura":
                memory.learn(session.number, chat_rows(steps))
            elif arm == "window":
                history.append(render(session.number, steps))
        if progress is not None:
            progress(scenario.title, session.number, len(scenario.sessions))
    return Run(scenario, budget, {arm: tuple(t) for arm, t in turns.items()}, memory.kept())


def _act(session: Session, text: str) -> tuple[Turn, tuple[Step, ...]]:
    lesson = session.lesson
    first, known = agent.first_try(text, lesson.candidates, lesson.naive)
    steps = transcript(session, first)
    return Turn(first, first == session.value, known, estimate_tokens(text) if text else 0), steps


def window(history: list[str], budget: int) -> str:
    """The end of the history that fits ``budget`` tokens, cut at whole lines."""
    kept: list[str] = []
    used = 0
    for block in reversed(history):
        for line in reversed(block.splitlines()):
            cost = estimate_tokens(line + "\n")
            if used + cost > budget:
                return "\n".join(reversed(kept))
            kept.append(line)
            used += cost
    return "\n".join(reversed(kept))


class _Memory:
    """The kura arm's store and journals, in a temporary folder."""

    def __init__(self, folder: Path, budget: int, today: dt.date) -> None:
        self.store: Store = init_store(folder / "store", name="eval")[0]
        self.journals = folder / "journals"
        self.journals.mkdir()
        self.roots = Journals(roots=(Root(self.journals, "chat"),))
        self.budget, self.today = budget, today
        self.refused = 0

    def context(self, task: str) -> str:
        lexical = Unavailable("kura eval runs recall lexical-only, with no embedder")
        return context(self.store, task, budget=self.budget, today=self.today, embedder=lexical).text

    def learn(self, number: int, rows: list[dict[str, object]]) -> None:
        """One distiller pass over the session's transcript; every staged draft poured."""
        path = self.journals / f"session-{number:03d}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        run_pass(self.store, self.roots, window_tokens=self.budget)
        for draft in drafts(self.store):
            poured = pour(self.store, draft.id)
            if not poured.poured:
                self.refused += 1
                if not poured.quarantined:  # a quarantined draft has already been moved away
                    toss(self.store, draft.id, f"kura eval: the pour was refused ({poured.reason})")

    def kept(self) -> Kept:
        listed = self.store.list()
        pairs = [
            (m.slug, str(m.note.meta["superseded_by"])) for m in listed if m.note.meta.get("superseded_by")
        ]
        quoted = tuple((m.slug, _quotes(m.note.meta.get("evidence"))) for m in listed)
        return Kept(len(listed), tuple(pairs), self.refused, quoted)


def _quotes(evidence: object) -> tuple[str, ...]:
    return tuple(str(q) for q in evidence) if isinstance(evidence, list) else ()
