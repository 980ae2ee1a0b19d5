"""Recent activity: which memories were created, changed, superseded or forgotten lately.

"What have I been working on this week?" is answered from what the files and git already
record, never from a log of kura's own (a person edits files by hand, a pull brings other
people's writes, and both must show):

- the frontmatter's dates: ``created``, ``updated`` (``kura remember`` writes both),
  ``valid_until`` with ``superseded_by`` (a correction), ``archived`` (a forget);
- in a git work tree, the commits in the window that added (created) or changed a memory's
  file (a rename, ``kura rename``'s or git's, is a change, "renamed from OLD", not a
  creation), and the files changed but not yet committed or not yet tracked, dated by
  their file time — git's word that these edits are real.

File times alone are not used outside git: a copy, restore or checkout stamps every file
with one moment (``kura.map.age`` explains it), and "everything changed today" is no
answer. A memory whose file is gone (purged, or deleted by hand) is not listed here.

Dates are days (the frontmatter holds days); a commit counts on its committer's day in
local time, as ``kura.map.age`` dates it. Each memory is listed once, by its newest event
in the window, with the other kinds it also had there.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kura.errors import GitError, InvalidRequest
from kura.files.witness import parse_when
from kura.git import guard, stamps
from kura.git.run import READ_SECONDS, run
from kura.store.store import Store

What = Literal["created", "changed", "superseded", "forgotten"]
Source = Literal["frontmatter", "git", "uncommitted", "untracked"]
_RANK: dict[str, int] = {"forgotten": 0, "superseded": 1, "created": 2, "changed": 3}  # same day: first wins
DEFAULT_SINCE = "7d"
_SINCE = re.compile(r"(\d{1,5})([dw])")


@dataclass(frozen=True, slots=True)
class Event:
    slug: str
    what: What
    day: dt.date
    source: Source
    detail: str = ""  # what replaced it, why it was forgotten


@dataclass(frozen=True, slots=True)
class Activity:
    """One memory's newest event in the window, and the other kinds it also had there."""

    slug: str
    type: str | None
    description: str
    what: What
    day: dt.date
    source: Source
    detail: str = ""
    also: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug, "type": self.type, "description": self.description,
            "what": self.what, "day": self.day.isoformat(), "source": self.source,
            "detail": self.detail, "also": list(self.also),
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Recent:
    store: str
    since: dt.date
    today: dt.date
    items: tuple[Activity, ...] = field(default=())
    in_git: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"store": self.store, "since": self.since.isoformat(), "today": self.today.isoformat(),
                "in_git": self.in_git, "items": [a.to_dict() for a in self.items]}  # fmt: skip


def since_day(since: str, today: dt.date) -> dt.date:
    """The first day of the window ``since`` names: ``7d`` (the last seven days and today),
    ``2w``, or a date ``YYYY-MM-DD``."""
    text = since.strip().lower()
    found = _SINCE.fullmatch(text)
    if found:
        days = int(found.group(1)) * (7 if found.group(2) == "w" else 1)
        return today - dt.timedelta(days=days)
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        shown = since if len(since) <= 40 else since[:39] + "…"
        raise InvalidRequest(
            f"since {shown!r}: expected a number of days or weeks (7d, 2w) or a date (YYYY-MM-DD)"
        ) from None


def recent(
    store: Store, *, since: str = DEFAULT_SINCE, type: str | None = None, today: dt.date | None = None
) -> Recent:
    """The memories with activity from ``since`` to ``today``, newest first."""
    today = today or dt.date.today()
    start = since_day(since, today)
    memories = {m.slug: m for m in store.list(type)}
    rel_slug = {m.path.relative_to(store.root).as_posix(): m.slug for m in memories.values()}
    events = [e for m in memories.values() for e in _written(m.slug, m.note.meta)]
    git = _git_events(store.root, rel_slug, start)
    events += git or []
    window = [e for e in events if start <= e.day <= today]
    items = [
        _activity(memories[slug], [e for e in window if e.slug == slug]) for slug in {e.slug for e in window}
    ]
    items.sort(key=lambda a: (-a.day.toordinal(), _RANK[a.what], a.slug))
    return Recent(store.name, start, today, tuple(items), in_git=git is not None)


