"""``kura recall``, ``kura doctor`` and ``kura graph``: the commands that look at a store."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from kura import config as cfg
from kura.cli.base import Globals, JsonOpt, app, core, fail, print_json, say, store_from, warn
from kura.cli.checkup import show_reports
from kura.cli.recall import ProgressLine, recall_command
from kura.git.staged import staged_copy
from kura.health.doctor import diagnose, fix_flat, fix_index
from kura.health.picture import FORMATS, of_store, render, save
from kura.recall.search import SearchIndex, drop_index, remote_embedder
from kura.request import RECALL


@app.command()
def recall(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="What you want to know, in your own words.")],
    top: Annotated[int, typer.Option(help="At most this many memories picked.")] = RECALL.top,
    hops: Annotated[int, typer.Option(help="Follow [[links]] this many steps from each pick.")] = RECALL.hops,
    chars: Annotated[int, typer.Option(help="Character budget for the memories' text.")] = RECALL.chars,
    explain: Annotated[bool, typer.Option("--explain", help="Show every candidate's scores.")] = False,
    no_model: Annotated[
        bool, typer.Option("--no-model", help="Do not ask the thinker model; use the offline index.")
    ] = False,
    everything: Annotated[
        bool, typer.Option("--all", help="Archived memories too (still marked as not current).")
    ] = False,
    spans: Annotated[
        bool,
        typer.Option(
            "--spans", help="Also transcript spans (kura ingest): what was said, as evidence, not fact."
        ),
    ] = False,
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            metavar="DATE",
            help="What the store asserted on DATE (YYYY-MM-DD): memories current then, "
            "replaced or archived since included; nothing created after it.",
        ),
    ] = None,
    thread: Annotated[
        str | None,
        typer.Option(
            "--thread",
            metavar="ID",
            help="Search this thread's items (threads/ID/, as kura thread writes them) instead of "
            "the store's memories, the same way.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Find the memories that bear on a question, by meaning, and walk their links.

    With [models.thinker] configured the thinker picks (how: meaning); without one, or when
    it does not answer, a small embedded model does (how: embedded), offline. Exit 2 when
    nothing in the store bears on the question. A memory its evidence no longer carries
    (thin or aged witnesses, superseded, contradicted) is marked "on record", never fact."""
    g: Globals = ctx.obj
    chosen = {k: v for k, v in (("config", g.config), ("store", g.store)) if v}
    options = {
        "top": top,
        "hops": hops,
        "chars": chars,
        "explain": explain,
        "no_model": no_model,
        "everything": everything,
        "spans": spans,
        "at": at or "",
        "thread": thread or "",
    }
    raise typer.Exit(recall_command(chosen, question, as_json=as_json, **options))  # type: ignore[arg-type]


