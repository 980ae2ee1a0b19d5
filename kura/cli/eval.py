"""``kura eval``: the three-arm benchmark at the command line (``kura.evals`` does the work)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from kura.cli.base import JsonOpt, app, core, print_json, say

if TYPE_CHECKING:
    from kura.evals import EvalReport
    from kura.evals.arms import Progress


@app.command("eval")
def eval_(
    sessions: Annotated[
        int | None,
        typer.Option(
            "--sessions",
            "-n",
            help="Sessions per scenario (default 20; 60 for the long one).",
            min=2,
            max=500,
        ),
    ] = None,
    long: Annotated[
        bool, typer.Option("--long", help="Add the long history where one fact is replaced midway.")
    ] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the synthetic world.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Does memory earn its place? Runs synthetic sessions three ways — kura's memory
    (rule-based distiller, lexical recall), no memory, and the same history carried forward
    in a window of the same token budget — and reports task success against the ceiling,
    injected tokens and assertion accuracy. No clock, no model, no network, no embedder:
    the same seed gives the same report."""
    report = core(lambda: _evaluate(sessions, long, seed))
    if as_json:
        print_json(report.to_dict())
    else:
        say(report.text())


def _evaluate(sessions: int | None, long: bool, seed: int) -> EvalReport:
    from kura.evals import evaluate

    try:
        return evaluate(sessions=sessions, long=long, seed=seed, progress=_progress())
    finally:
        if sys.stderr.isatty():
            typer.echo("\r\033[K", err=True, nl=False)


def _progress() -> Progress | None:
    """A one-line progress display on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(title: str, done: int, total: int) -> None:
        typer.echo(f"\r\033[Keval: {title} — session {done} of {total}", err=True, nl=False)

    return show
