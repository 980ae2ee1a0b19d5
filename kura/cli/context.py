"""``kura context`` and ``kura ingest``: what a model would be told, and what it can quote."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kura.cli.base import Globals, JsonOpt, app, core, fail, print_json, say, store_from, warn
from kura.cli.recall import ProgressLine
from kura.config import load_config
from kura.recall import spans
from kura.recall.context import Beside
from kura.recall.context import context as build
from kura.recall.search import remote_embedder
from kura.request import CONTEXT, ContextRequest
from kura.transcripts.sources import FORMATS


@app.command()
def context(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="What the model is about to do, in your own words.")],
    budget: Annotated[int, typer.Option(help="Tokens the whole context may take.")] = CONTEXT.budget,
    no_model: Annotated[
        bool, typer.Option("--no-model", help="Do not ask the thinker model; recall with the offline index.")
    ] = False,
    recent: Annotated[
        int,
        typer.Option(
            "--recent", help="Carry the last N messages of --journal as working memory.", metavar="N"
        ),
    ] = 0,
    journal: Annotated[
        Path | None,
        typer.Option("--journal", help="The transcript --recent takes messages from.", metavar="FILE"),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print exactly what a model working on TASK would be told, within --budget tokens.

    Sections, always in this order: Pinned (the user/feedback lines: rules and people), the Map, From
    memory (what recall picked, asserted), On record, not current — check before acting
    (thin, aged or replaced memories, as history), Said before (transcript spans from
    `kura ingest` and the distiller's journals: evidence that something was said, never
    that it is true; instruction-like spans are never shown), Latest observations
    (`kura observe`), and with --recent N --journal FILE, Working memory: the last N messages
    of that transcript, verbatim (tool output that reads like an instruction is withheld).
    Sections share the budget by weight; nothing is cut mid-line.
    --json lists every item with its source, tokens and why, and what was left out."""
    g: Globals = ctx.obj
    core(ContextRequest(task, budget=budget).checked)
    if (recent > 0) != (journal is not None):
        fail("--recent N and --journal FILE go together: the last N messages of that transcript")
    config = core(lambda: load_config(g.config))
    chosen = core(lambda: config.store_config(g.store))
    thinker = None if no_model else config.thinker_for(chosen)
    remote = config.embedder_for(chosen)
    embedder = None
    if remote is not None:
        embedder = remote_embedder(remote)
    bar = ProgressLine()
    person = config.beside(chosen)
    beside = None if person is None else Beside(core(person.open), config.map_settings(person))
    told = core(
        lambda: build(
            chosen.open(),
            task,
            budget=budget,
            settings=config.map_settings(chosen),
            thinker=thinker,
            embedder=embedder,
            quick=True,
            progress=bar,
            recent=recent,
            journal=journal,
            beside=beside,
        )
    )
    bar.close()
    for said in [] if as_json else told.degraded:
        warn(f"context degraded — {said}")
    if as_json:
        print_json(told.to_dict())
    else:
        say(told.text.rstrip("\n") or "(nothing in this store bears on that, and it holds no rules or map)")
        left = len(told.left_out)
        warn(f"context: {told.tokens}/{budget} tokens, {len(told.items)} items, recall {told.how}"
             + (f", {left} left out (--json lists them)" if left else ""))  # fmt: skip
    raise typer.Exit(0 if told.items else 2)


@app.command()
def ingest(
    ctx: typer.Context,
    files: Annotated[list[Path], typer.Argument(help="Transcripts or notes to index as spans.")],
    fmt: Annotated[
        str | None,
        typer.Option("--format", help="claude, codex, chat, evidence or text (default: detected per file)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Index transcripts as spans: what was said, searchable by `kura recall --spans` and
    offered by `kura context` as evidence (never as fact). Reading a file again adds only
    what is new. Nothing becomes a memory here — `kura distill run` does that."""
    if fmt is not None and fmt not in FORMATS:
        fail(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    for path in files:  # every path is checked before any is read: all or nothing
        problem = _unreadable(path)
        if problem:
            fail(f"{path}: {problem}; nothing was indexed")
    store = store_from(ctx)
    results = []
    for path in files:
        results.append(core(lambda path=path: spans.ingest(store, path, fmt=fmt)))  # type: ignore[misc]
    if as_json:
        print_json(
            {"store": store.name, "files": [r.to_dict() for r in results], "spans": spans.count(store)}
        )
    else:
        for r in results:
            for finding in r.findings:
                warn(str(finding))
            if not r.segments and fmt:
                warn(f"{r.source}: no segments read as --format {fmt}; is that its format?")
            say(
                f"{r.source}: {r.segments} segments, {r.added} new spans"
                + (f" ({r.quarantined} quarantined: they read like instructions)" if r.quarantined else "")
            )
        say(f"store {store.name}: {spans.count(store)} spans")
    raise typer.Exit(0 if any(r.added for r in results) else 2)


def _unreadable(path: Path) -> str:
    """Why ``path`` cannot be ingested ("" when it can)."""
    if path.is_dir():
        return "is a folder; give the transcript files in it (for example DIR/*.jsonl)"
    if not path.exists():
        return "no such file; give a transcript (.jsonl) or a note (.md, .txt)"
    if not path.is_file():
        return "not a regular file (a pipe or a device?); give a transcript file"
    try:
        with path.open("rb") as handle:
            head = handle.read(8192)
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    return (
        "looks binary (it holds NUL bytes); kura ingest reads transcripts and notes" if b"\0" in head else ""
    )
