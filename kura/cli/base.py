"""What every ``kura`` command shares: the typer app, global options, and the one way a
core call becomes output and an exit code.

Exit codes are part of the interface, because schedulers and shell hooks read them:
0 did work (or printed what was asked), 2 nothing to do or nothing found, 1 failure or
refusal. Every ``KuraError`` becomes one line on stderr that says what, where and what
next; ``KURA_DEBUG=1`` re-raises it with the traceback instead.
"""

from __future__ import annotations

import datetime as dt
import importlib
import io
import json
import os
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from typer.core import TyperArgument, TyperCommand

from kura import config as cfg
from kura.cli.exit import error_exit, version_line
from kura.errors import KuraError, NoStore
from kura.store.store import init_store
from kura.text.secrets import find_secret, redact

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class Command(TyperCommand):
    """A command whose arguments read as click shows them (``SLUG``, ``[BODY]``), in the usage
    line, the argument list and error messages, rather than typer's ``{slug}``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperArgument) and param.metavar is None and param.name:
                param.metavar = param.name.upper()

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                shown = str(param.metavar) if param.required else f"[{param.metavar}]"
                pieces.append(shown + ("..." if param.nargs != 1 else ""))
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces


class App(typer.Typer):
    """``typer.Typer`` whose commands are ``Command``s."""

    def command(
        self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Callable[[F], F]:
        return super().command(name, cls=cls or Command, **kwargs)


app = App(
    name="kura",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    help="kura: a filesystem-native markdown memory for AI agents.\n\n"
    "A store is a folder of one-fact markdown files plus a MEMORY.md index. "
    "Global options go before the command: kura --config k.toml -s maker list",
)
import_app = App(no_args_is_help=True, help="Bring an existing memory folder into a store.")
app.add_typer(import_app, name="import")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
GLOBAL_OPTIONS = ("--config", "-c", "--store", "-s")


@dataclass(frozen=True, slots=True)
class Globals:
    config: str | None
    store: str | None  # -s, else $KURA_STORE
    store_from: str = ""  # which of the two named it: "-s" or "$KURA_STORE"


@app.callback()
def main(
    ctx: typer.Context,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            "-c",
            help="kura.toml to use (else $KURA_CONFIG, ./kura.toml, ~/.config/kura/kura.toml).",
            metavar="FILE",
        ),
    ] = None,
    stores: Annotated[
        list[str] | None,
        typer.Option(
            "--store",
            "-s",
            help="Store or mode name (or a folder path) to work on (else $KURA_STORE, else the "
            "project's memory/ found up to the git root, else the configured default). One store "
            "per command: give it once.",
            metavar="STORE",
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, help="Print kura's version and exit.")
    ] = False,
) -> None:
    if version:
        say(version_line())
        raise typer.Exit(0)
    store = one_store(stores or [])
    env = os.environ.get("KURA_STORE", "").strip()
    ctx.obj = Globals(config, store or env or None, "-s" if store else "$KURA_STORE" if env else "")


def one_store(given: list[str]) -> str | None:
    """The store ``-s`` names; given twice is refused rather than the last one silently used."""
    if len(given) > 1:
        fail(
            f"-s/--store was given {len(given)} times ({', '.join(map(repr, given))}); a command works "
            "on one store — run it once per store (a project's store is read together with the "
            "person's own by itself, see docs/stores.md)"
        )
    return given[0] if given else None


def store_from(ctx: typer.Context) -> Any:
    g: Globals = ctx.obj
    return core(lambda: cfg.load_config(g.config).open(g.store))


def store_or_new(ctx: typer.Context) -> Any:
    """The store to write a first memory into: made (``init``) when there is none yet and
    the config allows it (``Config.creatable``), said on stderr; reads never make one."""
    g: Globals = ctx.obj
    config = core(lambda: cfg.load_config(g.config))

    def opened() -> Any:
        try:
            return config.open(g.store)
        except NoStore:
            return None  # any other refusal (an unknown name, say) is said by core

    store = core(opened)
    if store is not None:
        return store
    target = config.creatable(g.store)
    if target is None:
        return store_from(ctx)  # says why, exit 1
    store, _ = core(lambda: init_store(target.path, name=target.name))
    warn(f"made store '{target.name}' at {target.path} (MEMORY.md, and a .gitignore for .kura/)")
    return store


def core(call: Callable[[], T]) -> T:
    """Call into the core; turn a KuraError into a message and an exit code."""
    try:
        return call()
    except KuraError as err:
        raise typer.Exit(error_exit(err)) from None


def day_from(at: str | None) -> dt.date:
    """The day an ``--at DATE`` option names (today when it names none)."""
    if at is None:
        return dt.date.today()
    try:
        return dt.date.fromisoformat(at)
    except ValueError:
        fail(f"--at {at!r}: expected a date as YYYY-MM-DD")


def confirmed(question: str) -> bool:
    """The person's yes to a deletion; with no answer to read (a script, stdin closed) a no
    that says how to run it without the question (``--yes``)."""
    try:
        return typer.confirm(question, default=False)
    except typer.Abort:
        say("")  # ends the question's line
        fail("no answer could be read; nothing was removed — run it again with --yes to purge")


def fail(message: str) -> NoReturn:
    warn(f"error: {message}")
    raise typer.Exit(1)


def say(message: str) -> None:
    typer.echo(message)


def warn(message: str) -> None:
    """One line on stderr; a message that quotes what it was given never repeats a secret."""
    typer.echo(f"kura: {redact(message)[0]}", err=True)


def print_json(value: Any, *, inert: bool = False) -> None:
    """``inert``: every non-ASCII character escaped, for text read from derived state a cloned
    repository may carry (no C1 control or bidi override reaches a terminal raw)."""
    typer.echo(json.dumps(value, ensure_ascii=inert, indent=2, default=str))


def click_exception() -> type[Exception]:
    """Usage errors' base class (typer vendors click from 0.20 on; older typer uses click)."""
    for module in ("typer._click.exceptions", "click.exceptions"):
        try:
            found: type[Exception] = importlib.import_module(module).ClickException
        except (ImportError, AttributeError):
            continue
        return found
    return RuntimeError


