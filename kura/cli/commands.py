"""The ``kura`` command: parse, call one core function, print.

The commands that work on one store's files live here; the ones that look at a store
(recall, doctor, graph) in ``kura.cli.look``; what they all share in ``kura.cli.base``.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kura import config as cfg
from kura.cli.base import (
    Globals,
    JsonOpt,
    app,
    click_exception,
    core,
    fail,
    import_app,
    misplaced_global,
    print_json,
    say,
    show_usage_error,
    stdin_text,
    store_from,
    store_or_new,
    warn,
)  # fmt: skip
from kura.cli.import_kura import import_distill_kura
from kura.cli.listed import show_listing
from kura.cli.map import prefill_block, weave_command
from kura.cli.registration import register_store
from kura.cli.stores import stores_lines, stores_report
from kura.files.memory_file import TYPES
from kura.files.slugs import taken_as
from kura.files.witness import KINDS, Witness, kind_of
from kura.life.corrections import remember as write
from kura.life.lifecycle import stated_again, witnessed
from kura.map.weave import describe, weave
from kura.recall.index_build import AT_ONCE, Background, env_budget
from kura.recall.search import SearchIndex, has_index, remote_embedder
from kura.request import REMEMBER
from kura.serve.watch import stop_watching, watch
from kura.store.catalog import listing
from kura.store.importer import import_folder
from kura.store.named import linked, read_named
from kura.store.policy import POLICIES
from kura.store.store import init_store
from kura.text.secrets import refuse_secrets

if TYPE_CHECKING:
    from kura.life.corrections import Remembered

_STORE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


@app.command()
def init(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Name for the store, e.g. main or maker.")],
    path: Annotated[Path, typer.Option("--path", help="Folder for the store (created).")],
    label: Annotated[str, typer.Option(help="A human label for the store.")] = "",
    write_policy: Annotated[str, typer.Option(help="direct-allowed, distiller-only or frozen.")] = "",
) -> None:
    """Create a store folder (MEMORY.md, .gitignore for .kura/) and add it to kura.toml."""
    g: Globals = ctx.obj
    if not _STORE_NAME.fullmatch(name):
        fail("store names are lower-case letters, digits, '-' and '_', e.g. main or maker")
    if write_policy and write_policy not in POLICIES:
        fail(f"--write-policy must be one of {', '.join(POLICIES)}")
    found = core(lambda: cfg.find_config(g.config))
    target = found or cfg.user_config_path()
    root = path.expanduser().absolute()
    core(lambda: register_store(target, name, root, label=label, write_policy=write_policy, dry_run=True))
    store, created = core(lambda: init_store(root, name=name))
    registered = core(
        lambda: register_store(target, name, store.root, label=label, write_policy=write_policy)
    )
    if not (created or registered):
        say(f"store '{name}' at {store.root} is already set up in {target}")
        raise typer.Exit(2)
    say(f"store '{name}' ready at {store.root}" + (f" (added to {target})" if registered else ""))


@app.command()
def remember(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(help="File name without .md, e.g. deploy-checklist.")],
    description: Annotated[str, typer.Argument(help="One line: the recognition trigger.")],
    body: Annotated[str | None, typer.Argument(help="The memory's text; - reads stdin.")] = None,
    type: Annotated[
        str | None,
        typer.Option(
            "--type", "-t", help=f"One of {', '.join(TYPES)} (new memories default to {REMEMBER.NEW_TYPE})."
        ),
    ] = None,
    title: Annotated[
        str | None, typer.Option(help=f"Short title for the index (≤{REMEMBER.TITLE_CHARS} chars).")
    ] = None,
    witness: Annotated[
        str | None,
        typer.Option(
            help="Record why it is believed: SAID, FIX, SCAR, MANUAL, INFERRED, TIDE, CALLUS or SLEEP "
            "(none: you wrote it, so it counts as stated by its author).",
            metavar="KIND",
        ),
    ] = None,
    quote: Annotated[str, typer.Option(help="The witness's verbatim words (with --witness).")] = "",
    session: Annotated[str, typer.Option(help="The session the witness comes from (with --witness).")] = "",
    supersedes: Annotated[
        str | None,
        typer.Option(help="The memory this one replaces: kept as history, out of the index.", metavar="OLD"),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Write one memory (create or update) and its own line in MEMORY.md."""
    text = stdin_text() if body == "-" else body
    store = store_or_new(ctx)
    kind = None if witness is None else kind_of(witness)
    if witness is not None and kind is None:
        fail(f"--witness {witness!r}: not one of {', '.join(KINDS)}")
    core(lambda: refuse_secrets(f"{store.name}/{slug}, the witness", quote, session))  # before any write
    amend = stated_again  # a person bringing back a forgotten memory says it anew (SAID, today)
    if kind is not None:
        seen = Witness(kind=kind, when=dt.date.today(), session=" ".join(session.split()),
                       source="kura remember", quote=" ".join(quote.split()))  # fmt: skip
        amend = partial(witnessed, witness=seen, slug=slug)
    done = core(lambda: write(store, slug, description, text, type=type, title=title, supersedes=supersedes,
                              amend=amend))  # fmt: skip
    result = done.result
    verb = "created" if result.created else "updated" if result.did_work else "unchanged"
    if said := taken_as(slug, result.slug):  # `x.md` wrote x, a decomposed name its composed form
        warn(said)
    if result.restored:
        warn(f"{store.index_path}: put back the lines of {', '.join(result.restored)}, which a save "
             "made from an older copy of the file had dropped")  # fmt: skip
    if as_json:
        print_json(
            {
                "slug": result.slug,
                "path": str(result.path),
                "result": verb,
                "index_changed": result.index_changed,
                "restored": list(result.restored),
                "store": store.name,
                "body_kept": result.body_kept,
                "revived": bool(result.revived),
                "superseded": done.superseded or None,
                "revises": done.revises or None,
            }
        )
    else:
        say(f"{verb} {result.slug} ({result.path})")
        if done.superseded:
            say(f"superseded {done.superseded}: kept as history (superseded_by {result.slug}, "
                f"valid_until {done.until}), out of the index")  # fmt: skip
    _tell(done, result.slug)
    if not done.did_work:
        raise typer.Exit(2)


