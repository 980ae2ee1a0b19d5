"""``kura hook session-start``: the map a host puts in front of a new session.

A host waits for its SessionStart hook before the session begins, so this module imports no
typer: the front door (``kura.cli.entry``) answers the plain command from here, and the typer
command in ``kura.cli.hook`` calls the same function for anything else.

The host's JSON comes on stdin; its ``cwd`` is the folder the store is chosen for, exactly
as ``kura prefill`` run in that folder would choose it (``-s`` and ``KURA_STORE`` still win).
The hook never fails the host: it always prints a block — the map, or one that says the map
is MISSING and why, never an empty string that would read as "nothing is remembered" — and
exits 0, with any trouble said in one line on stderr. Claude Code keeps only a preview of a
hook's output past 10,000 characters, so the whole output stays within ``--max-chars``
(9,500 unless told). When drafts wait for review, one line after the map says how many and
where to review them, never what they say.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any, BinaryIO

from kura.cli.exit import warn
from kura.cli.host_input import PAYLOAD_CAP, host_input
from kura.cli.map import prefill_block
from kura.config import load_config
from kura.distill.waiting import waiting
from kura.errors import KuraError
from kura.map.ceiling import length, shown_name
from kura.map_settings import MIN_CHARS

CEILING = 9500  # under Claude Code's 10,000-character cap on what a hook adds to the context
FALLBACK = (
    "<<<KURA-MAP store={name}>>>\nThe memory map is MISSING, not empty: {why} Do not assume nothing is "
    "remembered; say that memory is unavailable right now.\n<<<END KURA-MAP>>>\n"
)


def session_start_command(chosen: dict[str, str], stdin: BinaryIO | None = None) -> int:
    """Print the block for ``chosen`` (``config``, ``store``, ``max_chars``) and the host's JSON
    on ``stdin``; always 0, whatever happens."""
    try:
        text = session_start(chosen, host_payload(stdin))
    except Exception as err:
        if os.environ.get("KURA_DEBUG") == "1":
            raise
        warn(f"hook session-start: unexpected error: {type(err).__name__}: {err}")
        text = FALLBACK.format(name="default", why=f"kura failed ({type(err).__name__}).")
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0


def session_start(chosen: dict[str, str], payload: dict[str, Any]) -> str:
    """The map block (``kura.cli.map.prefill_block``) of the store chosen for the host's
    folder, then the line about waiting drafts, all within the ceiling."""
    config, selector, folder = chosen.get("config"), chosen.get("store"), host_folder(payload.get("cwd"))
    cap = int(chosen.get("max_chars", CEILING))
    line = drafts_line(config, selector, folder)
    if cap and line and cap - length(line) < max(MIN_CHARS, cap // 2):
        line = ""  # a ceiling this tight is the map's
    block = prefill_block(config, selector, cap - length(line) if cap else 0, cwd=folder)
    if block.warning and block.state in ("missing", "stale", "conflicted"):
        warn(block.warning)
    return block.text + line


def host_folder(cwd: object) -> Path | None:
    """The host's folder, which the store is chosen for as a command run there chooses it;
    None (the current folder) when the host named none or one that cannot be used."""
    if cwd is None:
        return None
    reason = "not an absolute path"
    if isinstance(cwd, str) and os.path.isabs(cwd):
        if os.path.isdir(cwd):
            return Path(cwd)
        reason = "not a folder"
    warn(f"hook session-start: the host's cwd {str(cwd)[:200]!r} cannot be used ({reason}); "
         f"the store is chosen from {os.getcwd()}")  # fmt: skip
    return None


def drafts_line(config: str | None, selector: str | None, folder: Path | None = None) -> str:
    """One line saying how many drafts wait for review and where, or "" (none, or no store)."""
    try:
        store = load_config(config, cwd=folder).store_config(selector)
        count = waiting(store.path, store.name)
    except (KuraError, OSError):
        return ""  # the block says what is wrong with the store
    if not count:
        return ""
    command = "kura " + (f"-s {shlex.quote(selector)} " if selector else "") + "distill drafts"
    many = f"{count} drafts wait" if count > 1 else "1 draft waits"
    name = shown_name(" ".join(store.name.split()), 1)  # one line, however the folder is named
    return (
        f"kura: {many} for review in store '{name}' — list them with `{command}`, "
        "or open /ui/drafts in `kura serve`.\n"
    )


def host_payload(stdin: BinaryIO | None = None) -> dict[str, Any]:
    """The host's JSON object from stdin, or {} — when stdin is a terminal (never waited on),
    empty, not JSON, not an object, too big, or not written within ``PAYLOAD_WAIT`` seconds."""
    data = host_input(stdin, hook="session-start")
    if len(data) > PAYLOAD_CAP:
        return {}
    try:
        value = json.loads(data.decode("utf-8", "replace")) if data.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
