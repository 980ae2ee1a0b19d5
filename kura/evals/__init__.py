"""``kura eval``: does memory earn its place? Three arms on one synthetic history.

A session that discovers ``make check`` after ``make test`` fails should leave the next
one already knowing. The eval runs that many times, three ways — kura's memory (the
rule-based distiller and lexical recall, no model), no memory, and the same history simply
carried forward in a window of the same token budget — and reports each against the
ceiling of what was knowable. The window is the rival that matters: it can win, and on a
short history it draws, and the report prints that as plainly as a win
(``kura.evals.report``).

Scenarios (``kura.evals.scenarios``): one lesson repeated; several lessons in a seeded
random rotation; facts the user tells in passing, which the rule-based distiller keeps only
as spans — the window carries the sentence, so there the window should win, and the run
says by how much; facts said in passing that scroll out of the working window and recur in
unrelated sessions, the world of the witness ladder (TIDE, CALLUS); and, with ``long``, a
long history where lessons come back many sessions later and one working command is
replaced midway. The agent (``kura.evals.agent``) reads
every arm's text with the same procedure; the arms are run by ``kura.evals.arms``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kura.errors import InvalidRequest
from kura.evals import report as rp
from kura.evals.arms import DEFAULT_BUDGET, Progress, Run, run
from kura.evals.scenarios import build

SESSIONS = {"one": 20, "rotated": 20, "passing": 20, "recurring": 20, "long": 60}
DEFAULT_KINDS = ("one", "rotated", "passing", "recurring")
MAX_SESSIONS = 500


@dataclass(frozen=True, slots=True)
class EvalReport:
    seed: int
    budget: int
    runs: tuple[Run, ...]
    figures: tuple[rp.Figures, ...]

    def text(self) -> str:
        blocks = [rp.render(f, budget=self.budget, seed=self.seed) for f in self.figures]
        return "\n\n".join(blocks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "budget": self.budget,
            "recall": "lexical",
            "scenarios": [rp.to_dict(f, r) for f, r in zip(self.figures, self.runs, strict=True)],
        }


def evaluate(
    *,
    sessions: int | None = None,
    long: bool = False,
    seed: int = 0,
    budget: int = DEFAULT_BUDGET,
    kinds: tuple[str, ...] | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """Run the scenarios (one lesson, rotated lessons, a fact said in passing, facts that
    recur in passing; the long one too with ``long``)
    with ``sessions`` each (else each scenario's default) and report them."""
    if sessions is not None and not 2 <= sessions <= MAX_SESSIONS:
        raise InvalidRequest(f"--sessions {sessions}: give between 2 and {MAX_SESSIONS}")
    chosen = kinds or ((*DEFAULT_KINDS, "long") if long else DEFAULT_KINDS)
    runs = tuple(
        run(build(kind, sessions or SESSIONS[kind], seed, window=budget), budget=budget, progress=progress)
        for kind in chosen
    )
    return EvalReport(seed, budget, runs, tuple(rp.figures(r) for r in runs))
