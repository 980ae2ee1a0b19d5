"""``kura hook …``: the hooks a host or git runs, as kura subcommands.

A hook ships inside the package, so a wheel installed as a tool has every hook; the host's
configuration names the absolute path of the ``kura`` that set it up. Each hook reads the
host's JSON on stdin where the host sends one.

``session-start`` is answered by the front door (``kura.cli.entry``) when it has no option
but ``--max-chars``; this command is the same function for the rest. The git hooks take the
store from the repository they run in (the top of its work tree), unless ``-s`` or
``KURA_STORE`` names one: ``kura git install --hooks`` writes hooks that name it.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Annotated

import typer

from kura import config as cfg
from kura.cli.base import App, Globals, app, core
from kura.cli.checkup import show_reports
from kura.cli.look import store_report
from kura.cli.map import weave_command
from kura.cli.session_start import CEILING, session_start_command
from kura.git.repository import find_repo

hook_app = App(no_args_is_help=True, help="The hooks hosts and git run (they read the host's JSON on stdin).")
app.add_typer(hook_app, name="hook")

GitArgs = Annotated[list[str] | None, typer.Argument(hidden=True, help="What git passes; not used.")]


@hook_app.command("session-start")
def session_start(
    ctx: typer.Context,
    max_chars: Annotated[
        int,
        typer.Option(
            "--max-chars",
            metavar="N",
            help=f"Never print more than N characters in all (default {CEILING}: Claude Code keeps only a "
            "preview past 10,000; 0: no ceiling).",
        ),
    ] = CEILING,
) -> None:
    """A host's SessionStart hook: print the map of the store chosen from the folder in the
    host's JSON on stdin (its "cwd"), and how many drafts wait for review.

    Always exit 0: when kura cannot answer, the block says the map is MISSING and why."""
    g: Globals = ctx.obj
    chosen = {k: v for k, v in (("config", g.config), ("store", g.store)) if v}
    raise typer.Exit(session_start_command({**chosen, "max_chars": str(max_chars)}))


@hook_app.command("pre-commit")
def pre_commit(ctx: typer.Context, args: GitArgs = None) -> None:
    """git's pre-commit hook: refuse the commit while `kura doctor --strict --staged` finds a
    problem in the store as staged. Bypass once with `git commit --no-verify`.

    Exit 0 to let the commit go on, 1 to refuse it."""
    g: Globals = ctx.obj
    selector = _repository_store(g)
    config = core(lambda: cfg.load_config(g.config))
    report = core(lambda: store_report(config, selector, staged=True))
    if show_reports([report], each=True, strict=True):
        typer.echo("kura pre-commit: fix the findings above (or commit with --no-verify)", err=True)
        raise typer.Exit(1)


@hook_app.command("post-merge")
def post_merge(ctx: typer.Context, args: GitArgs = None) -> None:
    """git's post-merge hook: weave the map again after a merge or pull changed files.
    Always exit 0: a map left stale is re-woven by the next prefill anyway."""
    _reweave(ctx.obj)


@hook_app.command("post-checkout")
def post_checkout(ctx: typer.Context, args: GitArgs = None) -> None:
    """git's post-checkout hook: weave the map again after a checkout changed files.
    Always exit 0: a map left stale is re-woven by the next prefill anyway."""
    _reweave(ctx.obj)


def _repository_store(g: Globals) -> str:
    """``-s``, else ``KURA_STORE`` (both in ``g.store``), else the top of the work tree git
    runs the hook in."""
    return g.store or str(core(lambda: find_repo(Path.cwd())).top)


def _reweave(g: Globals) -> None:
    """``kura weave`` for the repository's store, silent, never failing git."""
    quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())
    with contextlib.suppress(Exception), quiet[0], quiet[1]:  # a hook never fails the git command
        chosen = {"store": _repository_store(g), **({"config": g.config} if g.config else {})}
        weave_command(chosen)
    raise typer.Exit(0)
