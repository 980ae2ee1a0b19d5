"""The catalog: what every memory says, cached by file identity.

Weaving a map of 20,000 memories must not mean parsing 20,000 files each time. The
catalog keeps, per memory file, the few fields the map and the link graph need (type,
name, aliases, description, a written date, links, how many findings, and what ``kura list`` prints)
keyed by the file's identity
— inode, size, mtime and ctime — in SQLite in the store's state folder. A scan stats every
file and re-reads only those whose identity changed, so the work is proportional to what
changed. Nothing here is authoritative: delete ``.kura/`` and the next scan rebuilds it.

``kura list`` reads its rows from here too (``listing``): the description as the file
gives it and why the memory is retired, taken when the file was read. A row that is not
what kura writes there is not believed: that memory's file is read instead.

The same database holds the trigger ledger (a trigger is a pure function of the line, the
budget and the method, so it is cached forever under that key) and a small key/value
table for other derived state, such as the git dates of the files.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from itertools import compress, repeat
from operator import attrgetter, eq, itemgetter
from pathlib import Path
from typing import Any, NamedTuple

from kura.errors import StoreError
from kura.files.belief import summary
from kura.files.link_names import aliases_of
from kura.files.memory_file import MemoryFile, from_bytes
from kura.files.slugs import Ident, Stats, file_stats, is_memory_name, memory_names
from kura.store import state as st
from kura.store.listing import Listed, Listing, Retired, retirement
from kura.store.parallel import parallel_map
from kura.store.safe_read import MEMORY_CAP, read_plain
from kura.store.store import Store
from kura.text import scripts

_SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    rel TEXT PRIMARY KEY, slug TEXT NOT NULL, ino INTEGER, size INTEGER, mtime_ns INTEGER,
    ctime_ns INTEGER, type TEXT, name TEXT, description TEXT, written TEXT, links TEXT,
    findings INTEGER, sha TEXT, standing TEXT, listed TEXT, found TEXT, aliases TEXT
);
CREATE TABLE IF NOT EXISTS ledger (key TEXT PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_READER = 6  # bump when reading a file can find something new: cached rows are read again
_DATE_KEYS = ("updated", "modified", "last_updated", "date", "created")
_BODY_DATE = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?(?:\*\*|__)?(?:updated|written|date|last updated|as of)"
    r"(?::(?:\*\*|__)|(?:\*\*|__)?:)[ \t]*(\d{4}-\d{2}-\d{2})\b",
    re.IGNORECASE | re.MULTILINE,
)


class Entry(NamedTuple):
    """One catalog row, as stored. A named tuple rather than a dataclass because a weave
    of 20,000 memories makes 20,000 of these, and building a tuple from a row is free."""

    rel: str
    slug: str
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int
    type: str | None
    name: str
    description: str
    written_text: str
    links_text: str
    findings: int
    sha: str
    standing: str  # the lifecycle fields as JSON (``standing.summary``), "" when there are none
    # JSON [description as the file gives it, archived, archived_reason, superseded_by]; "" for
    # the most common case: the description above is as the file gives it, not retired
    listed: str = ""
    # JSON [[path, line, message, severity], ...]: the findings themselves, so doctor shows
    # them without reading and parsing the file again; "" when there are none
    found: str = ""
    aliases_text: str = ""  # the frontmatter's aliases, one a line (``link_names.aliases_of``)

    @property
    def aliases(self) -> tuple[str, ...]:
        return aliases(self.aliases_text)

    @property
    def retired(self) -> bool:
        """Superseded or archived: off the index by design."""
        return retired(self.standing)

    @property
    def written(self) -> dt.date | None:
        return dt.date.fromisoformat(self.written_text) if self.written_text else None

    @property
    def links(self) -> tuple[str, ...]:
        return tuple(self.links_text.split("\n")) if self.links_text else ()


# the columns the map reads (``scan``'s ``brief``; its slug is the path's); the others stand
# empty, as ``_BRIEF_EMPTY``
_BRIEF = "SELECT rel, ino, size, mtime_ns, ctime_ns, type, written, standing FROM notes"
_BRIEF_EMPTY = ("", "", "", 0, "")  # name, description, links, findings, sha


class Said(NamedTuple):
    """What a memory says, as the scan parsed it: what the search index holds (``Memory``'s
    name, description and body, and their CJK words: ``scripts.grams``), so the first recall
    of a big store parses each file once, and cuts its CJK text into words on as many cores
    as the parse runs on."""

    name: str
    description: str
    body: str
    grams: str


def _said(name: str, description: str, body: str) -> Said:
    return Said(name, description, body, scripts.grams(f"{name}\n{description}\n{body}"))


@dataclass(frozen=True, slots=True)
class Scan:
    entries: dict[str, Entry]
    parsed: int


_TABLES = {
    "notes": ("rel", "slug", "ino", "size", "mtime_ns", "ctime_ns", "type", "name", "description",
              "written", "links", "findings", "sha", "standing", "listed", "found", "aliases"),
    "ledger": ("key", "text"),
    "kv": ("key", "value"),
}  # fmt: skip


def connect(store: Store) -> sqlite3.Connection:
    """The store's state database; in memory when the state folder cannot be written
    (a read-only checkout still weaves, it just does not remember) or is refused (a
    ``.kura`` that is a link or a file: nothing is read or written through it). A file
    that is not this database is set aside and rebuilt (``kura.store.state.database``)."""
    try:
        path = st.folder(store.root, store=store.name, create=True) / "state.db"
        db = st.database(path, _setup, _TABLES, what="the catalog of memory files")
        db.execute("PRAGMA synchronous=NORMAL")
    except (OSError, sqlite3.Error, StoreError):
        db = sqlite3.connect(":memory:")
        db.executescript(_SCHEMA)
    return db


def _setup(db: sqlite3.Connection) -> None:
    columns = {row[1] for row in db.execute("PRAGMA table_info(notes)")}
    older = db.execute("PRAGMA user_version").fetchone()[0] != _READER
    if columns and ("aliases" not in columns or older):  # an older layout or reader: rebuilt
        db.execute("DROP TABLE notes")
    db.executescript(_SCHEMA)
    db.execute(f"PRAGMA user_version = {_READER}")


def scan(
    store: Store,
    db: sqlite3.Connection,
    *,
    max_parse: int | None = None,
    stats: Stats | None = None,
    said: dict[str, Said] | None = None,
    brief: bool = False,
) -> Scan | None:
    """Every memory's entry, re-reading only files whose identity changed. None when more
    than ``max_parse`` files would need reading (the caller wanted a quick answer).
    ``stats`` (from ``slugs.file_stats``, taken by the caller) saves a second walk.
    ``said``: filled, by slug, with what each file read again says (``Said``).
    ``brief``: the map's scan (``kura.map.weave``): an entry not read again holds only its
    identity, type, written date and standing; its name, description, links, findings, sha,
    listing, found and aliases stand empty (not fetched: 20,000 rows at about two-thirds
    the cost). Nothing else may read those fields from a brief scan."""
    rows = db.execute(_BRIEF if brief else "SELECT * FROM notes").fetchall()
    files = _memory_files(store, stats if stats is not None else file_stats(store.root))
    entries = _current(rows, files, brief=brief)
    # the files no kept row stands for, by set difference in C (a weave after one edit: one)
    unread = sorted(files.keys() - set(map(attrgetter("rel"), entries.values())))
    stale = [(rel[:-3], rel, files[rel]) for rel in unread]
    if max_parse is not None and len(stale) > max_parse:
        return None
    parsed = parallel_map(partial(_parse_all, store.root, store.name, keep=said is not None), stale)
    fresh = [row for row, _ in parsed]
    if said is not None:
        said.update((row[1], text) for row, text in parsed if text is not None)
    # a row whose file is no memory on disk now (every other was kept or read again)
    gone = set(map(itemgetter(0), rows)) - files.keys()
    _save(db, fresh, gone)
    for row in fresh:
        entries[row[1]] = _entry(row)
    return Scan(dict(sorted(entries.items())), len(fresh))


def _memory_files(store: Store, stats: Stats) -> dict[str, Ident]:
    """The identity of each memory file among ``stats``, by path, in their order: a link
    only when it stays inside the store."""
    if not stats:
        return {}
    rels, idents, links = zip(*stats, strict=True)
    files = dict(compress(zip(rels, idents, strict=True), memory_names(list(rels))))
    for rel in compress(rels, links):
        if rel in files and not store.contains(rel):
            del files[rel]
    return files


def _current(rows: list[Any], files: dict[str, Ident], *, brief: bool) -> dict[str, Entry]:
    """The rows whose file is on disk with the identity the row records, as entries keyed
    by the file's slug. Column by column, in C: the one pass over 20,000 rows a weave
    after one edit cannot skip."""
    if not rows:
        return {}
    columns = list(zip(*rows, strict=True))
    idents = columns[1:5] if brief else columns[2:6]
    same = list(map(eq, map(files.get, columns[0]), zip(*idents, strict=True)))
    kept: list[Iterable[Any]] = [list(compress(column, same)) for column in columns]
    rels = list(kept[0])
    slugs = [rel[:-3] for rel in rels]
    if brief:  # rel, slug … type, the columns a brief scan leaves empty, written, standing
        empty = [repeat(value, len(rels)) for value in _BRIEF_EMPTY]
        kept = [
            rels,
            slugs,
            *kept[1:6],
            *empty[:2],
            kept[6],
            *empty[2:],
            kept[7],
            *(repeat("", len(rels)) for _ in "lfa"),
        ]
    made = map(tuple.__new__, repeat(Entry), zip(*kept, strict=True))
    return dict(zip(slugs, made, strict=True))


def entries(store: Store) -> dict[str, Entry]:
    """Every memory's entry, brought up to date (a scan with its own connection)."""
    db = connect(store)
    try:
        found = scan(store, db)
    finally:
        db.close()
    assert found is not None  # no max_parse: a scan always completes
    return found.entries


