"""``kura hook capture`` and ``kura hook prompt``: what a session said reaches memory by itself.

Both read the host's JSON on stdin and never fail the host: whatever goes wrong, they exit
0 with one line on stderr (a hook that exits non-zero shows the person an error on every
turn, and a ``Stop`` hook's exit 2 would even keep Claude Code working). The work lives in
``kura.hosts.capture`` and ``kura.hosts.prompt``.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from kura.cli.base import Globals
from kura.cli.exit import warn
from kura.cli.hook import hook_app
from kura.cli.host_input import host_input


@hook_app.command("capture")
def capture(ctx: typer.Context) -> None:
    """Claude Code's Stop, SessionEnd and PreCompact hook: register the session's transcript
    as a journal of the store a command run in its folder would use (no kura.toml edit), and
    leave one distill pass running in the background. Returns at once; always exit 0."""
    from kura.hosts.capture import hook

    g: Globals = ctx.obj
    text = host_input(hook="capture").decode("utf-8", "replace")
    problem = hook(text, selector=g.store or os.environ.get("KURA_STORE") or None)
    if problem:
        warn(problem)


@hook_app.command("prompt")
def prompt(
    ctx: typer.Context,
    max_chars: Annotated[
        int, typer.Option("--max-chars", help="The most characters printed (the block included).")
    ] = 1500,
) -> None:
    """Claude Code's UserPromptSubmit hook (opt-in): print the memories that bear on the
    prompt, above recall's relevance floor, within --max-chars; print nothing when nothing
    bears. No model is asked. Always exit 0."""
    from kura.hosts.prompt import hook

    g: Globals = ctx.obj
    text = host_input(hook="prompt").decode("utf-8", "replace")
    printed, problem = hook(
        text, selector=g.store or os.environ.get("KURA_STORE") or None, max_chars=max_chars
    )
    sys.stdout.write(printed)
    if problem:
        warn(problem)
