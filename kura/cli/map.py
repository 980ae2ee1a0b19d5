"""``kura prefill`` and ``kura weave``: the two map commands, shared by the fast path
(``kura.cli.entry``) and the typer app (``kura.cli.commands``).

A shell hook runs ``kura prefill`` before every prompt and a scheduler runs ``kura weave``
often, so both import here only what their answer needs: a current map costs no YAML,
SQLite or typer, and the weave itself is loaded only when the map must be re-woven.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from kura.cli.exit import error_exit, warn
from kura.config import load_config
from kura.errors import KuraError, StoreError
from kura.files.slugs import file_stats
from kura.map.record import cloth_target, fingerprint, scribe_id, stored_map, summary_line
from kura.map_settings import CEILING_ENV as ENV
from kura.map_settings import header_text, sector_header_text
from kura.store.state import folder

if TYPE_CHECKING:
    from kura.map.prefill import Block


def prefill_block(
    config: str | None, store: str | None, max_chars: int | str | None = None, *, cwd: Path | None = None
) -> Block:
    """The block to print, whatever happens: a hook must never get an empty string.
    ``max_chars`` (the option) and ``$KURA_PREFILL_MAX_CHARS`` are the host's ceilings;
    ``cwd``: the folder the store is chosen for (a hook's ``cwd``), else the current one."""
    from kura.map.prefill import build_for, missing

    host = {"--max-chars": str(max_chars)} if max_chars is not None else {}
    if os.environ.get(ENV, "").strip():
        host[f"${ENV}"] = os.environ[ENV]
    try:
        return build_for(config, store, host=host, cwd=cwd)
    except Exception as err:
        if os.environ.get("KURA_DEBUG") == "1":
            raise
        return missing(store or "default", f"unexpected error: {type(err).__name__}: {err}")


@contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector off for one weave: at 20,000 memories the weave builds
    a few hundred thousand tuples, lists and strings that all live to its end, and the
    collector would walk them again and again to find no cycle (0.1 s of a weave after one
    edit, 0.2 s of a cold one). Reference counting still frees everything; a scribe's few
    calls leave little else; the collector is on again after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def weave_command(chosen: dict[str, str], *, force: bool = False, as_json: bool = False) -> int:
    """``kura weave``: answered from the stored map when nothing changed (exit 2), else
    woven (exit 0, or 2 when the new map is byte-identical). Errors print one line, exit 1."""
    with _no_gc():
        return _weave_command(chosen, force=force, as_json=as_json)


def _weave_command(chosen: dict[str, str], *, force: bool, as_json: bool) -> int:
    try:
        config = load_config(chosen.get("config"))
        store = config.store_config(chosen.get("store"))
        folder(store.path, store=store.name)  # a .kura that is a link or a file: refused, by name
        settings = config.map_settings(store)
        header_text(settings, store.name)
        sector_header_text(settings, store.name)
        scribe = None if chosen.get("no_model") else config.scribe_for(store)
        stats = file_stats(store.path)  # one walk, shared with the weave if one is needed
        today = dt.date.today()
        stamp = fingerprint(store.path, settings, today=today, stats=stats)
        cloth = cloth_target(store.path, settings)
        found = (
            None
            if force or as_json
            else stored_map(store.path, stamp, scribes=(scribe_id(scribe),), cloth=cloth)
        )
        if found is not None:
            summary, written, notes = found[0], False, list(found[0].get("notes", []))
        else:
            from kura.map.weave import weave

            woven = weave(
                store.open(), settings, scribe=scribe, force=force, stats=stats, stamp=stamp, today=today,
                checked=not (force or as_json),
            )  # fmt: skip
            assert woven is not None
            if woven.error:
                raise StoreError(woven.error)
            summary, written, notes = woven.to_dict(), woven.written, woven.notes
    except KuraError as err:
        return error_exit(err)
    if as_json:
        sys.stdout.write(json.dumps(summary, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(summary_line(summary, written=written) + "\n")
    for note in notes:
        warn(note)
    return 0 if written else 2
