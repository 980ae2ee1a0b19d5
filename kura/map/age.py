"""How old a memory is — which is not its mtime.

``cp -r``, a backup restore or a git checkout resets every timestamp to one moment; if
freshness came from mtime, the whole index would turn "fresh" at once, nothing would be
trimmed, and the three-layer map would have quietly switched itself off. So a memory's
age comes from the first of these that it has:

1. a date written in the memory (the latest of ``updated``, ``created``, … in its
   frontmatter; ``kura remember`` writes ``created`` and sets ``updated`` when it changes
   a memory, and a person editing by hand can bump it);
2. in a git work tree: a tracked file with uncommitted changes is an edit in progress,
   dated by its mtime (a checkout leaves files clean, so these mtimes are real); a clean
   file is dated by the last commit that changed it; an untracked one is judged as in 3;
3. the file's mtime, unless its calendar day is *shared*: two or more memories, a fifth
   of the store or more, whose mtimes fall on that day and that nothing else explains. A
   copy, restore or checkout stamps every file with one day, however small the store and
   however slowly the copy ran; people spread their edits over days. A memory whose
   written date or commit is that same day, or whose edit git sees in progress, does not
   count towards the share: a busy day of real writes is not a copy.

A memory with none of these has no known age and is not counted as fresh (the seed's
rule, taken as written: a small store written by hand today, with no dates and no git,
looks exactly like a copy of an old one, and reads as not fresh; ``kura remember`` dates
what it writes, so a store written through kura is unaffected).
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, floordiv, ne
from pathlib import Path

from kura.git import guard, stamps
from kura.map.record import git_head
from kura.store.catalog import Entry, kv_get, kv_put

SHARE = 0.2  # a fifth of the store on one file day: the mark of a copy


@dataclass(frozen=True, slots=True)
class Age:
    day: dt.date | None
    source: str  # written | edited | git | mtime | shared (an mtime not believed) | unknown
    file_day: dt.date | None = None  # for "shared": the day its mtime shares with the store


def ages(root: Path, entries: dict[str, Entry], db: sqlite3.Connection | None = None) -> dict[str, Age]:
    """Each memory's last-changed day and where that came from. Memories of one day and
    source share one ``Age`` (a weave asks this of 20,000 memories after every edit)."""
    git = _git_dates(root, db)
    rows = list(entries.values())
    written = [
        dt.date.fromisoformat(text) if text else None for text in map(attrgetter("written_text"), rows)
    ]
    seconds = map(floordiv, map(attrgetter("mtime_ns"), rows), repeat(1_000_000_000))
    file_days = list(map(dt.date.fromtimestamp, seconds))  # the second it falls in: never rounded up
    shared = _shared_days(rows, written, file_days, git)
    made: dict[tuple[dt.date | None, str, dt.date | None], Age] = {}
    if not git.committed and not git.dirty:  # outside git: an age depends on (written, file day) alone
        pairs = list(zip(written, file_days, strict=True))
        keyed = {pair: _plain_key(*pair, shared) for pair in set(pairs)}
        one = {pair: made.get(key) or made.setdefault(key, Age(*key)) for pair, key in keyed.items()}
        return dict(zip(entries, map(one.__getitem__, pairs), strict=True))
    out: dict[str, Age] = {}
    key: tuple[dt.date | None, str, dt.date | None]
    for slug, entry, wrote, day in zip(entries, rows, written, file_days, strict=True):
        if wrote is not None:
            key = (wrote, "written", None)
        elif entry.rel in git.dirty:
            key = (day, "edited", None)  # a real edit, not a checkout
        elif entry.rel in git.committed:
            key = (git.committed[entry.rel], "git", None)
        elif day in shared:
            key = (None, "shared", day)
        else:
            key = (day, "mtime", None)
        out[slug] = made.get(key) or made.setdefault(key, Age(*key))
    return out


def _plain_key(
    wrote: dt.date | None, day: dt.date, shared: set[dt.date]
) -> tuple[dt.date | None, str, dt.date | None]:
    """An ``Age``'s fields for a memory git says nothing about, as ``ages`` decides them."""
    if wrote is not None:
        return (wrote, "written", None)
    return (None, "shared", day) if day in shared else (day, "mtime", None)


def shared_note(age: dict[str, Age]) -> str | None:
    """What ``kura weave`` says when file dates were not believed, or None. (A shared day
    holds two memories at least, but one of them may have a written date of another day,
    so the undated ones can be a single memory.)"""
    days = sorted({a.file_day for a in age.values() if a.source == "shared" and a.file_day})
    if not days:
        return None
    count = sum(1 for a in age.values() if a.source == "shared")
    which = ", ".join(d.isoformat() for d in days[:3]) + (", …" if len(days) > 3 else "")
    one = "one file date" if len(days) == 1 else "file dates"
    has, share, its, them = (
        ("memories have", "share", "their", "them") if count > 1 else ("memory has", "shares", "its", "it")
    )
    return (
        f"{count} {has} no date of {its} own and {share} "
        f"{one} ({which}) with a fifth of the store or more, as a copy, restore or checkout leaves "
        f"{them}: {its} age is unknown, so {'they are' if count > 1 else 'it is'} not counted as fresh — "
        "a date in the frontmatter (`updated: YYYY-MM-DD`, which kura remember writes) or a git commit "
        "gives a memory its age"
    )


