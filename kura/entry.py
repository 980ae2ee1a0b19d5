"""The ``kura`` executable's front door.

Shell hooks run ``kura prefill`` before every prompt, schedulers run ``kura weave``
often and agents run ``kura recall`` on every question, so these must cost little more
than their own work. ``recall`` with plain options goes straight to
``kura.cli_recall`` (the same function the typer command calls). The full command
line (typer, YAML) costs about 0.15 s to import; so when these two are called with plain
arguments, and the answer needs no weaving, they are answered here. Anything else — any
other command, any option this parser does not know, ``--help``, a map that must be
re-woven — goes to the full CLI unchanged, which gives the same output the slow way.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kura.errors import KuraError
    from kura.prefill import Block

_GLOBAL = {"-c": "config", "--config": "config", "-s": "store", "--store": "store"}
_RECALL_NUMBERS = ("--top", "--hops", "--chars")
_RECALL_FLAGS = {
    "--explain": "explain",
    "--no-model": "no_model",
    "--json": "as_json",
    "--all": "everything",
    "--spans": "spans",
}


def main() -> None:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        sys.stdout.write(version_line() + "\n")
        sys.exit(0)
    asked = _recall_args(argv)
    if asked is not None:
        from kura.cli_recall import recall_command

        sys.exit(recall_command(asked[0], asked[1], **asked[2]))
    hot = _parse(argv)
    if hot is not None:
        code = _answer(*hot)
        if code is not None:
            sys.exit(code)
    from kura.cli import run

    run()


def _globals(argv: list[str]) -> tuple[dict[str, str], list[str]] | None:
    """The global options and what follows them; None for anything unusual."""
    chosen: dict[str, str] = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        flag, _, inline = argv[i].partition("=")
        if flag not in _GLOBAL or (inline and not flag.startswith("--")):
            return None  # click reads "-s=x" as the value "=x"; let it say so
        if inline:
            chosen[_GLOBAL[flag]] = inline
            i += 1
        elif i + 1 < len(argv):
            chosen[_GLOBAL[flag]] = argv[i + 1]
            i += 2
        else:
            return None
    return chosen, argv[i:]


def _recall_args(argv: list[str]) -> tuple[dict[str, str], str, dict[str, Any]] | None:
    """``kura [globals] recall QUESTION [options]`` with plain, valid options, else None
    (typer then parses it and explains any mistake)."""
    parsed = _globals(argv)
    if parsed is None or not parsed[1] or parsed[1][0] != "recall":
        return None
    chosen, rest = parsed[0], parsed[1][1:]
    options: dict[str, Any] = {}
    question: str | None = None
    i = 0
    while i < len(rest):
        word = rest[i]
        flag, eq, inline = word.partition("=")
        if word == "--":
            if question is not None or len(rest) != i + 2:
                return None
            question, i = rest[i + 1], i + 2
        elif flag in _RECALL_NUMBERS:
            value = inline if eq else (rest[i + 1] if i + 1 < len(rest) else "")
            if not value.isdigit():
                return None
            options[flag[2:]] = int(value)
            i += 1 if eq else 2
        elif word in _RECALL_FLAGS:
            options[_RECALL_FLAGS[word]] = True
            i += 1
        elif word.startswith("-") or question is not None:
            return None
        else:
            question, i = word, i + 1
    return None if question is None else (chosen, question, options)


def _parse(argv: list[str]) -> tuple[str, dict[str, str], bool] | None:
    """(command, global options, --json) for the two hot map commands, else None."""
    parsed = _globals(argv)
    if parsed is None:
        return None
    chosen, rest = parsed
    if rest[:1] == ["prefill"]:
        options = _prefill_args(rest[1:])
        return None if options is None else ("prefill", {**chosen, **options}, "json" in options)
    if rest in (["weave"], ["weave", "--no-model"]):
        return "weave", {**chosen, "no_model": "1"} if len(rest) == 2 else chosen, False
    return None


def _prefill_args(rest: list[str]) -> dict[str, str] | None:
    """``--json`` and ``--max-chars N`` (digits only, else typer explains), or None."""
    options: dict[str, str] = {}
    i = 0
    while i < len(rest):
        flag, eq, inline = rest[i].partition("=")
        if rest[i] == "--json" and "json" not in options:
            options["json"], i = "1", i + 1
        elif flag == "--max-chars" and "max_chars" not in options:
            value = inline if eq else (rest[i + 1] if i + 1 < len(rest) else "")
            if not (value.isascii() and value.isdigit()):
                return None
            options["max_chars"], i = value, i + (1 if eq else 2)
        else:
            return None
    return options


def _answer(command: str, chosen: dict[str, str], as_json: bool) -> int | None:
    """The exit code after answering, or None to let the full CLI answer."""
    try:
        return _prefill(chosen, as_json) if command == "prefill" else weave_command(chosen)
    except Exception:  # noqa: BLE001 - the full CLI reports whatever this was, properly
        return None


def prefill_block(config: str | None, store: str | None, max_chars: int | str | None = None) -> Block:
    """The block to print, whatever happens: a hook must never get an empty string.
    ``max_chars`` (the option) and ``$KURA_PREFILL_MAX_CHARS`` are the host's ceilings."""
    from kura.ceiling import ENV
    from kura.prefill import build_for, missing

    host = {"--max-chars": str(max_chars)} if max_chars is not None else {}
    if os.environ.get(ENV, "").strip():
        host[f"${ENV}"] = os.environ[ENV]
    try:
        return build_for(config, store, host=host)
    except Exception as err:
        if os.environ.get("KURA_DEBUG") == "1":
            raise
        return missing(store or "default", f"unexpected error: {type(err).__name__}: {err}")


