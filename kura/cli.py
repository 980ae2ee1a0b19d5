"""The ``kura`` command: parse, call one core function, print.

Exit codes are part of the interface, because schedulers and shell hooks read them:
0 did work (or printed what was asked), 2 nothing to do or nothing found, 1 failure or
refusal. Every ``KuraError`` becomes one line on stderr that says what, where and what
next; ``KURA_DEBUG=1`` re-raises it with the traceback instead.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer

from kura import config as cfg
from kura.errors import KuraError, NotFound, UnknownStore
from kura.note import TYPES

T = TypeVar("T")

app = typer.Typer(
    name="kura",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    help="kura: a filesystem-native markdown memory for AI agents.\n\n"
    "A store is a folder of one-fact markdown files plus a MEMORY.md index. "
    "Global options go before the command: kura --config k.toml -s maker list",
)
import_app = typer.Typer(no_args_is_help=True, help="Bring an existing memory folder into a store.")
app.add_typer(import_app, name="import")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
_STORE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


@dataclass(frozen=True, slots=True)
class Globals:
    config: str | None
    store: str | None


@app.callback()
def main(
    ctx: typer.Context,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            "-c",
            help="kura.toml to use (else $KURA_CONFIG, ./kura.toml, ~/.config/kura/kura.toml).",
        ),
    ] = None,
    store: Annotated[
        str | None, typer.Option("--store", "-s", help="Store or mode name (or a folder path) to work on.")
    ] = None,
) -> None:
    ctx.obj = Globals(config, store)


@app.command()
def init(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Name for the store, e.g. main or maker.")],
    path: Annotated[Path, typer.Option("--path", help="Folder for the store (created).")],
    label: Annotated[str, typer.Option(help="A human label for the store.")] = "",
    write_policy: Annotated[str, typer.Option(help="direct-allowed, distiller-only or frozen.")] = "",
) -> None:
    """Create a store folder (MEMORY.md, .gitignore for .kura/) and add it to kura.toml."""
    from kura.policy import POLICIES
    from kura.store import init_store

    g: Globals = ctx.obj
    if not _STORE_NAME.match(name):
        _fail("store names are lower-case letters, digits, '-' and '_', e.g. main or maker")
    if write_policy and write_policy not in POLICIES:
        _fail(f"--write-policy must be one of {', '.join(POLICIES)}")
    found = _run(lambda: cfg.find_config(g.config))
    target = found or cfg.user_config_path()
    root = path.expanduser().absolute()
    _run(lambda: cfg.register_store(target, name, root, label=label, write_policy=write_policy, dry_run=True))
    store, created = _run(lambda: init_store(root, name=name))
    registered = _run(
        lambda: cfg.register_store(target, name, store.root, label=label, write_policy=write_policy)
    )
    if not (created or registered):
        _say(f"store '{name}' at {store.root} is already set up in {target}")
        raise typer.Exit(2)
    _say(f"store '{name}' ready at {store.root}" + (f" (added to {target})" if registered else ""))


@app.command()
def remember(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(help="File name without .md, e.g. deploy-checklist.")],
    description: Annotated[str, typer.Argument(help="One line: the recognition trigger.")],
    body: Annotated[str | None, typer.Argument(help="The memory's text; - reads stdin.")] = None,
    type: Annotated[
        str | None,
        typer.Option("--type", "-t", help=f"One of {', '.join(TYPES)} (new memories default to project)."),
    ] = None,
    title: Annotated[str | None, typer.Option(help="Short title for the index (≤40 chars).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Write one memory (create or update) and its own line in MEMORY.md."""
    text = _stdin_text() if body == "-" else body
    store = _store(ctx)
    result = _run(lambda: store.remember(slug, description, text, type=type, title=title))
    verb = "created" if result.created else "updated" if result.did_work else "unchanged"
    if as_json:
        _json(
            {
                "slug": result.slug,
                "path": str(result.path),
                "result": verb,
                "index_changed": result.index_changed,
                "store": store.name,
            }
        )
    else:
        _say(f"{verb} {result.slug} ({result.path})")
    if not result.did_work:
        raise typer.Exit(2)