def fresh(age: Age, today: dt.date, days: float) -> bool:
    return age.day is not None and (today - age.day).days < days


@dataclass(frozen=True, slots=True)
class _Git:
    committed: dict[str, dt.date]
    dirty: frozenset[str]


def _shared_days(
    rows: list[Entry], written: list[dt.date | None], file_days: list[dt.date], git: _Git
) -> set[dt.date]:
    """Calendar days that two or more memories, a fifth of the store or more, have as
    their mtime's day with nothing to explain it (no commit of theirs, no edit git sees in
    progress, no written date of that day): the days a copy, restore or checkout made."""
    days: Counter[dt.date]
    if not git.committed and not git.dirty:  # outside git (or nothing tracked): one pass in C
        days = Counter(compress(file_days, map(ne, written, file_days)))
    else:
        days = Counter()
        for entry, wrote, day in zip(rows, written, file_days, strict=True):
            if entry.rel in git.committed or entry.rel in git.dirty:
                continue  # git dates these; a checkout's mtimes say nothing about the rest
            if wrote != day:  # a memory written that day was really written that day
                days[day] += 1
    least = max(2, SHARE * len(rows))
    return {day for day, count in days.items() if count >= least}


def _git_dates(root: Path, db: sqlite3.Connection | None) -> _Git:
    """Last commit date per store-relative path, cached per HEAD; empty outside git."""
    if not git_head(root):  # read from .git's files: no process to spawn outside git
        return _Git({}, frozenset())
    head = _git(root, "rev-parse", "HEAD")
    if head is None:
        return _Git({}, frozenset())
    dirty = _dirty(root)
    cache_key = f"git-dates:{head.strip()}"
    cached = kv_get(db, cache_key) if db is not None else None
    committed = _dates(cached) if cached is not None else None
    if committed is None:  # not cached yet, or not what this code caches (the state folder is untrusted)
        log = _git(root, "log", "--format=%x00%ct", "--name-only", "--no-renames", "--relative", "--", ".")
        cached = _latest_per_file(log or "")
        if db is not None:
            kv_put(db, cache_key, cached)
        committed = _dates(cached) or {}
    return _Git(committed, dirty)


def _dates(cached: str) -> dict[str, dt.date] | None:
    """The cached ``path<TAB>YYYY-MM-DD`` lines, or None when one is not such a line."""
    committed = {}
    for line in cached.splitlines():
        rel, tab, day = line.rpartition("\t")
        try:
            committed[rel] = dt.date.fromisoformat(day)
        except ValueError:
            return None
        if not tab:
            return None
    return committed


_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # bytes ``surrogateescape`` kept: no SQLite text takes them


def _latest_per_file(log: str) -> str:
    seen: dict[str, str] = {}
    day = ""
    for line in log.splitlines():
        if line.startswith("\0"):
            found = stamps.day(line[1:])  # a crafted commit's date no calendar holds: none
            day = "" if found is None else found.isoformat()
        elif line and day and line not in seen and _NOT_UTF8.search(line) is None:  # no memory's name
            seen[line] = day
    return "".join(f"{rel}\t{d}\n" for rel, d in seen.items())


def _dirty(root: Path) -> frozenset[str]:
    off = guard.unfiltered(_git(root, *guard.FILTERS) or "")  # status may read files through them
    out = None if off is None else _git(root, *off, "status", *guard.STATUS, "--", ".")
    paths = set()
    for record in (out or "").split("\0"):
        if len(record) > 3 and not record.startswith("??"):  # untracked may be a fresh copy
            paths.add(record[3:])
    prefix = _git(root, "rev-parse", "--show-prefix") or ""
    prefix = prefix.strip()
    return frozenset(p[len(prefix) :] if prefix and p.startswith(prefix) else p for p in paths)


def _git(root: Path, *args: str) -> str | None:
    import subprocess  # here: a store outside git (and a weave whose ages are kept) never runs one

    try:
        result = subprocess.run(
            ["git", *guard.SAFE, "-c", "core.quotePath=false", "-C", str(root), *args],
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",  # a name that is not UTF-8 (no memory's): never a crash
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout if result.returncode == 0 else None


def added_days(root: Path) -> dict[str, dt.date]:
    """The day git first committed each store-relative path (its oldest adding commit's author
    date); empty outside git or when git does not answer."""
    if not git_head(root):
        return {}
    log = _git(
        root,
        "log",
        "--diff-filter=A",
        "--format=%x00%at",
        "--name-only",
        "--no-renames",
        "--relative",
        "--",
        ".",
    )
    added: dict[str, dt.date] = {}
    day: dt.date | None = None
    for line in (log or "").splitlines():
        if line.startswith("\0"):
            day = stamps.day(line[1:]) if line[1:].isdigit() else None
        elif line and day is not None:
            added[line] = day  # newest first: the last seen is the oldest
    return added
