"""`kura import kura DIR`: a distill-kura store's memories, and the work it had in progress.

The memories are copied byte for byte (``kura.store.importer``); the staged drafts,
journal watermarks and seeds are carried by ``kura.distill.inherit`` (drafts through
kura's gate and floor again, watermarks onto this store's configured journals). The
answer says what was brought and, one line each, what could not be and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from kura import config as cfg
from kura.cli.base import Globals, core, print_json, say, warn
from kura.store.importer import import_folder


def import_distill_kura(ctx: typer.Context, folder: Path, as_json: bool) -> None:
    from kura.distill.inherit import carry
    from kura.distill.run import journals_for

    g: Globals = ctx.obj
    config = core(lambda: cfg.load_config(g.config))
    chosen = core(lambda: config.store_config(g.store))
    store = core(chosen.open)
    report = core(lambda: import_folder(store, folder, kind="kura"))
    journals = core(
        lambda: journals_for(config.distill, chosen.distill, config_source=config.source, store=chosen.name)
    )
    carried = core(lambda: carry(store, report.source, journals))
    if as_json:
        listed = {"imported": report.imported, "unchanged": report.unchanged, "conflicts": report.conflicts}
        found = [str(f) for f in report.findings]
        extra = {"findings": found, **carried.to_dict()}
        print_json({"source": str(report.source), "kind": "kura", "store": store.name, **listed, **extra})
    else:
        _say(store.name, report, carried)
    if report.conflicts:
        raise typer.Exit(1)
    if not (report.did_work or carried.did_work):
        raise typer.Exit(2)


def _say(name: str, report: Any, carried: Any) -> None:
    line = (
        f"imported {len(report.imported)}, unchanged {len(report.unchanged)}, "
        f"conflicts {len(report.conflicts)} into '{name}'"
    )
    if carried.drafts or carried.watermarks or carried.seeds or carried.not_brought:  # work in progress
        line += (
            f"; brought {len(carried.drafts)} draft(s), {len(carried.watermarks)} watermark(s), "
            f"{len(carried.seeds)} seed(s); {len(carried.not_brought)} thing(s) not brought"
        )
    say(line)
    for line in [*carried.drafts, *carried.watermarks, *(f"seed {s!r}" for s in carried.seeds)]:
        say(f"  brought {line}")
    for line in report.conflicts:
        warn(f"not imported: {line}")
    for line in carried.not_brought:
        warn(f"not brought: {line}")
    for finding in report.findings:
        warn(str(finding))