@app.command()
def show(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(help="The memory's slug.")],
    as_json: JsonOpt = False,
) -> None:
    """Print one memory as it is on disk."""
    memory = _run(lambda: _store(ctx).show(slug))
    if as_json:
        _json(memory.to_dict())
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(memory.path.read_bytes())
    sys.stdout.buffer.flush()
    for finding in memory.findings:
        _warn(str(finding))


@app.command("list")
def list_(
    ctx: typer.Context,
    type: Annotated[str | None, typer.Option("--type", "-t", help="Only this type.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List memories (slug, type, description); exit 2 when there are none."""
    if type is not None and type not in TYPES:
        _fail(f"--type must be one of {', '.join(TYPES)}")
    memories = _run(lambda: _store(ctx).list(type=type))
    if as_json:
        _json(
            [{"slug": m.slug, "type": m.type, "name": m.name, "description": m.description} for m in memories]
        )
    else:
        width = max((len(m.slug) for m in memories), default=0)
        for m in memories:
            typer.echo(f"{m.slug:<{width}}  {m.type or '?':<9}  {m.description}")
    if not memories:
        raise typer.Exit(2)


@app.command()
def stores(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List configured stores and the modes that map to them."""
    g: Globals = ctx.obj
    config = _run(lambda: cfg.load_config(g.config))
    rows: list[dict[str, Any]] = []
    for name, sc in config.stores.items():
        modes = sorted(m for m, s in config.modes.items() if s == name)
        rows.append(
            {
                "name": name,
                "path": str(sc.path),
                "label": sc.label,
                "write_policy": sc.write_policy,
                "modes": modes,
                "default": name == config.store_config(None).name,
                "exists": sc.path.is_dir(),
            }
        )
    if as_json:
        _json({"config": str(config.source) if config.source else None, "stores": rows})
        return
    for row in rows:
        mark = "*" if row["default"] else " "
        shown = f"  modes: {', '.join(row['modes'])}" if row["modes"] else ""
        missing = "" if row["exists"] else "  (folder missing)"
        typer.echo(f"{mark} {row['name']}  {row['path']}  [{row['write_policy']}]{shown}{missing}")


@app.command("weave")
def weave_(
    ctx: typer.Context,
    as_json: JsonOpt = False,
    no_model: Annotated[bool, typer.Option("--no-model", help="Trim mechanically; call no model.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Weave even if nothing changed.")] = False,
) -> None:
    """Fold MEMORY.md into the three-layer map (pinned, fresh, trigger) within the budget.

    Exit 0 when the map changed, 2 when it was already current, 1 on error."""
    from kura.entry import weave_command

    g: Globals = ctx.obj
    chosen = {k: v for k, v in (("config", g.config), ("store", g.store)) if v}
    if no_model:
        chosen["no_model"] = "1"
    raise typer.Exit(weave_command(chosen, force=force, as_json=as_json))


@app.command()
def recall(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="What you want to know, in your own words.")],
    top: Annotated[int, typer.Option(help="At most this many memories picked.")] = 3,
    hops: Annotated[int, typer.Option(help="Follow [[links]] this many steps from each pick.")] = 1,
    chars: Annotated[int, typer.Option(help="Character budget for the memories' text.")] = 6000,
    explain: Annotated[bool, typer.Option("--explain", help="Show every candidate's scores.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Find the memories that bear on a question, by meaning, and walk their links.

    Works offline (a small embedded model); exit 2 when nothing in the store bears on it."""
    from kura.recall import recall as run_recall

    store = _store(ctx)
    found = _run(lambda: run_recall(store, question, top=top, hops=hops, chars=chars, explain=explain))
    if as_json:
        _json(found.to_dict())
    else:
        how = found.how if not found.reason else f"{found.how} — ⚠ degraded: {found.reason}"
        picks = ", ".join(f"{h.slug} {h.score:.2f}" for h in found.picked) or "nothing bears on this"
        walked = f"; walked: {', '.join(found.walked)}" if found.walked else ""
        _say(f"recall ({how}): {picks}{walked}")
        for row in found.explain:
            cosine = "-" if row["cosine"] is None else f"{row['cosine']:.3f}"
            mark = "*" if row["picked"] else " "
            scores = f"score {row['score']:.3f}  cosine {cosine}  words {row['lexical']:.3f}"
            _say(f" {mark} {row['slug']:<36} {scores}")
        if found.context:
            _say("")
            _say(found.context)
    if not found.picked:
        raise typer.Exit(2)


@app.command()
def prefill(
    ctx: typer.Context,
    as_json: JsonOpt = False,
) -> None:
    """Print the map block for a system prompt (between <<<KURA-MAP>>> markers).

    Exit 0 current map, 2 stale map served as written, 1 store missing (a block saying so
    is still printed)."""
    from kura.entry import prefill_block

    g: Globals = ctx.obj
    block = prefill_block(g.config, g.store)
    if as_json:
        _json(block.to_dict())
    else:
        sys.stdout.write(block.text)
    if block.warning and block.state in ("missing", "stale"):
        _warn(block.warning)
    raise typer.Exit(block.exit_code)


@app.command("watch")
def watch_(
    ctx: typer.Context,
    debounce: Annotated[float, typer.Option(help="Seconds a file must stay quiet to count as saved.")] = 0.1,
    no_model: Annotated[bool, typer.Option("--no-model", help="Trim mechanically; call no model.")] = False,
) -> None:
    """Re-weave the map whenever a memory or MEMORY.md changes; runs until Ctrl-C."""
    import time

    from kura.watch import stop_watching, watch
    from kura.weave import describe, weave

    g: Globals = ctx.obj
    config = _run(lambda: cfg.load_config(g.config))
    sc = _run(lambda: config.store_config(g.store))
    store, settings = sc.open(), config.map_settings(sc)
    scribe = None if no_model else config.scribe_for(sc)

    def rebuild() -> None:
        try:
            woven = weave(store, settings, scribe=scribe)
        except Exception as err:  # noqa: BLE001 - an edge: report and keep watching
            _warn(f"error: {err}")
            return
        if woven is not None:
            _say(describe(woven))

    rebuild()
    watcher, observer = _run(lambda: watch(store.root, rebuild, debounce=debounce))
    _say(f"watching {store.root} (Ctrl-C to stop)")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stop_watching(watcher, observer)


@app.command()
def doctor(
    ctx: typer.Context,
    all_stores: Annotated[bool, typer.Option("--all", help="Check every configured store.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Fail on warnings too (for pre-commit).")] = False,
    fix: Annotated[
        bool, typer.Option("--fix", help="Repair index drift only: add missing lines, comment out orphans.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check store health: broken files, index drift, dead [[links]], the watcher.

    Exit 1 when anything is wrong (with --strict, warnings count too), else 0."""
    from kura.doctor import fix_index

    g: Globals = ctx.obj
    config = _run(lambda: cfg.load_config(g.config))
    names = list(config.stores) if all_stores else [g.store]
    for name in names if fix else []:
        for change in _run(partial(lambda n: fix_index(config.open(n)), name)):
            _warn(f"fixed: {change}")
    reports = [_run(partial(_diagnose, config, name)) for name in names]
    if as_json:
        _json([r.to_dict() for r in reports] if all_stores else reports[0].to_dict())
    for report in [] if as_json else reports:
        kinds = ", ".join(f"{kind} {n}" for kind, n in report.counts.items())
        state = "healthy" if not report.problems else f"{report.problems} problem(s)"
        watching = f"; watcher alive (pid {report.watcher['pid']})" if report.watcher else ""
        typer.echo(f"{report.store}: {report.memories} memories ({kinds}) — {state}{watching}")
        if report.graph is not None:
            typer.echo(f"  {_graph_line(report.graph)}")
        for check, finding in report.findings:
            label = check if finding.severity == "error" else f"{check}, {finding.severity}"
            typer.echo(f"  {finding}  [{label}]")
    failing = sum(r.problems if strict else r.errors for r in reports)
    if failing:
        raise typer.Exit(1)


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
    """Import a distill-kura store."""
    _import(ctx, folder, "kura", as_json)


def _import(ctx: typer.Context, folder: Path, kind: str, as_json: bool) -> None:
    from kura.importer import import_folder

    store = _store(ctx)
    report = _run(lambda: import_folder(store, folder, kind=kind))
    if as_json:
        _json(
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
        _say(
            f"imported {len(report.imported)}, unchanged {len(report.unchanged)}, "
            f"conflicts {len(report.conflicts)} into '{store.name}'"
        )
        for line in report.conflicts:
            _warn(f"not imported: {line}")
        for finding in report.findings:
            _warn(str(finding))
    if report.conflicts:
        raise typer.Exit(1)
    if not report.did_work:
        raise typer.Exit(2)


# -- edges ---------------------------------------------------------------------------------


def _diagnose(config: cfg.Config, name: str | None) -> Any:
    from kura.doctor import diagnose

    store = config.store_config(name)
    return diagnose(store.open(), config.map_settings(store))


def _graph_line(graph: Any) -> str:
    hubs = ", ".join(f"{slug} ({n})" for slug, n in graph.hubs[:3]) or "none"
    largest = graph.clusters[0] if graph.clusters else 0
    return (
        f"links: {graph.resolved} resolved, {len(graph.dead)} dead; islands {len(graph.islands)}, "
        f"dead ends {len(graph.dead_ends)}; {len(graph.clusters)} cluster(s), largest {largest}; hubs: {hubs}"
    )


def _store(ctx: typer.Context) -> Any:
    g: Globals = ctx.obj
    return _run(lambda: cfg.load_config(g.config).open(g.store))


def _run(call: Callable[[], T]) -> T:
    """Call into the core; turn a KuraError into a message and an exit code."""
    try:
        return call()
    except KuraError as err:
        if os.environ.get("KURA_DEBUG") == "1":
            raise
        _warn(f"error: {err}")
        code = 2 if isinstance(err, NotFound) and not isinstance(err, UnknownStore) else 1
        raise typer.Exit(code) from None


def _fail(message: str) -> NoReturn:
    _warn(f"error: {message}")
    raise typer.Exit(1)


def _say(message: str) -> None:
    typer.echo(message)


def _warn(message: str) -> None:
    typer.echo(f"kura: {message}", err=True)


def _json(value: Any) -> None:
    typer.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def _click_exception() -> type[Exception]:
    """Usage errors' base class (typer vendors click from 0.20 on; older typer uses click)."""
    for module in ("typer._click.exceptions", "click.exceptions"):
        try:
            found: type[Exception] = importlib.import_module(module).ClickException
        except (ImportError, AttributeError):
            continue
        return found
    return RuntimeError


def _stdin_text() -> str:
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError as err:
        _fail(f"standard input is not UTF-8 (byte {err.start}); nothing was written — re-encode it")


def run() -> None:
    """Console entry point. Usage mistakes exit 1 (2 means "nothing to do" here); unexpected
    errors become one line too (KURA_DEBUG=1 shows the traceback)."""
    try:
        code = app(standalone_mode=False)
    except _click_exception() as err:
        err.show()  # type: ignore[attr-defined]
        sys.exit(2 if type(err).__name__ == "NoArgsIsHelpError" else 1)
    except typer.Abort:
        typer.echo("kura: aborted", err=True)
        sys.exit(1)
    except Exception as err:
        if os.environ.get("KURA_DEBUG") == "1":
            raise
        typer.echo(
            f"kura: unexpected error: {type(err).__name__}: {err} (run with KURA_DEBUG=1 for the traceback)",
            err=True,
        )
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
