"""The days memories were used, for decay: recall marks what it returned, once a day.

Derived, gitignored state (``.kura/uses.json``: slug → last day used and how many days
it was used). Losing it only makes decay a little harsher; so a mark is written without
the store lock, atomically, and a write that loses a race loses one day's mark.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from pathlib import Path

from kura.atomic import write_atomic
from kura.standing import Use

FILE = "uses.json"


def load(state_dir: Path) -> dict[str, Use]:
    try:
        raw = json.loads((state_dir / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out: dict[str, Use] = {}
    if isinstance(raw, dict):
        for slug, row in raw.items():
            try:
                out[str(slug)] = Use(dt.date.fromisoformat(str(row[0])), int(row[1]))
            except (TypeError, ValueError, IndexError, KeyError):
                continue
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
    except OSError:
        return False
    return True


def forget(state_dir: Path, slug: str) -> None:
    """Drop a purged memory's marks."""
    known = load(state_dir)
    if known.pop(slug, None) is not None:
        data = {s: [u.last.isoformat() if u.last else "", u.count] for s, u in sorted(known.items())}
        write_atomic(state_dir / FILE, (json.dumps(data, indent=0) + "\n").encode("utf-8"))
