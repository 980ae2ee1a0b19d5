"""``kura observe``: the observation log at the command line (``kura.observe`` does the work)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kura import config as cfg
from kura.cli.base import Globals, JsonOpt, app, core, day_from, fail, print_json, say, store_from, warn
from kura.observe import observations as ob
from kura.observe.consolidate import consolidate
from kura.threads import Thread
from kura.threads.observer import log_store
from kura.threads.observer import observe as observe_in

if TYPE_CHECKING:
    from kura.observe.consolidate import Consolidated
    from kura.store.store import Store


@app.command()
def observe(
    ctx: typer.Context,
    text: Annotated[
        str | None,
        typer.Argument(help="What you noticed, one line (newlines are folded to spaces).", metavar="TEXT"),
    ] = None,
    priority: Annotated[
        str, typer.Option("--priority", "-p", help="high (🔴), medium (🟡) or low (🟢).", metavar="LEVEL")
    ] = "medium",
    show: Annotated[bool, typer.Option("--list", help="Print the entries, numbered.")] = False,
    resolve: Annotated[
        int | None, typer.Option("--resolve", help="Mark entry N resolved.", metavar="N")
    ] = None,
    consolidate: Annotated[
        bool, typer.Option("--consolidate", help="Drop resolved and superseded entries (never an open 🔴).")
    ] = False,
    no_model: Annotated[
        bool, typer.Option("--no-model", help="Consolidate mechanically even when a scribe is configured.")
    ] = False,
    at: Annotated[
        str | None,
        typer.Option("--at", help="Use this date (YYYY-MM-DD) instead of today.", metavar="DATE"),
    ] = None,
    task: Annotated[
        str | None, typer.Option("--task", help="With TEXT: the task you are on.", metavar="TASK")
    ] = None,
    next_: Annotated[
        str | None, typer.Option("--next", help="With TEXT: what should come next.", metavar="NEXT")
    ] = None,
    thread: Annotated[
        str | None,
        typer.Option("--thread", help="With TEXT: write to that thread's log (threads/ID/).", metavar="ID"),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Keep the store's observation log: _observations.md at the store root, one line per
    observation under a "## YYYY-MM-DD" heading, marked 🔴 high, 🟡 medium (the default) or
    🟢 low, with "(resolved)" or "✅" at the end once it is dealt with. The file is yours to
    read and edit by hand; kura keeps every line you wrote.

    kura observe "TEXT" [-p high] [--task T] [--next N] [--thread ID] adds an entry (with
    the task you are on and what should come next; to a thread's own log), and consolidates
    the log mechanically once it passes its size hint; --list numbers the entries; --resolve N
    marks one resolved; --consolidate drops resolved entries and ones a later entry repeats
    or revises — chosen by the scribe model when one is configured (--no-model: mechanically),
    never an unresolved 🔴 — and archives them in .kura/observations/dropped-DATE.md.
    Exit 2 when there is nothing to list or consolidate."""
    chosen = [name for name, on in (("TEXT", text is not None), ("--list", show),
              ("--resolve", resolve is not None), ("--consolidate", consolidate)) if on]  # fmt: skip
    if len(chosen) != 1:
        fail(
            f"give one of TEXT, --list, --resolve N or --consolidate (got {', '.join(chosen) or 'none'}); "
            "kura observe --help explains them"
        )
    if text is None and (task or next_ or thread):
        fail("--task, --next and --thread go with TEXT (a new observation)")
    if consolidate:
        _consolidate(ctx, no_model=no_model, at=at, as_json=as_json)
    elif show:
        _list(store_from(ctx), as_json=as_json)
    elif resolve is not None:
        _resolve(store_from(ctx), resolve, at=at, as_json=as_json)
    else:
        assert text is not None
        _add(store_from(ctx), text, priority, at=at, as_json=as_json, task=task or "",
             continuation=next_ or "", thread=thread)  # fmt: skip


def _add(
    store: Store, text: str, priority: str, *, at: str | None, as_json: bool, task: str, continuation: str,
    thread: str | None,
) -> None:  # fmt: skip
    chosen = core(lambda: Thread.of(store, thread)) if thread is not None else None
    done = core(lambda: observe_in(store, text, priority, thread=chosen, task=task, continuation=continuation,
                                today=day_from(at)))  # fmt: skip
    entry = done.entry
    log = core(lambda: ob.read_log(log_store(store, chosen)))
    if as_json:
        extra = {"thread": chosen.id} if chosen else {}
        if done.consolidated:
            extra["consolidated"] = done.to_dict()["consolidated"]
        print_json({"store": store.name, "path": str(log.path), "entry": entry.to_dict(), "hint": log.hint,
                    **extra})  # fmt: skip
    else:
        say(f"observed {entry.render()} in {log.path}")
        if done.consolidated:
            c = done.consolidated
            say(f"the log passed its size hint: consolidated, {len(c.dropped)} dropped, {len(c.kept)} kept")
    if log.hint and not as_json:
        warn(log.hint)


def _list(store: Store, *, as_json: bool) -> None:
    log = core(lambda: ob.read_log(store))
    if as_json:
        print_json({"store": store.name, "path": str(log.path), "size": log.size, "hint": log.hint,
                    "entries": [e.to_dict() for e in log.entries],
                    "findings": [str(f) for f in log.findings]})  # fmt: skip
    else:
        for entry in log.entries:
            say(entry.render())
        for finding in log.findings:
            warn(str(finding))
        if not log.entries and not log.findings:
            warn(f'no observations in {log.path}; add one with kura observe "TEXT"')
        elif log.hint:
            warn(log.hint)
    raise typer.Exit(0 if log.entries else 2)


def _resolve(store: Store, number: int, *, at: str | None, as_json: bool) -> None:
    entry, changed = core(lambda: ob.resolve(store, number, today=day_from(at)))
    if as_json:
        print_json({"store": store.name, "entry": entry.to_dict(), "changed": changed})
    else:
        say(f"resolved {entry.render()}" if changed else f"already resolved: {entry.render()}")
    raise typer.Exit(0 if changed else 2)


def _consolidate(ctx: typer.Context, *, no_model: bool, at: str | None, as_json: bool) -> None:
    g: Globals = ctx.obj
    config = core(lambda: cfg.load_config(g.config))
    chosen = core(lambda: config.store_config(g.store))
    store = core(chosen.open)
    scribe = None if no_model else config.scribe_for(chosen)
    report = core(lambda: consolidate(store, scribe=scribe, today=day_from(at)))
    if as_json:
        print_json({"store": store.name, "path": str(store.root / ob.LOG_NAME), **report.to_dict()})
    else:
        _report(report)
    raise typer.Exit(0 if report.dropped else 2)


def _report(report: Consolidated) -> None:
    for note in report.notes:
        warn(note)
    said = "the scribe said" if report.method == "scribe" else "it would go as"
    for item in report.refused:
        say(f"  refused  {item.entry.render()} — {said}: {item.reason}")
    for item in report.dropped:
        say(f"  dropped  {item.entry.render()} — {item.reason}")
    if report.dropped:
        say(
            f"consolidated ({report.method}): kept {len(report.kept)}, dropped {len(report.dropped)}; "
            f"the dropped entries are in {report.archive}"
        )
    else:
        say(f"consolidate ({report.method}): nothing to drop; {len(report.kept)} entries kept")
