"""The ``kura`` executable's front door.

Shell hooks run ``kura prefill`` before every prompt, schedulers run ``kura weave``
often and agents run ``kura recall`` on every question, so these must cost little more
than their own work. ``recall`` with plain options goes straight to
``kura.cli.recall`` (the same function the typer command calls). The full command
line (typer, YAML) costs about 0.15 s to import; so when these two are called with plain
arguments, and the answer needs no weaving, they are answered here (by ``kura.cli.map``,
which the typer commands call too). Anything else — any
other command, any option this parser does not know, ``--help``, a map that must be
re-woven — goes to the full CLI unchanged, which gives the same output the slow way.
A plain ``kura list`` (or ``list --all``) is answered here too (``kura.cli.listed``): at
20,000 memories the catalog answers it in about the time typer takes to start; and so is a
plain ``kura doctor`` (``kura.cli.checkup``), for the same reason. A host waits for
``kura hook session-start`` before its session begins: with no option but ``--max-chars N``
it is answered here too (``kura.cli.session_start``, which prints a block whatever happens).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from kura.cli.exit import quiet_when_the_reader_leaves, version_line, warn

_GLOBAL = {"-c": "config", "--config": "config", "-s": "store", "--store": "store"}
_MCP_OPTIONS = {
    "--store": "store",
    "-s": "store",
    "--thread": "thread",
    "--writable": "writable",
    "--readonly": "readonly",
}
_RECALL_NUMBERS = ("--top", "--hops", "--chars")
_RECALL_FLAGS = {
    "--explain": "explain",
    "--no-model": "no_model",
    "--json": "as_json",
    "--all": "everything",
    "--spans": "spans",
}


@quiet_when_the_reader_leaves
def main() -> None:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        sys.stdout.write(version_line() + "\n")
        sys.exit(0)
    if argv == ["hook", "capture"]:  # a host waits on it: no typer, no command table
        sys.exit(_capture())
    if argv == ["hook", "prompt"]:  # so it does before every prompt
        sys.exit(_prompt())
    asked = _recall_args(argv)
    if asked is not None:
        from kura.cli.recall import recall_command

        sys.exit(recall_command(asked[0], asked[1], **asked[2]))
    served = _mcp_args(argv)
    if served is not None:
        from kura.cli.mcp_run import mcp_command

        sys.exit(mcp_command(**served))
    hot = _parse(argv)
    if hot is not None:
        code = _answer(*hot)
        if code is not None:
            sys.exit(code)
    from kura.cli.commands import run

    run()


def _capture() -> int:
    """``kura hook capture`` (``kura.hosts.capture``): always 0, a problem on one line."""
    from kura.cli.host_input import host_input
    from kura.hosts.capture import hook

    text = host_input(hook="capture").decode("utf-8", "replace")
    problem = hook(text, selector=os.environ.get("KURA_STORE") or None)
    if problem:
        warn(problem)
    return 0


def _prompt() -> int:
    """``kura hook prompt`` (``kura.hosts.prompt``): always 0, a problem on one line."""
    from kura.cli.host_input import host_input
    from kura.hosts.prompt import hook

    text = host_input(hook="prompt").decode("utf-8", "replace")
    printed, problem = hook(text, selector=os.environ.get("KURA_STORE") or None)
    sys.stdout.write(printed)
    if problem:
        warn(problem)
    return 0


def _globals(argv: list[str]) -> tuple[dict[str, str], list[str]] | None:
    """The global options and what follows them; None for anything unusual."""
    chosen: dict[str, str] = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        flag, _, inline = argv[i].partition("=")
        if flag not in _GLOBAL or (inline and not flag.startswith("--")) or _GLOBAL[flag] in chosen:
            return None  # click reads "-s=x" as the value "=x", and refuses -s twice; let it say so
        if inline:
            chosen[_GLOBAL[flag]] = inline
            i += 1
        elif i + 1 < len(argv):
            chosen[_GLOBAL[flag]] = argv[i + 1]
            i += 2
        else:
            return None
    if "store" not in chosen and os.environ.get("KURA_STORE", "").strip():
        chosen["store"] = os.environ["KURA_STORE"]  # as -s, as every command reads it
    return chosen, argv[i:]


def _mcp_args(argv: list[str]) -> dict[str, Any] | None:
    """``kura [globals] mcp [--store S | -s S] [--writable | --readonly] [--thread ID]``
    as ``mcp_command``'s arguments, else None (typer then parses it). A host waits for
    this command's first answer, which typer and every other command would delay."""
    parsed = _globals(argv)
    if parsed is None or parsed[1][:1] != ["mcp"]:
        return None
    chosen, rest = parsed[0], parsed[1][1:]
    found: dict[str, Any] = {"config": chosen.get("config"), "store": chosen.get("store")}
    given: dict[str, str] = {}
    i = 0
    while i < len(rest):
        flag, eq, inline = rest[i].partition("=")
        key = _MCP_OPTIONS.get(flag)
        if key in ("writable", "readonly") and not eq:
            given[key], i = "", i + 1
        elif key in ("store", "thread") and (eq or i + 1 < len(rest)) and not (eq and flag == "-s"):
            given[key], i = (inline, i + 1) if eq else (rest[i + 1], i + 2)
        else:
            return None
    if "writable" in given and "readonly" in given:
        return None  # click lets the last one win; it says so the slow way
    found["store"] = given.get("store") or found["store"]
    found["thread"] = given.get("thread")
    found["writable"] = True if "writable" in given else False if "readonly" in given else None
    return found


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
    """(command, global options, --json) for the two hot map commands, a plain ``list``
    or ``doctor`` and the SessionStart hook, else None."""
    parsed = _globals(argv)
    if parsed is None:
        return None
    chosen, rest = parsed
    if rest[:1] == ["prefill"]:
        options = _prefill_args(rest[1:])
        return None if options is None else ("prefill", {**chosen, **options}, "json" in options)
    if rest in (["weave"], ["weave", "--no-model"]):
        return "weave", {**chosen, "no_model": "1"} if len(rest) == 2 else chosen, False
    if rest in (["list"], ["list", "--all"]):
        return "list", {**chosen, "all": "1"} if len(rest) == 2 else chosen, False
    if rest == ["doctor"]:
        return "doctor", chosen, False
    if rest[:2] == ["hook", "session-start"]:
        options = _prefill_args(rest[2:])
        if options is None or "json" in options:
            return None
        return "session-start", {**chosen, **options}, False
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
    if command == "session-start":  # it has read stdin, and never fails: no second answer
        from kura.cli.session_start import session_start_command

        return session_start_command(chosen)
    try:
        if command == "list":
            from kura.cli.listed import list_command

            return list_command(chosen)
        if command == "doctor":
            from kura.cli.checkup import doctor_command

            return doctor_command(chosen)
        # not at the top: `--version`, recall, list and doctor need no map
        from kura.cli.map import weave_command

        return _prefill(chosen, as_json) if command == "prefill" else weave_command(chosen)
    except BrokenPipeError:
        raise  # the reader left: answering again would only write to it again
    except Exception:  # noqa: BLE001 - the full CLI reports whatever this was, properly
        return None


def _prefill(chosen: dict[str, str], as_json: bool) -> int:
    from kura.cli.map import prefill_block

    block = prefill_block(chosen.get("config"), chosen.get("store"), chosen.get("max_chars"))
    if as_json:
        sys.stdout.write(json.dumps(block.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(block.text)
    if block.warning and block.state in ("missing", "stale", "conflicted"):
        warn(block.warning)
    return block.exit_code
