"""How the command line speaks when it stops: one line on stderr, the exit code an error's
class carries, and the version line.

Both the fast path (``kura.cli.entry``) and the typer app (``kura.cli.base``) end this way, so
it sits below both and imports nothing that costs: the shell-hook path loads it.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from kura.version import __version__

if TYPE_CHECKING:
    from kura.errors import KuraError


def version_line() -> str:
    return f"kura {__version__}"


def error_exit(err: KuraError) -> int:
    """The one way a ``KuraError`` leaves the command line: one line on stderr (``kura:
    error: …``, nothing secret repeated) and the exit code its class carries.
    ``KURA_DEBUG=1`` re-raises it, with the traceback, instead."""
    if os.environ.get("KURA_DEBUG") == "1":
        raise err
    warn(f"error: {err}")
    return err.exit_code


def warn(message: str) -> None:
    """One line on stderr that never repeats a secret it quotes (a mistyped store name)."""
    from kura.text.secrets import redact

    sys.stderr.write(f"kura: {redact(str(message))[0]}\n")
