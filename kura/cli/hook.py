"""``kura hook …``: the hooks a host or git runs, as kura subcommands.

A hook ships inside the package, so a wheel installed as a tool has every hook; the host's
configuration names the absolute path of the ``kura`` that set it up. Each hook reads the
host's JSON on stdin where the host sends one.
"""

from __future__ import annotations

from kura.cli.base import App, app

hook_app = App(no_args_is_help=True, help="The hooks hosts and git run (they read the host's JSON on stdin).")
app.add_typer(hook_app, name="hook")
