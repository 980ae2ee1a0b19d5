"""``kura scratch`` and ``kura sessions``: what waits on the ladder, and which runs were read.

Both read derived state the distiller keeps (``kura.life.scratch``); neither writes, except
``kura scratch --purge ID``, a person's deletion. What they print comes from a file a cloned
repository may carry, so it is shown cleaned (no control characters). Exit 0 when something is listed, 2 when
nothing waits or no session was read yet, 1 on failure.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kura.cli.base import JsonOpt, app, confirmed, core, print_json, say, store_from, warn
from kura.life import purge as pg
from kura.life import scratch as sc
from kura.life.sessions import report
from kura.text.quarantine import clean  # derived state: no control character reaches a terminal

QUOTE = 72


@app.command()
def scratch(
    ctx: typer.Context,
    purge: Annotated[
        str | None,
        typer.Option(
            "--purge", metavar="ID", help="Delete this waiting item, its spans, and keep it from coming back."
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Purge without asking.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """What waits on the ladder: facts said in passing that are not memories yet.

    A statement the human made (or a one-line tool output) that is specific and
    declarative and fell out of the working window ([prefill] window_tokens) is a TIDE
    witness (0.30) and waits here; the same claim in an unrelated session adds a CALLUS
    (0.25). At 0.50 it crosses: a draft, or a memory in a direct-allowed store, which
    `kura why SLUG` explains. Scratch items are never in the map or stated as fact.

    Examples: kura scratch · kura scratch --json · kura scratch --purge 3f2a9c1b7d4e --yes
    """
    store = store_from(ctx)
    if purge is not None:
        core(lambda: pg.waiting(store, purge))  # no such item: said before any question, exit 2
        if not yes and not confirmed(f"purge scratch item {purge} and its spans?"):
            warn("nothing was removed")
            raise typer.Exit(1)
        gone = core(lambda: pg.purge_waiting(store, purge))
        if as_json:
            print_json({"purged": gone.id, "claim": gone.claim}, inert=True)
        else:
            say(f"purged scratch item {gone.id}; a tombstone keeps the distiller from holding it again")
        return
    items = core(lambda: sc.load(store)).held()
    if as_json:
        print_json(
            {"hold": sc.HOLD, "promote": sc.PROMOTE, "items": [i.to_dict() for i in items]}, inert=True
        )
    elif not items:
        say("scratch: nothing waits (facts said in passing wait here once they fall out of the window)")
    else:
        say(f"scratch: {len(items)} waiting (hold {sc.HOLD:.2f}, crosses at {sc.PROMOTE:.2f})")
        for item in items:
            say(f"{item.id}  {item.weight():.2f}  {clean(item.claim)}")
            for w in item.witnesses():
                quote = clean(w.quote) if len(w.quote) <= QUOTE else clean(w.quote[: QUOTE - 1]) + "…"
                when = w.when.isoformat() if w.when else "undated"
                say(f'    {w.kind:<7} {w.weight:.2f}  {when}  session {clean(w.session)}  "{quote}"')
    raise typer.Exit(0 if items else 2)


@app.command()
def sessions(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Every session the distiller has read for this store: its source, first and last
    time, segments read, the memories its words witness and the scratch items they hold.

    The ledger fills as `kura distill run` reads journals; it is derived state
    (.kura/scratch.json), rebuilt as the journals are read again.
    """
    store = store_from(ctx)
    rows = core(lambda: report(store))
    if as_json:
        print_json({"sessions": [r.to_dict() for r in rows]}, inert=True)
    elif not rows:
        say("sessions: none read yet (kura distill run reads the journals configured for this store)")
    else:
        say(f"sessions: {len(rows)} read; every session below shares this store's memory")
        for r in rows:
            span = clean(f"{r.first[:16] or '?'} → {r.last[:16] or '?'}")
            counts = f"{r.segments} segments  {len(r.memories)} memories  {len(r.waiting)} waiting"
            say(f"{clean(r.id)}  {span}  {counts}")
            say(f"    {clean(r.source)}")
            if r.memories:
                say(f"    witnessed: {', '.join(r.memories)}")
    raise typer.Exit(0 if rows else 2)
