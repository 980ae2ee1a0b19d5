"""``kura serve``: the HTTP service (and MCP over streamable HTTP at ``/mcp``).

A thin edge: read the options and the config, settle the token, call ``kura.serve.http.serve``.
fastapi and uvicorn are imported only when the command runs, so the shell-hook commands
never pay for them.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Annotated, Any

import typer

from kura import config as cfg
from kura.cli.base import Globals, app, core
from kura.serve.access import resolve_token

EXAMPLES = """\b
Examples:
  kura serve                                  # http://127.0.0.1:8085
  curl -s -X POST localhost:8085/recall \\
       -d '{"question":"what did we decide about the archive disk?","hops":1}'
  curl -s localhost:8085/index?store=maker
  curl -s localhost:8085/s/eq/doctor          # path form, for clients that only vary a base URL
  KURA_TOKEN=$(openssl rand -hex 24) kura serve --host 0.0.0.0
  curl -s -H "Authorization: Bearer $KURA_TOKEN" http://HOST:8085/stores

Routes, errors and the token: docs/http.md (or GET /openapi.json)."""


@app.command(epilog=EXAMPLES)
def serve(
    ctx: typer.Context,
    host: Annotated[
        str | None,
        typer.Option(help="Address ([server] host, else 127.0.0.1); beyond loopback it needs a token."),
    ] = None,
    port: Annotated[
        int | None, typer.Option(min=0, max=65535, help="Port ([server] port, else 8085).")
    ] = None,
    token_env: Annotated[
        str,
        typer.Option("--token-env", metavar="NAME", help="Variable with the token (else [server] token)."),
    ] = "KURA_TOKEN",
    writable: Annotated[
        bool | None,
        typer.Option(
            "--writable/--readonly",
            help="--readonly refuses every write (HTTP and /mcp), whatever the stores' write policies; "
            "--writable lets /mcp clients write too, as `kura mcp --writable` does. Unset: HTTP writes "
            "follow the policies, /mcp is read-only unless KURA_READONLY=0.",
        ),
    ] = None,
    thread: Annotated[
        str | None,
        typer.Option(
            "--thread",
            metavar="ID",
            help="Answer for this thread only: /threads/ID/…, /observe and /mcp reach no other thread.",
        ),
    ] = None,
) -> None:
    """Serve the configured stores over HTTP (and MCP at /mcp), warm between requests.

    One process serves every store in kura.toml; each request names one with ?store= or
    ?mode=, a store/mode field in its JSON body, or the /s/NAME/ path prefix. With the
    global --store, only that store is served. A file watcher per store brings hand edits
    to recall at once. Listens on loopback; any other address needs a bearer token, which
    is then checked on every route but /health. Runs until Ctrl-C."""
    from kura.serve.http import serve

    g: Globals = ctx.obj
    config, bound = core(lambda: _config(g))
    token = resolve_token(config, dict(os.environ), token_env)
    chosen_host = host or str(config.server.get("host") or "127.0.0.1")
    chosen_port = port if port is not None else int(config.server.get("port") or 8085)

    def run() -> None:
        serve(config, host=chosen_host, port=chosen_port, token=token, readonly=writable is False,
              mcp_readonly=None if writable is None else not writable, bound=bound,
              thread=thread)  # fmt: skip

    core(run)


def _config(g: Globals) -> tuple[Any, str | None]:
    """The config to serve and the store it is bound to (``--store``); a folder path that is
    no configured store is served alone, under its folder's name."""
    config = cfg.load_config(g.config)
    if not g.store:
        return config, None
    chosen = config.store_config(g.store)
    if chosen.name in config.stores and config.stores[chosen.name] == chosen:
        return config, chosen.name
    server = {k: v for k, v in config.server.items() if k != "default"}
    alone = replace(config, stores={chosen.name: chosen}, modes={}, server=server, project="", person="")
    return alone, chosen.name
