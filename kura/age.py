"""How old a memory is — which is not its mtime.

``cp -r``, a backup restore or a git checkout resets every timestamp to one moment; if
freshness came from mtime, the whole index would turn "fresh" at once, nothing would be
trimmed, and the three-layer map would have quietly switched itself off. So a memory's
age comes from the first of these that it has:

1. a date written in the memory (the latest of ``updated``, ``created``, … in its
   frontmatter; ``kura remember`` sets ``updated`` when it changes a memory, and a person
   editing by hand can bump it);
2. in a git work tree: a tracked file with uncommitted changes is an edit in progress,
   dated by its mtime (a checkout leaves files clean, so these mtimes are real); a clean
   file is dated by the last commit that changed it; an untracked one is judged as in 3;
3. the file's mtime, unless it belongs to a *burst*: at least ten memories, a fifth of the
   store or more, stamped within two seconds of each other. People and agents do not
   write ten memories in two seconds; copies, restores and checkouts do. A small new store
   whose few memories really were all written today is well under that bar.

A memory with none of these has no known age and is not counted as fresh.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kura.catalog import Entry, kv_get, kv_put

BURST_SECONDS = 2.0
BURST_MIN = 10
BURST_SHARE = 0.2


@dataclass(frozen=True, slots=True)
class Age:
    day: dt.date | None
    source: str  # written | edited | git | mtime | unknown


def ages(root: Path, entries: dict[str, Entry], db: sqlite3.Connection | None = None) -> dict[str, Age]:
    """Each memory's last-changed day and where that came from."""
    git = _git_dates(root, db)
    trusted = _trusted_mtimes(entries, exclude=set(git.committed) | git.dirty)
    out: dict[str, Age] = {}
    for slug, entry in entries.items():
        if entry.written is not None:
            out[slug] = Age(entry.written, "written")
        elif entry.rel in git.dirty:
            out[slug] = Age(_day(entry.mtime_ns), "edited")  # a real edit, not a checkout
        elif entry.rel in git.committed:
            out[slug] = Age(git.committed[entry.rel], "git")
        elif slug in trusted:
            out[slug] = Age(_day(entry.mtime_ns), "mtime")
        else:
            out[slug] = Age(None, "unknown")
    return out


def fresh(age: Age, today: dt.date, days: float) -> bool:
    return age.day is not None and (today - age.day).days < days


@dataclass(frozen=True, slots=True)
class _Git:
    committed: dict[str, dt.date]
    dirty: frozenset[str]


def _trusted_mtimes(entries: dict[str, Entry], *, exclude: set[str]) -> set[str]:
    """Slugs whose mtime can be believed: all but those in a copy-like burst."""
    stamps = sorted((e.mtime_ns, slug) for slug, e in entries.items() if e.rel not in exclude)
    burst: set[str] = set()
    window = int(BURST_SECONDS * 1e9)
    start = 0
    for end in range(len(stamps)):
        while stamps[end][0] - stamps[start][0] > window:
            start += 1
        size = end - start + 1
        if size >= BURST_MIN and size >= BURST_SHARE * len(entries):
            burst.update(slug for _, slug in stamps[start : end + 1])
    return {slug for _, slug in stamps} - burst


def _git_dates(root: Path, db: sqlite3.Connection | None) -> _Git:
    """Last commit date per store-relative path, cached per HEAD; empty outside git."""
    from kura.map_record import git_head

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


def _latest_per_file(log: str) -> str:
    seen: dict[str, str] = {}
    day = ""
    for line in log.splitlines():
        if line.startswith("\0"):
            day = dt.datetime.fromtimestamp(int(line[1:])).date().isoformat()
        elif line and line not in seen:
            seen[line] = day
    return "".join(f"{rel}\t{d}\n" for rel, d in seen.items())


def _dirty(root: Path) -> frozenset[str]:
    out = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".")
    paths = set()
    for record in (out or "").split("\0"):
        if len(record) > 3 and not record.startswith("??"):  # untracked may be a fresh copy
            paths.add(record[3:])
    prefix = _git(root, "rev-parse", "--show-prefix") or ""
    prefix = prefix.strip()
    return frozenset(p[len(prefix) :] if prefix and p.startswith(prefix) else p for p in paths)


def _git(root: Path, *args: str) -> str | None:
    try:
        result = subprocess.run(
            ["git", "-c", "core.quotePath=false", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout if result.returncode == 0 else None


def _day(mtime_ns: int) -> dt.date:
    return dt.datetime.fromtimestamp(mtime_ns / 1e9).date()
