"""The person's rules beside the project's map.

Inside a project the map is the project's store; but the person has their own store too
(the default of their user-level kura.toml), and its *rules* — the lines of the pinned
types, user and feedback by default: who they are and how they want to work — hold in
every project. So the block a host puts in the prompt is the project's map, then those
lines under a short heading that names the person's store. Only the pinned lines: the
rest of the person's store is a recall away (``kura recall`` searches both stores).

The project's map comes first and is never cut for the person's rules: under a host's
character ceiling the rules get only what the project's block leaves, and lose lines from
the end (said in a last line) before anything else; with no room even for their heading
they are left out, and the JSON says so. Which lines are pinned the last weave of the
person's store recorded in its ``map.json`` beside the cloth, checked like the rest of
that record (``kura.map.record``); a stale map is woven again without a model call, as
the project's own is, and one too slow to weave now leaves the rules out with the reason.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kura.errors import KuraError
from kura.map.ceiling import length
from kura.map.record import cloth_target, fingerprint, pinned_lines, scribe_id, stored_map
from kura.map_settings import MapSettings

if TYPE_CHECKING:
    from kura.config import ModelConfig, StoreConfig

OPEN = "<<<KURA-RULES store={name}>>>"
CLOSE = "<<<END KURA-RULES>>>"
HEADING = (
    "The person's own rules, from their kura store '{name}' (read beside this project's store; "
    "open one with kura -s {name} show SLUG):"
)
MORE = "… and {n} more (kura -s {name} list)"


@dataclass(frozen=True, slots=True)
class Rules:
    store: str
    lines: tuple[str, ...]
    reason: str = ""  # why there are none to show, when there are none


@dataclass(frozen=True, slots=True)
class Fitted:
    text: str  # "" when nothing fits (or there is nothing to show)
    shown: int
    why: str = ""


def rules(store: StoreConfig, settings: MapSettings, scribe: ModelConfig | None) -> Rules:
    """The pinned lines of ``store``'s map, as its last weave recorded them, or woven now."""
    today = dt.date.today()
    wanted = scribe_id(scribe)
    scribes = (wanted, f"partial:{wanted}") if wanted else ("",)
    try:
        stamp = fingerprint(store.path, settings, today=today)
        found = stored_map(store.path, stamp, scribes=scribes, cloth=cloth_target(store.path, settings))
        pinned = pinned_lines(*found) if found is not None else None
        if found is not None and pinned is not None:
            return Rules(store.name, _picked(found[1], pinned))
        return _woven(store, settings, scribe, today)
    except (KuraError, OSError) as err:
        return Rules(store.name, (), f"the person's store '{store.name}' could not be read: {err}")


def _woven(store: StoreConfig, settings: MapSettings, scribe: ModelConfig | None, today: dt.date) -> Rules:
    from kura.map.weave import weave  # only a stale map pays for the weave (yaml, sqlite3)

    woven = weave(store.open(), settings, today=today, scribe=scribe, max_model_calls=0, max_parse=2000)
    if woven is None:
        return Rules(store.name, (), f"the map of '{store.name}' is stale; run kura -s {store.name} weave")
    return Rules(store.name, _picked(woven.text, woven.pinned))


def _picked(text: str, pinned: list[int]) -> tuple[str, ...]:
    lines = text.split("\n")
    return tuple(lines[n] for n in pinned if n < len(lines) and lines[n].strip())


def fitted(found: Rules, room: int | None) -> Fitted:
    """The rules' block within ``room`` characters (None: no ceiling): every line, else the
    first lines and a line saying how many more, else nothing."""
    if not found.lines:
        return Fitted("", 0, found.reason or f"no pinned lines in the person's store '{found.store}'")
    name = found.store
    head = f"{OPEN.format(name=name)}\n{HEADING.format(name=name)}\n\n"
    tail = f"{CLOSE}\n"
    for shown in range(len(found.lines), -1, -1):
        more = len(found.lines) - shown
        body = list(found.lines[:shown]) + ([MORE.format(n=more, name=name)] if more else [])
        text = head + "\n".join(body) + "\n" + tail
        if room is None or length(text) <= room:
            if shown == 0:
                break
            cut = f"{more} of {len(found.lines)} lines left out for the ceiling" if more else ""
            return Fitted(text, shown, cut)
    return Fitted("", 0, f"no room under the ceiling for the person's rules from '{name}'")


def part(found: Rules, fit: Fitted) -> dict[str, Any]:
    """The person's part, as ``kura prefill --json`` lists it."""
    return {
        "store": found.store,
        "scope": "person",
        "rules": len(found.lines),
        "shown": fit.shown,
        "chars": length(fit.text),
        "warning": fit.why,
    }
