"""``kura mcp`` without typer: what the command does, for the fast path and the typer command.

A host waits for ``kura mcp`` to answer ``initialize``, so ``kura.cli.entry`` sends a plain
``kura [globals] mcp [options]`` here without loading typer and every other command, and
the typer command (``kura.cli.mcp``, for ``--help`` and anything unusual) calls this same
function. It writes nothing to stdout itself — a host reads stdout as protocol — and logs
to stderr, which hosts show in their MCP logs. A setup mistake ends the process at once
with one line on stderr: a server that failed to start is clearer than one that fails
every call.
"""

from __future__ import annotations

import contextlib
import logging
import os

from kura.cli.exit import error_exit
from kura.errors import KuraError
from kura.serve.mcp_specs import readonly_from
from kura.serve.mcp_stdio import check, serve


def mcp_command(config: str | None, store: str | None, *, writable: bool | None, thread: str | None) -> int:
    """Serve until the host closes stdin: 0, or 1 after a setup mistake. ``store`` is the
    command's or the global one (else ``$KURA_STORE``); ``writable`` the switch, if given."""
    logging.basicConfig(level=logging.WARNING, format="kura mcp: %(levelname)s %(name)s: %(message)s")
    env = os.environ
    bound = store or env.get("KURA_STORE") or None
    chosen = thread or env.get("KURA_THREAD") or None
    readonly = readonly_from(env, writable)
    try:
        check(config, bound, thread=chosen, env=env)
        with contextlib.suppress(KeyboardInterrupt):
            serve(config, bound, readonly=readonly, thread=chosen, env=env)
    except KuraError as err:
        return error_exit(err)
    return 0