def _tell(done: Remembered, slug: str) -> None:
    """What the writer of a direct write should know: a body kept, a memory it may revise."""
    if done.result.body_kept:
        warn(f"{slug}: the body was not changed — it is not the old description, so it was written on "
             "purpose and may still say what the old one said; to change it too: kura remember "
             f"{slug} DESCRIPTION BODY (or - as BODY to read it from stdin)")  # fmt: skip
    if done.result.revived:
        warn(f"{slug}: it was forgotten (archived {done.result.revived}); this write made it current again "
             f"and put its line back — to forget it again: kura forget {slug}")  # fmt: skip
    if done.revises:
        old = done.revises
        warn(f'{slug} appears to revise {old} ("{done.revised_claim}"), which stays current beside it; '
             f"if it replaces that one, run the same command with --supersedes {old}")  # fmt: skip


@app.command()
def show(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(help="The memory's slug, or the title or alias its [[links]] use.")],
    as_json: JsonOpt = False,
) -> None:
    """Print one memory as it is on disk (found by slug, else by title or alias); --json adds
    "linked", the slug each of its [[links]] reaches."""
    store = store_from(ctx)
    data, memory = core(lambda: read_named(store, slug))
    if not data and memory.note.raw is None:  # not read at all: a FIFO, over the cap, a link swapped in
        fail(str(memory.findings[0]))
    if as_json:
        print_json({**memory.to_dict(), "linked": core(lambda: linked(store, memory.note.links))})
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    for finding in memory.findings:
        warn(str(finding))


