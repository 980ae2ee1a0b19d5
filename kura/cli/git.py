"""``kura git …``: set a repository up for sharing a store, and the merge driver git runs."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from kura.cli.base import App, app, core, fail, say, store_from, warn
from kura.git.index_merge import merge
from kura.git.repository import driver_command, install, merge_committed, merge_context
from kura.store.safe_read import INDEX_CAP

git_app = App(no_args_is_help=True, help="Share a store through git: the MEMORY.md merge driver, hooks.")
app.add_typer(git_app, name="git")


@git_app.command("install")
def install_(
    ctx: typer.Context,
    hooks: Annotated[
        bool,
        typer.Option(
            "--hooks", help="Also install kura's git hooks (pre-commit, post-merge, post-checkout)."
        ),
    ] = False,
) -> None:
    """Set up the git repository holding the store: MEMORY.md merges with kura's driver
    (.gitattributes and the repository's git config), and with --hooks kura's git hooks.

    Exit 0 when something was set up, 2 when all of it already was, 1 outside a git
    repository, without git, or when a hook that is not kura's is in the way."""
    store = store_from(ctx)
    found = core(
        lambda: install(store.root, driver=driver_command(sys.executable), hooks=hooks, kura_bin=_kura_bin())
    )  # fmt: skip
    for line in found.done:
        say(line)
    for line in found.already:
        say(f"already: {line}")
    for line in found.refused:
        warn(f"error: {line}")
    if found.refused:
        raise typer.Exit(1)
    if not found.done:
        raise typer.Exit(2)


def _kura_bin() -> str:
    """The ``kura`` the hooks run: the one beside this Python (a venv's), else on PATH."""
    beside = Path(sys.executable).parent / "kura"
    if beside.is_file():
        return str(beside)
    return shutil.which("kura") or "kura"


@git_app.command("merge-index")
def merge_index(
    base: Annotated[Path, typer.Argument(help="The common ancestor's MEMORY.md (git's %O).")],
    ours: Annotated[Path, typer.Argument(help="Ours (git's %A); the merged index is written here.")],
    theirs: Annotated[Path, typer.Argument(help="Theirs (git's %B).")],
    path: Annotated[
        str | None, typer.Argument(help="Where MEMORY.md is in the repository (git's %P): memories' dates.")
    ] = None,
    marker_size: Annotated[int, typer.Option("--marker-size", help="Conflict marker length (git's %L).")] = 7,
) -> None:
    """git's merge driver for MEMORY.md: merge line by memory, write the result into OURS.

    Exit 0 when clean, 1 when both sides changed the same prose (conflict markers there,
    never in an entry line). What it decided is said on stderr."""
    texts = []
    for file in (base, ours, theirs):
        try:
            if file.stat().st_size > INDEX_CAP:
                fail(f"{file}: over {INDEX_CAP >> 20} MiB, not read; {path or 'MEMORY.md'} is left for git "
                     "to mark as a conflict")  # fmt: skip
            texts.append(file.read_bytes().decode("utf-8", "surrogateescape"))
        except OSError as err:
            fail(f"{file}: cannot be read ({err.strerror}); {path or 'MEMORY.md'} is left as a conflict")
    dated, labels = merge_context(path, Path.cwd())
    committed = merge_committed(path, Path.cwd())
    merged = merge(*texts, dated=dated, committed=committed, labels=labels, marker_size=marker_size)
    try:
        ours.write_bytes(merged.text.encode("utf-8", "surrogateescape"))
    except OSError as err:
        fail(f"{ours}: cannot be written ({err.strerror}); {path or 'MEMORY.md'} is left as a conflict")
    where = path or "MEMORY.md"
    for note in merged.notes:
        warn(f"{where}: {note}")
    for line in merged.conflicts:
        warn(f"{where}:{line}: both sides changed the same lines here; left as a conflict — "
             f"edit them, then `git add {where}`")  # fmt: skip
    if not merged.clean:
        raise typer.Exit(1)