def listing(store: Store, *, type: str | None = None, everything: bool = False) -> Listing:
    """What ``kura.store.listing.listing`` answers, from the catalog: only files that
    changed since the last scan are read (and any whose row is not what kura writes).
    When no file changed (the common case) only the columns a listing shows are read, and
    nothing is written; else the catalog is brought up to date first (``entries``)."""
    current = _listed_rows(store)
    if current is not None:
        rows = [_listed(store, entry) for entry in current]
    else:
        rows = [_listed(store, entry) for entry in entries(store).values()]
    kept = [r for r in rows if type is None or r.type == type]
    shown = tuple(r for r in kept if everything or r.retired is None)
    return Listing(shown, len(kept) - len(shown))


class _Shown(NamedTuple):
    """The columns of a row a listing shows (``_listed`` reads these of an ``Entry`` too)."""

    slug: str
    rel: str
    type: Any
    name: Any
    description: Any
    listed: Any


def _listed_rows(store: Store) -> list[_Shown] | None:
    """What ``scan`` would give a listing, in slug order, when every memory file's row is
    current (its identity unchanged): no file is read and nothing written. None as soon as
    one file has no current row: the caller scans."""
    db = connect(store)
    try:
        known = {
            row[0]: row
            for row in db.execute(
                "SELECT rel, slug, ino, size, mtime_ns, ctime_ns, type, name, description, listed FROM notes"
            )
        }
    finally:
        db.close()
    shown = {}
    for rel, ident, link in file_stats(store.root):
        if not is_memory_name(rel) or (link and not store.contains(rel)):
            continue
        row = known.get(rel)
        if row is None or row[2:6] != ident:
            return None
        shown[rel[:-3]] = _Shown(row[1], *row[:1], *row[6:])  # as scan: keyed by the file, the row's own
    return [shown[slug] for slug in sorted(shown)]