def lines(found: dict[str, Any]) -> list[str]:
    """``Recent.to_dict()`` as text (the CLI's and the MCP tool's): one line per memory —
    day, what happened, slug, type, description, and how it is known."""
    window = f"since {found['since']}" + ("" if found["in_git"] else " (from the files' dates; not in git)")
    items = found["items"]
    if not items:
        return [f"nothing created, changed, superseded or forgotten in store '{found['store']}' {window}"]
    width = max(len(a["slug"]) for a in items)
    said = [f"store '{found['store']}', {len(items)} with activity {window}, newest first:"]
    for a in items:
        notes = [
            a["source"],
            *([a["detail"]] if a["detail"] else []),
            *([f"also {', '.join(a['also'])}"] if a["also"] else []),
        ]
        said.append(
            f"{a['day']}  {a['what']:<10}  {a['slug']:<{width}}  {a['type'] or '?':<9}  {a['description']}"
            f"  ({'; '.join(notes)})"
        )
    return said


def _activity(memory: Any, events: list[Event]) -> Activity:
    newest = min(events, key=lambda e: (-e.day.toordinal(), _RANK[e.what]))
    also = sorted({e.what for e in events} - {newest.what}, key=_RANK.__getitem__)
    return Activity(
        slug=memory.slug, type=memory.type, description=memory.description, what=newest.what,
        day=newest.day, source=newest.source, detail=newest.detail, also=tuple(also),
    )  # fmt: skip


def _written(slug: str, meta: dict[str, Any]) -> list[Event]:
    """The events a memory's frontmatter dates."""
    found = []
    for key, what in (("created", "created"), ("updated", "changed"), ("archived", "forgotten")):
        day = parse_when(meta.get(key))
        if day is not None:
            detail = " ".join(str(meta.get("archived_reason") or "").split()) if what == "forgotten" else ""
            found.append(Event(slug, what, day, "frontmatter", detail))  # type: ignore[arg-type]
    newer = " ".join(str(meta.get("superseded_by") or "").split())
    day = parse_when(meta.get("valid_until"))
    if newer and day is not None:
        found.append(Event(slug, "superseded", day, "frontmatter", f"by {newer}"))
    return found


def _git_events(root: Path, rel_slug: dict[str, str], start: dt.date) -> list[Event] | None:
    """What git says happened to the memories' files since ``start``; None outside git (or
    without git: a store needs none)."""
    try:
        inside = run(root, "rev-parse", "--is-inside-work-tree", "--show-prefix", check=False,
                     timeout=READ_SECONDS)  # fmt: skip
        if not inside.ok or not inside.text.startswith("true"):
            return None
        prefix = inside.text.split("\n")[1] if "\n" in inside.text else ""
        log = run(root, "-c", "core.quotePath=false", "log", f"--since={start.isoformat()} 00:00",
                  "--format=%x00%ct", "--name-status", "--find-renames", "--relative", "--", ".",
                  check=False, timeout=READ_SECONDS)  # fmt: skip
        filters = run(root, *guard.FILTERS, check=False, timeout=READ_SECONDS).text
        off = guard.unfiltered(filters)  # status reads files through them
        status = None if off is None else run(root, "-c", "core.quotePath=false", *off, "status",
                     *guard.STATUS, "--", ".", check=False, timeout=READ_SECONDS)  # fmt: skip
    except GitError:
        return None
    events = _committed(log.text if log.ok else "", rel_slug)
    listed = status.out.decode("utf-8", "surrogateescape") if status is not None else ""
    return events + _uncommitted(root, listed, prefix, rel_slug)


def _committed(log: str, rel_slug: dict[str, str]) -> list[Event]:
    events = []
    day: dt.date | None = None
    for line in log.splitlines():
        if line.startswith("\0"):
            day = stamps.day(line[1:])
            continue
        code, _, names = line.partition("\t")
        rel = names.rsplit("\t", 1)[-1]  # a rename names the old path, then the new one
        if day is None or rel not in rel_slug or code[:1] not in ("A", "M", "R"):
            continue
        what: What = "created" if code.startswith("A") else "changed"
        moved = f"renamed from {names.split(chr(9), 1)[0].removesuffix('.md')}" if code[:1] == "R" else ""
        events.append(Event(rel_slug[rel], what, day, "git", moved))
    return events


def _uncommitted(root: Path, status: str, prefix: str, rel_slug: dict[str, str]) -> list[Event]:
    """Changed-but-uncommitted and untracked memory files, dated by their file time."""
    events = []
    for record in status.split("\0"):
        if len(record) < 4:
            continue
        rel = record[3:]
        rel = rel[len(prefix) :] if prefix and rel.startswith(prefix) else rel
        if rel not in rel_slug:
            continue
        try:
            day = dt.datetime.fromtimestamp(os.stat(root / rel).st_mtime).date()
        except OSError:
            continue
        untracked = record.startswith("??")
        what: What = "created" if untracked else "changed"
        events.append(Event(rel_slug[rel], what, day, "untracked" if untracked else "uncommitted"))
    return events
