"""The days memories were used, for decay: recall marks what it returned, once a day.

Derived, gitignored state (``.kura/uses.json``: slug → last day used and how many days
it was used). Losing it only makes decay a little harsher; so a mark is written without
the store lock, atomically, and a write that loses a race loses one day's mark — and a
file that is not what kura writes (read by ``kura.store.state``'s rules) counts as no marks.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Iterable
from pathlib import Path

from kura.errors import StoreError
from kura.files.belief import Use
from kura.store import state as st
from kura.store.atomic import write_atomic

FILE = "uses.json"
_THEN = "recall counts uses afresh"


def load(state_dir: Path) -> dict[str, Use]:
    raw = st.read_json(state_dir / FILE, then=_THEN)
    out: dict[str, Use] = {}
    for slug, row in (raw or {}).items():
        if isinstance(row, list) and len(row) == 2 and isinstance(row[0], str) and type(row[1]) is int:
            try:
                out[slug] = Use(dt.date.fromisoformat(row[0]) if row[0] else None, row[1])
            except ValueError:
                continue
    if raw and len(out) != len(raw):
        st.damaged(state_dir / FILE, f"holds {len(raw) - len(out)} entries of the wrong shape", _THEN)
    return out


def mark(state_dir: Path, slugs: Iterable[str], today: dt.date | None = None) -> bool:
    """Record that ``slugs`` were used today; False when nothing needed writing."""
    today = today or dt.date.today()
    known = load(state_dir)
    fresh = [s for s in dict.fromkeys(slugs) if known.get(s, Use()).last != today]
    if not fresh:
        return False
    for slug in fresh:
        known[slug] = Use(today, known.get(slug, Use()).count + 1)
    data = {s: [u.last.isoformat() if u.last else "", u.count] for s, u in sorted(known.items())}
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(state_dir / FILE, (json.dumps(data, indent=0) + "\n").encode("utf-8"))
    except (OSError, StoreError):
        return False
    return True


def forget(state_dir: Path, slug: str) -> None:
    """Drop a purged memory's marks."""
    known = load(state_dir)
    if known.pop(slug, None) is not None:
        data = {s: [u.last.isoformat() if u.last else "", u.count] for s, u in sorted(known.items())}
        write_atomic(state_dir / FILE, (json.dumps(data, indent=0) + "\n").encode("utf-8"))


def moved(state_dir: Path, old: str, new: str) -> None:
    """A renamed memory keeps its marks (decay would take it for one never used)."""
    known = load(state_dir)
    if old in known:
        known[new] = known.pop(old)
        data = {s: [u.last.isoformat() if u.last else "", u.count] for s, u in sorted(known.items())}
        with contextlib.suppress(OSError, StoreError):  # derived: a lost mark only makes decay harsher
            write_atomic(state_dir / FILE, (json.dumps(data, indent=0) + "\n").encode("utf-8"))
