"""``kura mcp``: the MCP server over stdio, for hosts that start it themselves.

A host reads the server's stdout as protocol, so this command writes nothing there itself
and logs to stderr (which hosts show in their MCP logs). A setup mistake — no such store,
a broken kura.toml — ends the process at once with one line on stderr: a host then reports
a server that failed to start, which is clearer than a server that fails every call.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Annotated

import typer

from kura.cli.base import Globals, app, core


@app.command("mcp")
def mcp_(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
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
    from kura.serve.mcp_server import open_backend, readonly_from, serve_stdio
    from kura.serve.mcp_threads import ThreadTools

    g: Globals = ctx.obj
    logging.basicConfig(level=logging.WARNING, format="kura mcp: %(levelname)s %(name)s: %(message)s")
    env = os.environ
    bound = store or g.store or env.get("KURA_STORE") or None
    readonly = readonly_from(env, writable)
    backend = core(lambda: open_backend(g.config, bound, readonly=readonly, env=env))
    chosen = thread or env.get("KURA_THREAD") or None
    tools = core(lambda: ThreadTools(backend, readonly=readonly, thread=chosen))
    with contextlib.suppress(KeyboardInterrupt):
        serve_stdio(tools)
