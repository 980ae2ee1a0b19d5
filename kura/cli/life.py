"""``kura why``, ``kura decay``, ``kura forget``, ``kura recent``: evidence and lifecycle at the
command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kura.cli.base import JsonOpt, app, confirmed, core, day_from, fail, print_json, say, store_from, warn
from kura.errors import GitError
from kura.files.memory_file import TYPES
from kura.git.repository import find_repo
from kura.life import decay as dc
from kura.life import lifecycle
from kura.life import purge as pg
from kura.life import recent as rc
from kura.life.why import explain, render, to_json

AtOpt = Annotated[
    str | None,
    typer.Option("--at", help="Judge as of this date (YYYY-MM-DD) instead of today.", metavar="DATE"),
]


@app.command()
def why(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(help="The memory to explain.")],
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Why a memory is believed: its witnesses, confidence and strength, whether it is
    asserted or withheld (and why), what it replaced and what replaced it.

    --at DATE judges it as it stood that day (witnesses heard by then; a later revision or
    archive not yet written). Exit 2 when there is no such memory, or it was not yet
    written on DATE.

    Example: kura why deploy-day --at 2026-03-01"""
    found = core(lambda: explain(store_from(ctx), slug, day_from(at), at=at is not None))
    if as_json:
        print_json(to_json(found))
    else:
        say(render(found).rstrip("\n"))


@app.command()
def decay(
    ctx: typer.Context,
    apply: Annotated[bool, typer.Option("--apply", help="Archive what is spent (never deletes).")] = False,
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What today's forgetting would take: memories that would be archived (spent), that
    are no longer asserted, and that are fading. Changes nothing without --apply; exit 2
    when nothing would change."""
    store = store_from(ctx)
    today = day_from(at)
    fates = core(lambda: dc.plan(store, today))
    archived = core(lambda: dc.apply(store, fates, today)) if apply else []
    if as_json:
        print_json({"fates": [f.to_dict() for f in fates], "applied": apply, "archived": archived})
    else:
        titles = {
            "archive": "would be archived" if not apply else "archived",
            "unasserted": "no longer asserted (on record, may be stale)",
            "fading": "fading",
        }
        for outcome, title in titles.items():
            chosen = [f for f in fates if f.outcome == outcome]
            if chosen:
                say(f"{title}: {len(chosen)}")
                for f in chosen:
                    say(f"  {f.slug}  confidence {f.confidence:.2f}  strength {f.strength:.2f}  — {f.reason}")
        if not fates:
            say("decay: nothing fades today")
        elif not apply and any(f.outcome == "archive" for f in fates):
            say("nothing was changed; run `kura decay --apply` to archive what is spent")
    raise typer.Exit(0 if (archived or (fates and not apply)) else 2)


@app.command()
def forget(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(help="The memory to forget.")],
    reason: Annotated[str, typer.Option("--reason", help="Why it is forgotten (kept with it).")] = "",
    purge: Annotated[
        bool,
        typer.Option("--purge", help="Delete it and everything derived from it (the one real deletion)."),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Purge without asking.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Archive a memory with a reason (out of the index and kura list, still findable with
    recall --all and list --all), or with --purge delete it, its index line, drafts, derived
    memories and every derived trace, leaving a tombstone so the distiller never learns it
    again. A purge is a person's deletion: a distiller-only store allows it, a frozen one
    does not."""
    store = store_from(ctx)
    if not purge:
        done = core(lambda: lifecycle.archive(store, slug, reason or "forgotten on purpose"))
        if as_json:
            print_json({"slug": slug, "archived": done})
        else:
            say(f"archived {slug}" if done else f"{slug} was already archived")
        raise typer.Exit(0 if done else 2)
    core(lambda: store.check_write("purge"))  # a frozen store refuses before anything is listed
    found = core(lambda: pg.closure(store, slug))
    if as_json and not yes:
        print_json({"closure": found.to_dict(), "purged": False})
        fail("--json needs --yes to purge (nothing was removed)")
    if not as_json:
        say(f"purging {found.slug} removes:")
        for path in found.files:
            say(f"  file       {path}")
        for line in found.index_lines:
            say(f"  index line {line.strip()}")
        for path in found.drafts:
            say(f"  draft      {path}")
        for other in found.pointers:
            say(f"  pointer    in {other} (the reference is removed from its frontmatter; a memory it "
                "replaced stays history: archived)")  # fmt: skip
        for path in found.state:
            say(f"  derived    {path} (its rows and caches)")
        if found.spans:
            say(f"  spans      {len(found.spans)} transcript span(s) with its words (the transcripts stay)")
        if found.scratch:
            say(f"  scratch    {len(found.scratch)} waiting candidate(s) that say it (kura scratch)")
        for other in found.linked_from:
            say(f"  linked     from {other} (its [[links]] to it stay in its text, dead — edit it)")
    if not yes and not confirmed("purge all of it?"):
        warn("nothing was removed")
        raise typer.Exit(1)
    core(lambda: pg.purge(store, found, actor="purge"))
    if as_json:
        print_json({"closure": found.to_dict(), "purged": True})
        return
    say(f"purged {found.slug}; a tombstone keeps the distiller from learning it again")
    say(_left_in_history(found.files[0]))


def _left_in_history(file: Path) -> str:
    """Where the purged text still is: the transcripts, and in a repository its history,
    rewritten by the path git holds the file under (``memory/deploy.md``, not its name)."""
    try:
        repo = find_repo(file.parent)
    except GitError:
        return "its text remains in the source transcripts, if any (the store is not in git)"
    return (
        "its text remains in git history and in the source transcripts; to rewrite history: "
        f"git filter-repo --invert-paths --path {repo.prefix}{file.name} (or BFG), then force-push"
    )


@app.command()
def recent(
    ctx: typer.Context,
    since: Annotated[
        str,
        typer.Option(
            "--since", help="How far back: days (7d), weeks (2w) or a date (YYYY-MM-DD).", metavar="WHEN"
        ),
    ] = rc.DEFAULT_SINCE,
    type: Annotated[str | None, typer.Option("--type", "-t", help="Only this type.")] = None,
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What changed lately: the memories created, changed, superseded or forgotten in the
    window, newest first, each once with its newest event — from the frontmatter's dates
    (created, updated, valid_until, archived) and, in a git work tree, the commits and the
    edits not yet committed. Exit 2 when nothing happened in the window.

    Example: kura recent --since 2w --type project"""
    if type is not None and type not in TYPES:
        fail(f"--type must be one of {', '.join(TYPES)}")
    found = core(lambda: rc.recent(store_from(ctx), since=since, type=type, today=day_from(at)))
    if as_json:
        print_json(found.to_dict())
    else:
        say("\n".join(rc.lines(found.to_dict())))
    raise typer.Exit(0 if found.items else 2)
