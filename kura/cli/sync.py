"""``kura sync``: share a store through git (``kura.git.sync``), then re-weave its map."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kura import config as cfg
from kura.cli.base import Globals, JsonOpt, app, core, fail, print_json, say, warn
from kura.errors import GitError, KuraError
from kura.git.sync import sync
from kura.map.weave import describe, weave

if TYPE_CHECKING:
    from kura.git.sync import Synced
    from kura.store.store import Store

_HELP = """Share the store through git: commit it, pull (rebase), push, re-weave the map.

\b
  1. commit the store's folder only — never .kura/, never other files of the
     repository — with a message listing the memories added (+), changed (~)
     and forgotten (-): kura sync: +2 ~1 -1 (deploy-day, …); --message replaces it
  2. git fetch; when the upstream has new commits, git rebase onto them: the merge
     drivers the repository configures apply (`kura git install` adds the one for
     MEMORY.md), and your uncommitted changes outside the store are set aside and
     put back
  3. git push the branch to its upstream (commits you made yourself and have not
     pushed go too), then re-weave the map (as kura weave does)

When anything fails — a conflict no merge driver can merge, no remote, a refused push —
the repository is left exactly as it was (HEAD, index, files, stash list) and the message
names the one command to run next.

\b
Once per repository (docs/sharing.md has the setups):
  git remote add origin URL
  git push -u origin main

Exit 0 when something moved (committed, pulled or pushed), 2 when there was nothing to do,
1 when it failed or was refused (and nothing changed)."""


@app.command("sync", help=_HELP)
def sync_(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option("--store", metavar="S", help="Store or mode to sync (else -s, or the default)."),
    ] = None,
    message: Annotated[
        str | None,
        typer.Option("--message", "-m", metavar="M", help="Commit message (else one listing the memories)."),
    ] = None,
    no_model: Annotated[bool, typer.Option("--no-model", help="Re-weave mechanically (no model).")] = False,
    as_json: JsonOpt = False,
) -> None:
    g: Globals = ctx.obj
    if message is not None and not message.strip():
        fail("--message is empty; give the commit a message, or leave it out for one listing the memories")
    config = core(lambda: cfg.load_config(g.config))
    chosen = store or g.store
    opened = core(lambda: config.open(chosen))
    synced = core(partial(_synced, opened, message, as_json))
    if not synced.moved:
        _nothing(synced, as_json)
    woven = _reweave(config, chosen, opened, no_model=no_model)
    if as_json:
        print_json({**synced.to_dict(), "woven": woven})
        return
    _describe(synced)
    if woven is not None and woven.get("line"):
        say(f"map: {woven['line']}")
    _dangling(opened)


def _dangling(store: Store) -> None:
    """Lines the merge left naming no memory (a memory renamed on one side, edited on the
    other): said, for the person to decide."""
    try:
        present = set(store.slugs())
        named = [slug for slug in store.index().named() if slug not in present]
    except KuraError:
        return
    if named:
        shown = ", ".join(named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
        warn(f"{store.index_path}: after the merge it names {shown}, which no memory file is — "
             "`kura doctor` shows them; `kura doctor --fix` comments such lines out")  # fmt: skip


def _synced(store: Store, message: str | None, as_json: bool) -> Synced:
    """Sync; on failure print the JSON a script reads (the error and the next command), then
    let ``core`` say it on stderr and exit 1."""
    try:
        return sync(store, message=message)
    except GitError as err:
        if as_json:
            print_json({"store": store.name, "moved": False, "error": str(err), "next": err.next_step})
        raise


def _nothing(synced: Synced, as_json: bool) -> None:
    if as_json:
        print_json({**synced.to_dict(), "woven": None})
    else:
        say(f"nothing to do: store '{synced.store}' has no changes to commit and {synced.upstream.branch} "
            f"is level with {synced.upstream.name} ({synced.head[:7]})")  # fmt: skip
    raise typer.Exit(2)


def _reweave(
    config: cfg.Config, chosen: str | None, store: Store, *, no_model: bool
) -> dict[str, Any] | None:
    """Weave the map as ``kura weave`` does, now that the files moved. A failure is a warning,
    never exit 1: the push went through, and the next prefill re-weaves a stale map anyway."""
    try:
        sc = config.store_config(chosen)
        woven = weave(store, config.map_settings(sc), scribe=None if no_model else config.scribe_for(sc))
    except Exception as err:  # noqa: BLE001 - an edge: the map is derived, the sync is done
        warn(f"synced, but the map was not re-woven ({err}); run `kura weave`")
        return None
    if woven is None or woven.error:
        warn(
            f"synced, but the map was not re-woven ({woven.error if woven else 'too big'}); run `kura weave`"
        )
        return None if woven is None else woven.to_dict()
    for note in woven.notes:
        warn(note)
    return {**woven.to_dict(), "line": describe(woven)}


def _describe(synced: Synced) -> None:
    up = synced.upstream
    for note in synced.notes:
        warn(f"merged: {note}")
    if synced.untracked:
        warn(f"untracked {synced.untracked} file(s) of derived state under .kura/ that a commit had added: "
             "git no longer carries them (they stay on disk; .kura/ is never shared)")  # fmt: skip
    if synced.commit:
        say(f"committed {synced.commit[:7]} {synced.message.splitlines()[0]}")
    if synced.pulled:
        what = synced.incoming.counts()
        say(f"pulled {_commits(synced.pulled)} from {up.name}" + (f": {what}" if what else ""))
    if synced.pushed:
        say(f"pushed {_commits(synced.pushed)} to {up.name}")


def _commits(n: int) -> str:
    return f"{n} commit" + ("" if n == 1 else "s")