@app.command("list")
def list_(
    ctx: typer.Context,
    type: Annotated[str | None, typer.Option("--type", "-t", help="Only this type.")] = None,
    everything: Annotated[
        bool, typer.Option("--all", help="Archived and superseded memories too, marked.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """List the current memories (slug, type, description); with --all the archived and
    superseded ones too, each marked with why it is not current. Exit 2 when none is listed."""
    if type is not None and type not in TYPES:
        fail(f"--type must be one of {', '.join(TYPES)}")
    store = store_from(ctx)
    found = core(lambda: listing(store, type=type, everything=everything))
    rows = found.memories
    if as_json:
        print_json([m.to_dict() for m in rows])
    else:
        show_listing(found, store=store.name, type=type, everything=everything)
    if not rows:
        raise typer.Exit(2)


@app.command()
def stores(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List configured stores and the modes that map to them; say which store this folder
    works on and why (-s, $KURA_STORE, the project's memory/ found up to the git root, or
    the configured default), and the person's store read beside a project's."""
    g: Globals = ctx.obj
    config = core(lambda: cfg.load_config(g.config))
    if config.source is None:  # no kura.toml: the default folder is the one store, if it is there
        core(config.store_config)
    report = core(lambda: stores_report(config, g.store, g.store_from))
    if as_json:
        print_json(report)
        return
    for line in stores_lines(report):
        typer.echo(line)


@app.command("weave")
def weave_(
    ctx: typer.Context,
    as_json: JsonOpt = False,
    no_model: Annotated[bool, typer.Option("--no-model", help="Trim mechanically; call no model.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Weave again from the files even if nothing changed (exit 0).")
    ] = False,
) -> None:
    """Fold MEMORY.md into the three-layer map (pinned, fresh, trigger) within the budget.

    Exit 0 when the map changed, 2 when it was already current, 1 on error."""
    g: Globals = ctx.obj
    chosen = {k: v for k, v in (("config", g.config), ("store", g.store)) if v}
    if no_model:
        chosen["no_model"] = "1"
    raise typer.Exit(weave_command(chosen, force=force, as_json=as_json))


@app.command()
def prefill(
    ctx: typer.Context,
    as_json: JsonOpt = False,
    max_chars: Annotated[
        int | None,
        typer.Option(
            "--max-chars",
            metavar="N",
            help="Never print more than N characters (a host's cap on hook output; 0: no ceiling). "
            "Over it the map folds, then becomes the sector map; it is never cut. "
            "Also $KURA_PREFILL_MAX_CHARS and [prefill] max_chars: the smallest set holds.",
        ),
    ] = None,
) -> None:
    """Print the map block for a system prompt (between <<<KURA-MAP>>> markers).

    Exit 0 current map, 2 stale map served as written, 1 store missing (a block saying so
    is still printed)."""
    g: Globals = ctx.obj
    block = prefill_block(g.config, g.store, max_chars)
    if as_json:
        print_json(block.to_dict())
    else:
        sys.stdout.write(block.text)
    if block.warning and block.state in ("missing", "stale", "conflicted"):
        warn(block.warning)
    raise typer.Exit(block.exit_code)


@app.command("watch")
def watch_(
    ctx: typer.Context,
    debounce: Annotated[float, typer.Option(help="Seconds a file must stay quiet to count as saved.")] = 0.1,
    no_model: Annotated[bool, typer.Option("--no-model", help="Trim mechanically; call no model.")] = False,
    no_index: Annotated[
        bool, typer.Option("--no-index", help="Leave the search index alone (recall updates it itself).")
    ] = False,
) -> None:
    """Re-weave the map whenever a memory or MEMORY.md changes; runs until Ctrl-C.

    When the store has a search index (kura index, or any recall), it is kept up to date
    too, so a recall never waits for a re-index."""
    g: Globals = ctx.obj
    config = core(lambda: cfg.load_config(g.config))
    sc = core(lambda: config.store_config(g.store))
    store, settings = sc.open(), config.map_settings(sc)
    scribe = None if no_model else config.scribe_for(sc)

    def rebuild() -> None:
        try:
            woven = weave(store, settings, scribe=scribe)
        except Exception as err:  # noqa: BLE001 - an edge: report and keep watching
            warn(f"error: {err}")
            return
        if woven is not None:
            say(describe(woven))

    rebuild()
    index = None if no_index else _search_index(store, config.embedder_for(sc))
    watcher, observer = core(lambda: watch(store.root, rebuild, debounce=debounce, after=index))
    say(f"watching {store.root} (Ctrl-C to stop)")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stop_watching(watcher, observer)


def _search_index(store: Any, remote: Any) -> Any:
    """An ``after`` hook that keeps an existing search index fresh, or None without one. The
    vectors a big store lacks (a first build, one killed midway) are made in a background
    thread, resumed at start."""
    if not core(lambda: has_index(store)):
        return None
    lock = threading.Lock()
    index = SearchIndex(store, embedder=remote_embedder(remote), shared=True)
    build = Background(index, lock)

    def update(changed: set[str]) -> None:
        if changed <= {"MEMORY.md"}:  # the index file is not searched; memories are
            return
        with lock:
            index.update(budget=None if build.running else env_budget(AT_ONCE))
            if index.complete():
                index.prepare()
            else:
                build.start()

    update({"*"})
    return update


@import_app.command("claude-code")
def import_claude_code(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(help="A Claude Code memory folder.")],
    as_json: JsonOpt = False,
) -> None:
    """Import a Claude Code memory folder (MEMORY.md + one file per memory)."""
    _import(ctx, folder, "claude-code", as_json)


@import_app.command("kura")
def import_kura(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(help="A distill-kura store folder.")],
    as_json: JsonOpt = False,
) -> None:
    """Import a distill-kura store: its memories, byte for byte, and the work it had in
    progress — staged drafts (through kura's gate and floor again, signed with this store's
    key), journal watermarks (onto this store's configured journals, so no transcript is read
    twice) and seeds. Says what it brought and, line by line, what it could not."""
    import_distill_kura(ctx, folder, as_json)


def _import(ctx: typer.Context, folder: Path, kind: str, as_json: bool) -> None:
    store = store_from(ctx)
    report = core(lambda: import_folder(store, folder, kind=kind))
    if as_json:
        print_json(
            {
                "source": str(report.source),
                "kind": kind,
                "store": store.name,
                "imported": report.imported,
                "unchanged": report.unchanged,
                "conflicts": report.conflicts,
                "findings": [str(f) for f in report.findings],
            }
        )
    else:
        say(
            f"imported {len(report.imported)}, unchanged {len(report.unchanged)}, "
            f"conflicts {len(report.conflicts)} into '{store.name}'"
        )
        for line in report.conflicts:
            warn(f"not imported: {line}")
        for finding in report.findings:
            warn(str(finding))
    if report.conflicts:
        raise typer.Exit(1)
    if not report.did_work:
        raise typer.Exit(2)


from kura.cli import (  # noqa: E402,F401 - register their commands after the rest
    capture,
    context,
    distill,
    edit,
    eval,  # noqa: A004 - the module kura.cli.eval, not the builtin
    git,
    hook,
    ladder,
    life,
    look,
    mcp,
    observe,
    serve,
    setup,
    sync,
    thread,
)


def run() -> None:
    """Console entry point. Usage mistakes exit 1 (2 means "nothing to do" here); unexpected
    errors become one line too (KURA_DEBUG=1 shows the traceback)."""
    try:
        code = app(standalone_mode=False)
    except click_exception() as err:
        show_usage_error(err)
        hint = misplaced_global(err, sys.argv[1:])
        if hint is not None:
            warn(hint)
        sys.exit(2 if type(err).__name__ == "NoArgsIsHelpError" else 1)
    except typer.Abort:
        typer.echo("kura: aborted", err=True)
        sys.exit(1)
    except BrokenPipeError:
        raise  # the reader left: kura.cli.exit ends quietly
    except Exception as err:
        if os.environ.get("KURA_DEBUG") == "1":
            raise
        warn(f"unexpected error: {type(err).__name__}: {err} (run with KURA_DEBUG=1 for the traceback)")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