class Naming(NamedTuple):
    """What resolving a title or alias reads of a memory's row (``link_names.Named``)."""

    slug: str
    name: str
    aliases_text: str
    standing: str

    @property
    def aliases(self) -> tuple[str, ...]:
        return aliases(self.aliases_text)

    @property
    def retired(self) -> bool:
        return retired(self.standing)


def naming_rows(store: Store) -> list[tuple[Any, ...]] | None:
    """Every memory's ``Naming`` fields as a plain row (``Naming._make`` makes one of those
    the caller keeps), when every memory file's row is current (the same files, each with the
    identity its row records): no file read, nothing written, the other columns not fetched.
    None as soon as one is not: the caller scans (``entries``)."""
    db = connect(store)
    try:
        rows = db.execute(
            "SELECT rel, ino, size, mtime_ns, ctime_ns, slug, name, aliases, standing FROM notes ORDER BY rel"
        ).fetchall()
    finally:
        db.close()
    files = _memory_files(store, file_stats(store.root))  # sorted by path, as the rows are: compared in C
    same = list(map(itemgetter(0), rows)) == list(files)
    if not same or list(map(itemgetter(1, 2, 3, 4), rows)) != list(files.values()):
        return None
    return list(map(itemgetter(5, 6, 7, 8), rows))


def aliases(text: str) -> tuple[str, ...]:
    """A row's ``aliases_text`` (one a line) as the aliases it holds."""
    return tuple(text.split("\n")) if text else ()


def retired(standing: str) -> bool:
    """Whether a row's ``standing`` says superseded or archived."""
    return '"superseded_by"' in standing or '"archived"' in standing