def _prefill(chosen: dict[str, str], as_json: bool) -> int:
    block = prefill_block(chosen.get("config"), chosen.get("store"), chosen.get("max_chars"))
    if as_json:
        sys.stdout.write(json.dumps(block.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(block.text)
    if block.warning and block.state in ("missing", "stale", "conflicted"):
        _warn(block.warning)
    return block.exit_code


def weave_command(chosen: dict[str, str], *, force: bool = False, as_json: bool = False) -> int:
    """``kura weave``: answered from the stored map when nothing changed (exit 2), else
    woven (exit 0, or 2 when the new map is byte-identical). Errors print one line, exit 1."""
    import datetime as dt

    from kura.config import load_config
    from kura.errors import KuraError, StoreError
    from kura.map_record import cloth_target, stored_map
    from kura.prefill import fingerprint, header_text, scribe_id, sector_header_text, summary_line
    from kura.slugs import file_stats
    from kura.state import folder

    try:
        config = load_config(chosen.get("config"))
        store = config.store_config(chosen.get("store"))
        folder(store.path, store=store.name)  # a .kura that is a link or a file: refused, by name
        settings = config.map_settings(store)
        header_text(settings, store.name)
        sector_header_text(settings, store.name)
        scribe = None if chosen.get("no_model") else config.scribe_for(store)
        stats = file_stats(store.path)  # one walk, shared with the weave if one is needed
        stamp = fingerprint(store.path, settings, today=dt.date.today(), stats=stats)
        cloth = cloth_target(store.path, settings)
        found = (
            None
            if force or as_json
            else stored_map(store.path, stamp, scribes=(scribe_id(scribe),), cloth=cloth)
        )
        if found is not None:
            summary, written, notes = found[0], False, list(found[0].get("notes", []))
        else:
            from kura.weave import weave

            woven = weave(store.open(), settings, scribe=scribe, force=force, stats=stats)
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
        _warn(note)
    return 0 if written else 2


def version_line() -> str:
    from kura import __version__

    return f"kura {__version__}"


def error_exit(err: KuraError) -> int:
    """The one way a ``KuraError`` leaves the command line: one line on stderr (``kura:
    error: …``, nothing secret repeated) and the exit code its class carries.
    ``KURA_DEBUG=1`` re-raises it, with the traceback, instead."""
    if os.environ.get("KURA_DEBUG") == "1":
        raise err
    _warn(f"error: {err}")
    return err.exit_code


def _warn(message: str) -> None:
    """One line on stderr that never repeats a secret it quotes (a mistyped store name)."""
    from kura.secrets import redact

    sys.stderr.write(f"kura: {redact(str(message))[0]}\n")
