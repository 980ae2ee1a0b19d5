"""``kura distill …``: the distiller's commands.

``check`` is the black-box door to the gate, for scripts and reviewers: it reads a raw
transcript and a JSON array of candidates, and prints the gate's verdict and the
final-surface floor's violations for each, in order. Bad input files are a failure (exit 1,
naming file:line); a dropped candidate is an answer, not a failure (exit 0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from kura import config as cfg
from kura.cli_base import Globals, JsonOpt, app, core, fail, say

distill_app = typer.Typer(no_args_is_help=True, help="Read agent transcripts without believing them.")
app.add_typer(distill_app, name="distill")


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
            "(else the global -s; with neither, an empty store).",
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
    from kura.distill.sources import FORMATS, read_from

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
    g: Globals = ctx.obj
    chosen = name or g.store
    if chosen is None:
        return "", ()
    opened = core(lambda: cfg.load_config(g.config).open(chosen))
    memories = core(opened.list)
    text = "\n\n".join(f"{m.name}\n{m.description}\n{m.note.body}" for m in memories)
    return text, tuple(m.slug for m in memories)


def _say_human(number: int, result: dict[str, Any]) -> None:
    flags = [f for f in ("judgement", "unverified_numbers") if result[f]]
    say(f"{number}. {result['verdict']}: {result['reason']}" + (f" [{', '.join(flags)}]" if flags else ""))
    for item in result["evidence"]:
        say(f"   [{item['class']}] {item['text']}")
    for problem in result["violations"]:
        say(f"   ! {problem}")