@app.command("index")
def index_(
    ctx: typer.Context,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Drop the search index and build it anew.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Build or refresh the search index recall uses (.kura/search.db), with a progress bar.

    Recall keeps it fresh by itself, but on a big store it answers before every memory has
    a vector (partial, and it says so); run this ahead of time on a big store, after a bulk
    import, or from a hook. Only memories whose bytes changed are embedded again, and a
    build that is stopped (Ctrl-C, a kill) resumes where it stopped. Exit 0 when something
    was indexed or embedded, 2 when it was already current."""
    g: Globals = ctx.obj
    config = core(lambda: cfg.load_config(g.config))
    sc = core(lambda: config.store_config(g.store))
    store = sc.open()
    if rebuild:
        core(lambda: drop_index(store))
    bar = ProgressLine(least=1)
    index = core(lambda: SearchIndex(store, embedder=remote_embedder(config.embedder_for(sc))))
    try:
        before = core(index.status)
        changed = core(lambda: index.update(progress=bar))
        status = index.status()
    finally:
        bar.close()
        index.close()
    embedded = max(status["vectors"] - before["vectors"], 0)
    made = max(status["headlines"] - before["headlines"], 0)
    said = max(status["sentences"] - before["sentences"], 0)
    if as_json:
        done = {"embedded": embedded, "headlines_made": made, "sentences_made": said}
        print_json({"store": store.name, "changed": changed, **done, **status})
    else:
        say(_indexed(store.name, changed, embedded, (made, said), status))
    if not changed and not embedded and not made and not said:
        raise typer.Exit(2)


def _indexed(name: str, changed: int, embedded: int, made: tuple[int, int], status: dict[str, Any]) -> str:
    """What ``kura index`` did, in one line: headline and sentence vectors are said only when
    some were made (an index an older kura made has every memory's vector and none of them)."""
    heads, said = made
    headlines = f", {heads} headline vectors made (name and description on their own)" if heads else ""
    headlines += f", sentence vectors for {said} memories (first sentences on their own)" if said else ""
    dense = status["how"] if not status["reason"] else f"{status['how']} ({status['reason']})"
    held = f"{status['memories']} in the index, {status['vectors']} with vectors, search {dense}"
    if not (changed or embedded or any(made)):  # as kura weave says it: nothing to do is not a count of zero
        return f"unchanged: {name}: the index is already current ({held})"
    return f"{name}: {changed} memories indexed, {embedded} embedded{headlines}; {held}"


@app.command()
def doctor(
    ctx: typer.Context,
    all_stores: Annotated[bool, typer.Option("--all", help="Check every configured store.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Fail on warnings too (for pre-commit).")] = False,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Repair index drift (add missing lines, comment out orphans) and quote the values "
            "YAML refuses in distill-kura's flat frontmatter (every other byte kept).",
        ),
    ] = False,
    staged: Annotated[
        bool,
        typer.Option("--staged", help="Check the store as git's index holds it (what a commit would hold)."),
    ] = False,
    islands: Annotated[
        bool,
        typer.Option("--islands", help="List each island and dead end, not their count (--strict does too)."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check store health: broken files, index drift, dead [[links]], the watcher.

    Exit 1 when anything is wrong (with --strict, warnings count too), else 0. --staged checks
    the files as staged for the next commit (the pre-commit hook uses it), not the working tree.
    Islands and dead ends are notes, counted on one line each unless --islands or --strict
    (--json lists them all)."""
    g: Globals = ctx.obj
    config = core(lambda: cfg.load_config(g.config))
    names = list(config.stores) if all_stores else [g.store]
    for name in names if fix else []:
        for change in core(partial(lambda n: fix_flat(config.open(n)) + fix_index(config.open(n)), name)):
            warn(f"fixed: {change}")
    reports = [core(partial(store_report, config, name, staged=staged)) for name in names]
    if as_json:
        print_json([r.to_dict() for r in reports] if all_stores else reports[0].to_dict())
        code = 1 if sum(r.problems if strict else r.errors for r in reports) else 0
    else:
        code = show_reports(reports, each=islands or strict, strict=strict)
    if code:
        raise typer.Exit(code)


def store_report(config: cfg.Config, name: str | None, *, staged: bool = False) -> Any:
    """Doctor's report on one store: its files, or (``staged``) as git's index holds them."""
    store = config.store_config(name)
    if not staged:
        return diagnose(store.open(), config.map_settings(store))
    with staged_copy(store.path) as copy:
        return diagnose(replace(store, path=copy).open(), config.map_settings(store))


@app.command()
def graph(
    ctx: typer.Context,
    format: Annotated[
        str,
        typer.Option(
            "--format", "-f", metavar="dot|mermaid|json|html", help="Graphviz, Mermaid, JSON or an HTML page."
        ),
    ] = "dot",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write here (atomically) instead of to stdout."),
    ] = None,
) -> None:
    """Draw the [[link]] graph, for people who would rather look than read: islands
    dashed, dead links red (with "did you mean"), dead ends orange.

    \b
      kura graph | dot -Tsvg > graph.svg       # needs Graphviz
      kura graph --format html -o graph.html   # any browser, works offline
      kura graph --format mermaid              # for markdown that renders Mermaid
      kura graph --format json                 # nodes, edges and doctor's summary

    Exit 2 when the store has no memories."""
    if format not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, not {format!r}")
    store = store_from(ctx)
    picture = core(lambda: of_store(store))
    if not picture.nodes:
        warn(f"store '{store.name}' has no memories, so there is no graph to draw — kura remember one first")
        raise typer.Exit(2)
    text = render(picture, format)
    if output is None:
        typer.echo(text, nl=False)
        return
    core(lambda: save(store, text, output))
    report = picture.report
    say(f"wrote the {format} graph of {store.name} ({report.memories} memories, {report.resolved} links, "
        f"{len(report.dead)} dead, {len(report.islands)} islands) to {output}")  # fmt: skip
