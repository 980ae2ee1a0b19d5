"""How many observations one source may add to one log in a day.

An observation costs its writer one line and every later prompt a place in "Latest
observations", and ``POST /observe`` or ``kura_observe`` may be driven by whoever can reach
the server or steer the agent. A flood of 1,500 🔴 entries in an afternoon is no notebook:
it buries the agent's own notes and pushes consolidation around. So each source (``cli``,
``http``, ``mcp``) may add ``MAX_PER_DAY`` entries to each log a day; past that a write is
refused, saying so, and nothing is written.

The counts are derived state (``.kura/observed.json``, today's only), read under the state
folder's rules: a file of the wrong shape is started afresh, which costs nothing but the
day's count — whoever can write ``.kura/`` can write the log itself.
"""

from __future__ import annotations

import json
from datetime import date

from kura.errors import PolicyRefused
from kura.store import state as st
from kura.store.atomic import locked, write_atomic
from kura.store.store import Store

MAX_PER_DAY = 200  # entries one source may add to one log in a day
SOURCES = ("cli", "http", "mcp")
FILE = "observed.json"
LOCK = "observed.lock"
_THEN = "the day's counts start afresh"


def take(store: Store, log: str, source: str, day: date) -> None:
    """Count one entry from ``source`` to ``log`` (its path in ``store``) on ``day``;
    PolicyRefused, with nothing counted, once the source has added ``MAX_PER_DAY`` there."""
    folder = st.folder(store.root, store=store.name, create=True)
    key = f"{source}:{log}"
    with locked(folder / LOCK):
        counts = _counts(store, day)
        if counts.get(key, 0) >= MAX_PER_DAY:
            raise PolicyRefused(
                f"store '{store.name}', {log}: {source} has added {MAX_PER_DAY} observations today, "
                f"the most one source may add per day; nothing was written — consolidate the log "
                "(kura observe --consolidate) or keep what matters as a memory"
            )
        counts[key] = counts.get(key, 0) + 1
        text = json.dumps({"version": 1, "day": day.isoformat(), "counts": counts}, separators=(",", ":"))
        write_atomic(folder / FILE, (text + "\n").encode("utf-8"))


def _counts(store: Store, day: date) -> dict[str, int]:
    """Today's counts; none for another day, or from a file that is not what ``take`` writes
    (said once on stderr)."""
    path = store.state_dir / FILE
    data = st.read_json(path, then=_THEN)
    if data is None:
        return {}
    counts = data.get("counts")
    if data.get("version") != 1 or not isinstance(data.get("day"), str) or not isinstance(counts, dict):
        st.damaged(path, "is not the day's counts kura writes", _THEN)
        return {}
    if data["day"] != day.isoformat():
        return {}
    kept = {k: v for k, v in counts.items() if isinstance(k, str) and type(v) is int and v >= 0}
    if len(kept) != len(counts):
        st.damaged(path, "holds counts of the wrong shape", "they were left out")
    return kept
