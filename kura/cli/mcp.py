"""``kura mcp``: the MCP server over stdio, for hosts that start it themselves.

The typer command, for ``--help`` and anything the fast path in ``kura.cli.entry`` does not
parse; both call ``kura.cli.mcp_run.mcp_command``, which says what the command does.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kura.cli.base import Globals, app
from kura.cli.mcp_run import mcp_command


@app.command("mcp")
def mcp_(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            "-s",
            help="Bind to this store or mode: the tools lose their store argument and kura_use "
            "(else the global -s, else $KURA_STORE; unset: free to switch).",
        ),
    ] = None,
    writable: Annotated[
        bool | None,
        typer.Option(
            "--writable/--readonly",
            help="--writable offers kura_remember where the store's policy allows; --readonly never "
            "(the default; unset, $KURA_READONLY=0 means --writable). Same switch as `kura serve`.",
        ),
    ] = None,
    thread: Annotated[
        str | None,
        typer.Option(
            "--thread",
            help="Bind to this thread: kura_memory and kura_observe reach its folder threads/ID/ "
            "and no other (else $KURA_THREAD; unset: each call names its thread).",
            metavar="ID",
        ),
    ] = None,
) -> None:
    """Serve the memory to an MCP host over stdio (Claude Code, VS Code, Goose, …).

    Read-only unless --writable or KURA_READONLY=0 (--readonly wins over the variable).
    With KURA_URL set it calls that running `kura serve` (KURA_TOKEN as its bearer token)
    instead of opening the stores itself."""
    g: Globals = ctx.obj
    raise typer.Exit(mcp_command(g.config, store or g.store, writable=writable, thread=thread))
