"""How the command line speaks when it stops: one line on stderr, the exit code an error's
class carries, and the version line.

Both the fast path (``kura.cli.entry``) and the typer app (``kura.cli.base``) end this way, so
it sits below both and imports nothing that costs: the shell-hook path loads it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, TypeGuard

from kura.version import __version__

if TYPE_CHECKING:
    import io

    from kura.errors import KuraError


READER_GONE = 141  # 128 + SIGPIPE: what a shell shows for `yes | head -1`'s writer


def quiet_when_the_reader_leaves(main: Callable[[], None]) -> Callable[[], None]:
    """``kura list | head -1``: when the reader closes the pipe, stop quietly — no
    traceback, no "unexpected error" — with exit 141, the shell's code for a writer whose
    reader left (128 + SIGPIPE), so a script can tell a cut-short listing from a whole one.
    Click meets the broken pipe first inside a typer command: it swaps stdout for a
    ``PacifyFlushWrapper`` and exits 1, which is turned into the same 141 here."""

    @functools.wraps(main)
    def wrapped() -> None:
        try:
            main()
        except BrokenPipeError:
            _reader_gone()
        except SystemExit:
            if type(sys.stdout).__name__ == "PacifyFlushWrapper":
                _reader_gone()
            try:
                sys.stdout.flush()  # now, where it can be caught, not at the interpreter's exit
            except BrokenPipeError:
                _reader_gone()
            raise

    return wrapped


# a host's hook promises exit 0 whatever happens: a host that stopped reading is no failure of kura's
_HOST_HOOKS = (["hook", "session-start"], ["hook", "capture"], ["hook", "prompt"])


def _reader_gone() -> NoReturn:
    with contextlib.suppress(OSError):  # what is still buffered for the pipe must not complain at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno() if sys.__stdout__ else 1)
    sys.exit(0 if _host_hook(sys.argv[1:]) else READER_GONE)


def _host_hook(argv: list[str]) -> bool:
    """Whether the command after the global options (``-s X``, ``--store=X``) is a host's hook."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 1 if "=" in argv[i] else 2
    return argv[i : i + 2] in _HOST_HOOKS


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


def echo(text: str) -> None:
    """``typer.echo(text)``, byte for byte, without importing typer when nothing has (a
    plain ``kura list`` or ``kura doctor`` at 20,000 memories is a few tenths of a second,
    and typer's import a tenth of that): on a POSIX text stdout with a real encoding, what
    click writes is the text and a newline, ANSI codes stripped when stdout is no terminal."""
    out = sys.stdout
    if "typer" in sys.modules or not plain_stream(out):
        import typer  # a click context (its colour setting) or a stream click would rewrap

        typer.echo(text)
        return
    write_plain(text, out)


def plain_stream(stream: object) -> TypeGuard[io.TextIOWrapper]:
    """A stream click's echo writes to as it is (``_force_correct_text_writer``): an
    ``io.TextIOWrapper`` with an encoding other than ASCII and an error mode, off Windows,
    not a notebook's."""
    import codecs
    import io

    if sys.platform.startswith(("win", "cygwin")) or not isinstance(stream, io.TextIOWrapper):
        return False
    if stream.errors is None or type(stream).__module__.startswith("ipykernel."):
        return False
    try:
        return codecs.lookup(stream.encoding).name != "ascii"
    except LookupError:
        return False


def write_plain(text: str, stream: io.TextIOWrapper) -> None:
    """What click's echo writes to ``stream`` (``plain_stream``) when no context sets a colour."""
    out = text + "\n"
    try:
        terminal = stream.isatty()
    except Exception:  # noqa: BLE001 - as click: a stream that cannot say is no terminal
        terminal = False
    if not terminal:
        import re

        out = re.sub(r"\033\[[;?0-9]*[a-zA-Z]", "", out)
    stream.write(out)
    stream.flush()