_OPTION_NAME = re.compile(r"--?[A-Za-z][A-Za-z0-9-]{0,40}")


def show_usage_error(err: Exception) -> None:
    """A usage error as click shows it, minus anything secret-shaped it would repeat: an
    unknown "option" that is not shaped like one (a pasted ``-----BEGIN …`` key, a token
    after a dash) is not quoted at all, and every other quoted value is redacted."""
    name = getattr(err, "option_name", None)
    unknown = type(err).__name__ == "NoSuchOption" and isinstance(name, str)
    if unknown and (not _OPTION_NAME.fullmatch(str(name)) or find_secret(str(name))):
        err.message = (  # type: ignore[attr-defined]
            "No such option; what was given is not repeated, as it does not look like an option name "
            "(text that starts with - goes after --)"
        )
    shown = io.StringIO()
    err.show(file=shown)  # type: ignore[attr-defined]
    sys.stderr.write(redact(shown.getvalue())[0])


def misplaced_global(err: Exception, argv: list[str]) -> str | None:
    """For a global option given after the command (``kura list -s main``): the hint that
    names it and shows the command line with it moved before the command; else None."""
    name = getattr(err, "option_name", None)
    ctx = getattr(err, "ctx", None)
    if (
        type(err).__name__ != "NoSuchOption"
        or name not in GLOBAL_OPTIONS
        or ctx is None
        or ctx.parent is None
    ):
        return None
    first = 0  # past the global options already before the command
    while first < len(argv) and argv[first].startswith(
        ("-c", "-s", "--config=", "--store=", "--config", "--store")
    ):
        first += 2 if argv[first] in GLOBAL_OPTIONS else 1  # "-s x", else "--store=x" or "-sx"
    for i in range(first + 1, len(argv)):
        if argv[i] == "--":
            break
        if argv[i] == name or (name.startswith("--") and argv[i].startswith(name + "=")):
            taken = argv[i : i + (1 if "=" in argv[i] else 2)]
            moved = argv[:first] + taken + argv[first:i] + argv[i + len(taken) :]
            return f"{name} is a global option: it goes before the command: kura {shlex.join(moved)}"
    return None


def stdin_text() -> str:
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError as err:
        fail(f"standard input is not UTF-8 (byte {err.start}); nothing was written — re-encode it")
