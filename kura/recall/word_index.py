"""The search index's words: memories' rows in its full-text table, put and dropped in batches.

A first recall on a store of 20,000 memories indexes every one of them before it answers, so
what each costs counts. One memory used to cost three statements (a look for the row it
replaces, the full-text insert, its ``docs`` row with the row id that insert returned); now a
batch of memories costs two ``executemany`` calls, and an empty index is not looked in at all.
Row ids are given, not asked for: the next free ones, in order, which is what SQLite picks
one insert at a time, so the index written is the one a memory at a time wrote
(``tests/recall/test_word_index.py`` compares the two).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence

from kura.store import catalog
from kura.store.store import Store

Progress = Callable[[str, int, int], None]  # stage, done, total
BATCH = 500  # memories a batch of statements holds; progress is told after each
_INSERT = "INSERT INTO docs_fts (rowid, slug, name, description, body, grams) VALUES (?, ?, ?, ?, ?, ?)"
_DOCS = "INSERT INTO docs VALUES (?, ?, ?)"


def drop(db: sqlite3.Connection, slugs: Iterable[str]) -> None:
    """Remove these memories' rows (one that is not indexed is no error)."""
    gone = [(slug,) for slug in slugs]
    if gone:
        db.executemany("DELETE FROM docs_fts WHERE rowid IN (SELECT fts FROM docs WHERE slug = ?)", gone)
        db.executemany("DELETE FROM docs WHERE slug = ?", gone)


def put(
    db: sqlite3.Connection,
    store: Store,
    entries: Sequence[catalog.Entry],
    said: dict[str, catalog.Said],
    progress: Progress | None = None,
) -> None:
    """Index these memories' words, from what ``said`` holds (the scan's parse), else their
    files; a memory already indexed is replaced. The caller holds the transaction."""
    if db.execute("SELECT 1 FROM docs LIMIT 1").fetchone() is not None:
        drop(db, [entry.slug for entry in entries])
    last = db.execute("SELECT rowid FROM docs_fts ORDER BY rowid DESC LIMIT 1").fetchone()  # max() scans
    top = 0 if last is None else last[0]
    for start in range(0, len(entries), BATCH):
        batch = entries[start : start + BATCH]
        rows = []
        for rowid, entry in enumerate(batch, start=top + start + 1):
            text = said.get(entry.slug) or catalog.said_of(store, entry.slug)
            rows.append((rowid, entry.slug, *text))
        db.executemany(_INSERT, rows)
        db.executemany(_DOCS, [(e.slug, e.sha, row[0]) for row, e in zip(rows, batch, strict=True)])
        if progress is not None:
            progress("reading", start + len(batch), len(entries))
