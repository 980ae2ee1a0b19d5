"""``kura distill …``: the distiller's commands.

``run`` is one pass over the store's journals — the rule-based spotter always, the brain
model too when one is configured (``--no-model`` skips it) — and prints one metrics line
(or ``--json``, with the tokens the models used); it exits 0 when it read something, 2 when
there was nothing new to read, 1 on failure.

``check`` is the black-box door to the gate, for scripts and reviewers: it reads a raw
transcript and a JSON array of candidates, and prints the gate's verdict and the
final-surface floor's violations for each, in order. Bad input files are a failure (exit 1,
naming file:line); a dropped candidate is an answer, not a failure (exit 0).

``drafts`` lists what the distiller staged and ``pour`` pours it by hand through the same
verified door the scribe uses (``kura.distill.drafts.pour``): a refusal is exit 1 with its
reason, so a script can tell "refused" from "nothing staged" (exit 2).

``drain`` has the scribe model judge every staged draft (pour, fix, toss); ``tidy`` finds
ragged index lines and has the scribe rewrite them; ``night`` stays resident and runs a
pass and a drain once per quiet spell of the journals.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from kura import config as cfg
from kura.cli.base import App, Globals, JsonOpt, app, core, fail, print_json, say, store_from, warn
from kura.cli.recall import ProgressLine
from kura.errors import NoStore
from kura.transcripts.sources import FORMATS, read_from

distill_app = App(no_args_is_help=True, help="Read agent transcripts without believing them.")
app.add_typer(distill_app, name="distill")


DistilStoreOpt = Annotated[
    str | None, typer.Option("--store", help="Store to distil into (else the global -s).")
]


def _distilling(ctx: typer.Context, store: str | None) -> tuple[Any, Any, Any, Any]:
    """(config, the store's config, its journals, the open store) for a distilling command."""
    from kura.distill.run import journals_for
    from kura.hosts.host_journals import with_hosts

    g: Globals = ctx.obj
    config = core(lambda: cfg.load_config(g.config))
    chosen = core(lambda: config.store_config(store or g.store))
    journals = core(
        lambda: journals_for(config.distill, chosen.distill, config_source=config.source, store=chosen.name)
    )
    opened = core(chosen.open)
    return config, chosen, core(lambda: with_hosts(journals, opened)), opened  # and what hooks registered


@distill_app.command("run")
def run(
    ctx: typer.Context,
    store: DistilStoreOpt = None,
    no_model: Annotated[
        bool, typer.Option("--no-model", help="Spot with the rules and compose with templates only.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """One pass: read new journal lines, spot candidates, gate them, judge their novelty and
    stage drafts. With a brain model (or a thinker it inherits) the brain spots too and the
    scribe writes; with none, rules and templates do it all."""
    from kura.distill.model_steps import Minds
    from kura.distill.reading import Reading
    from kura.distill.run import run_pass
    from kura.distill.scribe_language import configured

    config, chosen, journals, opened = _distilling(ctx, store)
    minds = Minds(
        charter=opened.charter,
        reading=Reading.of(config.distill, chosen.distill),
        language=configured(config.distill, chosen.distill),
    )
    if not no_model:
        minds.brain, minds.scribe = config.brain_for(chosen), config.scribe_for(chosen)
    bar = ProgressLine()
    try:
        window = config.map_settings(chosen).window_tokens
        metrics = core(lambda: run_pass(opened, journals, progress=bar, minds=minds, window_tokens=window))
    except OSError as err:
        if os.environ.get("KURA_DEBUG") == "1":
            raise
        fail(
            f"{getattr(err, 'filename', '') or chosen.name}: {err.strerror or err}; the stretch stays unread"
        )
    finally:
        bar.close()
    for finding in metrics.findings:
        if finding.severity != "note":
            warn(str(finding))
    if as_json:
        say(json.dumps(metrics.to_dict(), ensure_ascii=False))
    else:
        say(metrics.line())
    raise typer.Exit(2 if metrics.nothing else 0)


@distill_app.command("check")
def check(
    ctx: typer.Context,
    raw: Annotated[
        Path, typer.Option("--raw", help="A transcript or evidence JSONL file (the raw material).")
    ],
    candidates: Annotated[Path, typer.Option("--candidates", help="A JSON array of candidate memories.")],
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Store whose text marks echoes and whose slugs [[links]] may name "
            "(else the global -s, else the default store as for every command; with none, an empty store).",
        ),
    ] = None,
    text_file: Annotated[
        Path | None, typer.Option("--text-file", help="Composed text to hold to the final-surface floor.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Judge candidates against raw material: one verdict per candidate, in order."""
    from kura.distill.gate import check as gate_check

    segments = _read_raw(raw)
    cands = _read_candidates(candidates)
    text = _read_text(text_file) if text_file else ""
    store_text, slugs = _store_material(ctx, store)
    results = gate_check(cands, segments, store_text=store_text, slugs=slugs, text=text)
    for number, result in enumerate(results, start=1):
        if as_json:
            say(json.dumps(result, ensure_ascii=False))
        else:
            _say_human(number, result)


def _read_raw(path: Path) -> list[Any]:
    try:
        stretch = read_from(path, finished=True)  # a finished file: its last line counts too
    except OSError as err:
        fail(f"{path}: cannot read the raw material ({err.strerror})")
    broken = [f for f in stretch.findings if f.severity == "error" or stretch.fmt not in FORMATS]
    if broken:
        fail("; ".join(str(f) for f in broken[:3]) + " — fix the file and run the check again")
    return list(stretch.segments)


def _read_candidates(path: Path) -> list[Any]:
    text = _read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        fail(f"{path}:{err.lineno}:{err.colno}: not valid JSON ({err.msg}); expected an array of candidates")
    if not isinstance(data, list):
        fail(f"{path}:1: expected a JSON array of candidates, got a {type(data).__name__}")
    return data


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except OSError as err:
        fail(f"{path}: cannot read ({err.strerror})")
    except UnicodeDecodeError as err:
        fail(f"{path}: not UTF-8 (byte {err.start}); re-encode it")


def _store_material(ctx: typer.Context, name: str | None) -> tuple[str, tuple[str, ...]]:
    """The store's text and slugs: the store every command resolves (--store, -s, kura.toml,
    $KURA_DIR, ./memory); with none named and none there, an empty store."""
    g: Globals = ctx.obj
    chosen = name or g.store
    config = core(lambda: cfg.load_config(g.config))

    def opened_or_none() -> Any:
        try:
            return config.open(chosen)
        except NoStore:
            if chosen is not None:
                raise
            return None  # nothing named, nothing there: judged against no store at all

    opened = core(opened_or_none)
    if opened is None:
        return "", ()
    from kura.distill.run import store_text

    memories = core(opened.list)
    return store_text(memories), tuple(m.slug for m in memories)


def _say_human(number: int, result: dict[str, Any]) -> None:
    flags = [f for f in ("judgement", "unverified_numbers") if result[f]]
    say(f"{number}. {result['verdict']}: {result['reason']}" + (f" [{', '.join(flags)}]" if flags else ""))
    for item in result["evidence"]:
        say(f"   [{item['class']}] {item['text']}")
    for problem in result["violations"]:
        say(f"   ! {problem}")


@distill_app.command("drafts")
def list_drafts(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List the staged drafts (exit 2 when there are none); tampered ones are marked, and
    incomplete ones (left by a stopped pass; the next pass writes them again)."""
    from kura.distill.drafts import drafts

    found = core(lambda: drafts(store_from(ctx)))
    if as_json:
        print_json([d.to_dict() for d in found])
    for d in [] if as_json else found:
        flags = f" [{', '.join(d.flags)}]" if d.flags else ""
        state = "  INCOMPLETE: " if d.incomplete else "  TAMPERED: " if d.tampered else ""
        say(f"{d.id}  {d.kind or '?'}  {d.title}{flags}{state + d.problem if state else ''}")
    if not found:
        if not as_json:
            say("no drafts staged")
        raise typer.Exit(2)


@distill_app.command("pour")
def pour(
    ctx: typer.Context,
    draft: Annotated[
        str | None, typer.Argument(help="The draft to pour (its id, from `distill drafts`).")
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Pour every staged draft that passes.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Pour drafts into the store through the verified door: mark, floor, store policy.
    Exit 0 when something was poured, 2 when there was nothing to pour, 1 on a refusal."""
    from kura.distill import drafts as dr

    if (draft is None) == (not every):
        fail("name one draft or pass --all (not both); `kura distill drafts` lists them")
    store = store_from(ctx)
    ids = [d.id for d in core(lambda: dr.drafts(store))] if every else [str(draft)]
    results = [core(partial(dr.pour, store, i)) for i in ids]
    if as_json:
        print_json([r.to_dict() for r in results])
    for r in [] if as_json else results:
        say(f"{r.id}: poured into {r.slug}" if r.poured else f"{r.id}: refused — {r.reason}")
    if not results and not as_json:
        say("no drafts staged")
    if any(not r.poured for r in results) and not every:
        raise typer.Exit(1)
    if not any(r.poured for r in results):
        raise typer.Exit(1 if results else 2)


@distill_app.command("drain")
def drain(
    ctx: typer.Context,
    store: Annotated[
        str | None, typer.Option("--store", help="Store whose drafts to drain (else the global -s).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The scribe judges every staged draft: pour, fix (held to the floor, re-signed) or toss.
    Exit 0 when it did work, 2 when nothing was staged or no scribe is configured, 1 when
    every draft stayed staged (the scribe did not answer, or its verdicts were refused)."""
    from kura.distill.drain import drain as run_drain

    g: Globals = ctx.obj
    config = core(lambda: cfg.load_config(g.config))
    chosen = core(lambda: config.store_config(store or g.store))
    scribe = config.scribe_for(chosen)
    if scribe is None:
        warn(
            f"store '{chosen.name}': drain needs a model — declare [models.thinker] (or [models.scribe]) "
            f"in {config.source or 'kura.toml'}; `kura distill pour SLUG|--all` pours drafts by hand"
        )
        raise typer.Exit(2)
    metrics = core(lambda: run_drain(chosen.open(), scribe))
    say(json.dumps(metrics.to_dict(), ensure_ascii=False) if as_json else metrics.line())
    if not metrics.outcomes:
        raise typer.Exit(2)
    if not metrics.did_work:
        raise typer.Exit(1)


@distill_app.command("night")
def night(
    ctx: typer.Context,
    store: DistilStoreOpt = None,
    idle_min: Annotated[
        float | None,
        typer.Option(
            "--idle-min",
            help="Minutes the journals must stay quiet before a pass "
            "(else [distill] idle_min in kura.toml, else 20).",
        ),
    ] = None,
    idle_sec: Annotated[
        float | None, typer.Option("--idle-sec", help="The quiet spell in seconds (overrides --idle-min).")
    ] = None,
    backoff_min: Annotated[
        float | None,
        typer.Option(
            "--backoff-min",
            help="Minutes to wait after a failed pass before trying again, changed journals or not "
            "(else [distill] backoff_min; unset: the next change is the retry).",
        ),
    ] = None,
    poll_sec: Annotated[
        float | None,
        typer.Option(
            "--poll-sec", help="Seconds between looks (else a quarter of the quiet spell, at most 30)."
        ),
    ] = None,
    once: Annotated[
        bool, typer.Option("--once", help="Wait for one quiet spell, run one pass (and drain), exit.")
    ] = False,
) -> None:
    """Stay resident: when the journals have been quiet, run one pass and one drain per quiet spell.
    Exit 0 on a clean stop; with --once, 0 when it did work, 2 when there was nothing to do,
    1 when a pass or drain failed."""
    from kura.distill import scribe_language
    from kura.distill.night import Night, snapshot, tasks_for
    from kura.distill.reading import Reading

    config, chosen, journals, opened = _distilling(ctx, store)

    def log(line: str) -> None:
        say(f"{dt.datetime.now(dt.UTC):%Y-%m-%dT%H:%M:%SZ} {line}")

    from kura.hosts.host_journals import with_hosts

    configured = dataclasses.replace(journals, files=())

    def current() -> Any:  # what hooks registered since the loop started is read too
        return with_hosts(configured, opened)

    window = config.map_settings(chosen).window_tokens
    reading = Reading.of(config.distill, chosen.distill)
    scribe, brain = config.scribe_for(chosen), config.brain_for(chosen)
    language = scribe_language.configured(config.distill, chosen.distill)
    tasks = tasks_for(
        opened, current, scribe, brain, window_tokens=window, reading=reading, language=language
    )
    quiet = _minutes(idle_min, "idle_min", chosen.distill, config.distill, 20.0) or 0.0
    idle = idle_sec if idle_sec is not None else 60 * quiet
    backoff = _minutes(backoff_min, "backoff_min", chosen.distill, config.distill, None)
    poll = poll_sec if poll_sec is not None else min(30.0, max(0.05, idle / 4))
    loop = Night(look=lambda: snapshot(current(), opened.root), tasks=tasks, idle=idle, poll=poll, log=log,
                 backoff=None if backoff is None else backoff * 60)  # fmt: skip
    loop.run(once=once)
    if once:
        raise typer.Exit(1 if loop.failures else 0 if loop.worked else 2)


def _minutes(given: float | None, key: str, own: dict[str, Any], shared: dict[str, Any],
             default: float | None) -> float | None:  # fmt: skip
    """A night setting: the command line's, else the store's [distill], else the shared one."""
    if given is not None:
        return given
    for table in (own, shared):
        if isinstance(table.get(key), int | float):
            return float(table[key])
    return default


@distill_app.command("tidy")
def tidy(
    ctx: typer.Context,
    store: Annotated[
        str | None, typer.Option("--store", help="Store whose index to tidy (else the global -s).")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report ragged lines; write nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Find ragged index lines (title restated, too long, too vague, interchangeable) and have
    the scribe rewrite them from each memory's text. Exit 0 when a line was rewritten (or a
    dry run found some), 2 when nothing is ragged or no scribe is configured, 1 otherwise."""
    from kura.distill.tidy import tidy as run_tidy

    g: Globals = ctx.obj
    config = core(lambda: cfg.load_config(g.config))
    chosen = core(lambda: config.store_config(store or g.store))
    scribe = None if dry_run else config.scribe_for(chosen)
    report = core(lambda: run_tidy(chosen.open(), scribe, dry_run=dry_run))
    say(json.dumps(report.to_dict(), ensure_ascii=False) if as_json else report.line())
    for outcome in [] if as_json else report.outcomes:
        after = f"\n    now: {outcome.after}" if outcome.after else ""
        say(f"  MEMORY.md:{outcome.line}: {outcome.slug}: {outcome.result} — {outcome.reason}{after}")
    if not dry_run and scribe is None:
        warn(
            f"store '{chosen.name}': tidy needs a model to rewrite lines — declare [models.thinker] "
            f"(or [models.scribe]) in {config.source or 'kura.toml'}; nothing was written"
        )
        raise typer.Exit(2)
    if not report.findings:
        raise typer.Exit(2)
    if not dry_run and not report.did_work:
        raise typer.Exit(1)