def _listed(store: Store, entry: Entry | _Shown) -> Listed:
    if (
        entry.listed == ""
        and isinstance(entry.description, str)
        and isinstance(entry.name, str)
        and isinstance(entry.type, str | None)
    ):  # a current memory, as kura writes its row: what the checks below accept, sooner
        return Listed(entry.slug, entry.name, entry.description, entry.type, None)
    try:
        said = [entry.description] if entry.listed == "" else json.loads(entry.listed)
    except (TypeError, ValueError, RecursionError):
        said = None
    if (
        isinstance(entry.name, str)
        and isinstance(entry.type, str | None)
        and isinstance(said, list)
        and len(said) in (1, 4)
        and all(isinstance(v, str) for v in said[:1] + said[2:])
        and (len(said) == 1 or (isinstance(said[1], str | None) and (said[1] is not None or said[3])))
    ):
        gone = Retired(archived=said[1], reason=said[2], superseded_by=said[3]) if len(said) == 4 else None
        return Listed(entry.slug, entry.name, said[0], entry.type, gone)
    note = store.read(entry.slug, store.root / entry.rel)[1].note  # a row kura did not write
    return Listed(entry.slug, note.name, note.description, note.type, retirement(note.meta))


def said_of(store: Store, slug: str) -> Said:
    """What one memory says, read from its file (``Store.show``): for a memory the scan did not read."""
    memory = store.show(slug)
    return _said(memory.name, memory.description, memory.note.body)


def ledger_get(db: sqlite3.Connection, keys: Iterable[str]) -> dict[str, str]:
    wanted = list(keys)
    found: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(db.execute(f"SELECT key, text FROM ledger WHERE key IN ({marks})", chunk))
    return found


def ledger_put(db: sqlite3.Connection, items: dict[str, str]) -> None:
    if items:
        with db:
            db.executemany("INSERT OR REPLACE INTO ledger VALUES (?, ?)", items.items())


def kv_get(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def kv_put(db: sqlite3.Connection, key: str, value: str) -> None:
    with db:
        db.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (key, value))


def written_date(note: MemoryFile) -> dt.date | None:
    """The most recent date the memory itself says it was written or updated: in the
    frontmatter (``updated``, ``created``, …) or on a body line of its own such as
    ``Updated: 2026-11-20`` or ``**Date:** 2026-11-20``. Dates mentioned in prose
    ("the outage on 2026-03-02") are events, not the memory's age, and are not read."""
    meta = note.meta
    dates = [_as_date(meta[key]) for key in _DATE_KEYS if key in meta]
    # a body date sits at the start of a line and holds a colon: only such lines are tried
    lines = (line for line in note.body.split("\n") if ":" in line)
    dates += [_as_date(m.group(1)) for m in map(_BODY_DATE.match, lines) if m is not None]
    found = [d for d in dates if d is not None]
    return max(found) if found else None


def _parse_all(
    root: Path, name: str, items: list[tuple[str, str, tuple[int, int, int, int]]], *, keep: bool = False
) -> list[tuple[tuple[Any, ...], Said | None]]:
    store = Store(root, name=name)
    plain = read_plain(root, [rel for _, rel, _ in items], cap=MEMORY_CAP)
    return [_parse(store, *item, data, keep=keep) for item, data in zip(items, plain, strict=True)]


def _parse(
    store: Store, slug: str, rel: str, ident: tuple[int, int, int, int], data: bytes | None = None,
    *, keep: bool = False,
) -> tuple[tuple[Any, ...], Said | None]:  # fmt: skip
    """A file's row, and what it says when ``keep``. ``data``: its bytes when ``read_plain``
    read it (a regular file reached without a link: what ``Store.read`` reads too); else the
    store reads it, and a file that must not be read is b"" and a finding."""
    if data is None:
        data, memory = store.read(slug, store.root / rel)
        note = memory.note
    else:
        note = from_bytes(data, f"{store.name}/{slug}.md")
    written = written_date(note)
    gone = retirement(note.meta)
    listed = (
        [note.description, gone.archived, gone.reason, gone.superseded_by] if gone else [note.description]
    )
    description = " ".join(note.description.split())
    row = (
        rel, slug, *ident, note.type, note.name, description,
        written.isoformat() if written else "", "\n".join(note.links), len(note.findings),
        hashlib.sha256(data).hexdigest(), summary(note.meta),
        "" if listed == [description] else json.dumps(listed),
        json.dumps([[f.path, f.line, f.message, f.severity] for f in note.findings]) if note.findings else "",
        "\n".join(aliases_of(note.meta)),
    )  # fmt: skip
    return row, _said(note.name, note.description, note.body) if keep else None


def _save(db: sqlite3.Connection, fresh: list[tuple[Any, ...]], gone: set[str]) -> None:
    if not fresh and not gone:
        return
    with db:
        db.executemany("INSERT OR REPLACE INTO notes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", fresh)
        db.executemany("DELETE FROM notes WHERE rel = ?", [(rel,) for rel in gone])


def _entry(row: tuple[Any, ...]) -> Entry:
    return Entry._make(row)


def _as_date(value: object) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and len(value) >= 10:
        try:
            return dt.date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None
