"""Spans: what was said once and nobody wrote down — searchable as evidence, never as truth.

A claim stated once in a transcript, never repeated and never distilled, lives there and
nowhere else. The distiller's journals (as ``kura distill run`` reads them) and any file
given to ``kura ingest`` are cut into the segments the adapters already class — USER,
TOOL, ACT, SELF — and each is kept, attributed, in a full-text index in the state folder
(``.kura/spans.db``, SQLite FTS5): the source file and line, the session, when it was said
(the record's timestamp, else the file's date) and the class.

A span found for a question is offered as *evidence that somebody said a thing*, which is a
weaker claim than the thing being true: it is labelled "said in <session>, <when>" and
never asserted. Secrets are redacted before a span is stored. A span that reads like an
instruction (``kura.text.quarantine``) is marked when it is stored and never put in a prompt.

Derived state, like the search index: delete the file and ``kura ingest`` rebuilds what it
is given (the journals refill it as the distiller reads on). A span is stored once however
often its file is read — the key is a hash of session, class and words — and ``kura forget
--purge`` deletes the spans that carry a purged memory's words, keeping only the hash so a
re-read does not bring them back.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kura.errors import StoreError
from kura.files.finding import Finding
from kura.recall.search import query_words
from kura.recall.word_rows import quote
from kura.store import state as st
from kura.store.store import Store
from kura.text.claim_match import words
from kura.text.quarantine import clean, reads_like_instruction
from kura.text.secrets import redact_widely
from kura.transcripts.segments import Segment, normalise
from kura.transcripts.sources import read_from

DB_NAME = "spans.db"
MIN_CHARS = 12  # shorter segments ("yes", "ok go") are not evidence of anything
SHOWN = 320  # characters of a span put in front of a reader
RESTATED = 0.8  # a span this much inside one memory already shown adds nothing
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
_OPAQUE_ID = re.compile(r"^(?=.*\d)[0-9A-Za-z-]{20,}$")  # a UUID, a ULID: not a name to say
_UNSAYABLE = re.compile(r"[^\w.\-]+")
_TOKEN = re.compile(r"[\w][\w\-]*[\w]")
_WORD = re.compile(r"\w+", re.UNICODE)

_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS spans USING fts5(
    text, source UNINDEXED, line UNINDEXED, session UNINDEXED, at UNINDEXED,
    cls UNINDEXED, quarantined UNINDEXED, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS seen (digest TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS gone (digest TEXT PRIMARY KEY);
"""
_TABLES = {
    "spans": ("text", "source", "line", "session", "at", "cls", "quarantined"),
    "seen": ("digest",),
    "gone": ("digest",),
}


@dataclass(kw_only=True, frozen=True, slots=True)
class Span:
    id: int
    source: str
    line: int
    session: str
    when: str
    cls: str
    text: str
    quarantined: str = ""  # why it reads like an instruction ("" when it does not)
    score: float = 0.0

    @property
    def label(self) -> str:
        """``said in <session>, <when>`` — by a short name, never a 36-character id, and
        only in characters that cannot start a line or close a quote."""
        who = short_session(self.session) or short_session(Path(self.source).stem) or "an unnamed session"
        return f"said in {who}, {day(self.when)}"

    @property
    def place(self) -> str:
        return f"{self.source}:{self.line}" if self.line else self.source

    def shown(self, question: str = "") -> str:
        """The span on one line as it was tested (``quarantine.clean``), its double quotes
        made single so it cannot close the quote it is shown in, cut to ``SHOWN``
        characters around the question's words."""
        return excerpt(clean(self.text).replace('"', "'"), query_words(question), SHOWN)

    def to_dict(self, question: str = "", *, words: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "label": self.label, "class": self.cls, "session": self.session,
                               "when": self.when, "source": self.source, "line": self.line,
                               "score": round(self.score, 4)}  # fmt: skip
        if self.quarantined:
            out["quarantined"] = self.quarantined
        if words and not self.quarantined:
            out["text"] = self.shown(question)
        return out


@dataclass(frozen=True, slots=True)
class Ingested:
    source: str
    segments: int
    added: int
    quarantined: int
    findings: tuple[Finding, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "segments": self.segments, "added": self.added,
                "quarantined": self.quarantined, "findings": [str(f) for f in self.findings]}  # fmt: skip


@contextmanager
def opened(store: Store) -> Iterator[sqlite3.Connection]:
    """The span index, created when missing, closed after use. A file that is not this
    database is set aside and a new one made (``kura.store.state.database`` says so); any other
    SQLite failure — damaged pages found later, a disk error — is a StoreError that says
    the file is derived and how to rebuild it."""
    path = store.state_dir / DB_NAME
    db: sqlite3.Connection | None = None
    try:
        st.folder(store.root, store=store.name, create=True)
        db = st.database(
            path, lambda db: db.executescript(_SCHEMA), _TABLES, fts5=("spans",),
            what="the span index (kura ingest refills it)",
        )  # fmt: skip
        yield db
    except (sqlite3.Error, OSError) as err:
        raise StoreError(
            f"{path}: the span index cannot be read ({err}); it is derived — delete it "
            "(and spans.db-wal, spans.db-shm) and run kura ingest again"
        ) from None
    finally:
        if db is not None:
            db.close()


def add(
    store: Store, source: str, segments: Iterable[Segment], *, fallback_when: str = ""
) -> tuple[int, int]:
    """Index ``segments`` read from ``source``; (spans added, of them quarantined). A span
    already stored (same session, class and words) is not stored twice."""
    rows = []
    for seg in segments:
        text, _ = redact_widely(seg.text)
        if len(normalise(text)) < MIN_CHARS or len(_WORD.findall(text)) < 2:
            continue
        digest = hashlib.sha256(f"{seg.session}\x00{seg.cls}\x00{normalise(text)}".encode()).hexdigest()
        rows.append((digest, _grave(seg.cls, text), text, source, seg.line, seg.session,
                     seg.when or fallback_when, seg.cls))  # fmt: skip
    if not rows:
        return 0, 0
    added = quarantined = 0
    with opened(store) as db, db:
        for digest, grave, text, *meta in rows:
            if db.execute("SELECT 1 FROM gone WHERE digest = ?", (grave,)).fetchone():
                continue  # purged: its words do not come back under another name, class or punctuation
            if db.execute("INSERT OR IGNORE INTO seen VALUES (?)", (digest,)).rowcount != 1:
                continue
            why = reads_like_instruction(text)
            db.execute("INSERT INTO spans VALUES (?, ?, ?, ?, ?, ?, ?)", (text, *meta, why))
            added += 1
            quarantined += bool(why)
    return added, quarantined


def ingest(store: Store, path: Path, *, fmt: str | None = None) -> Ingested:
    """Index a whole transcript (any format the distiller reads) as spans."""
    stretch = read_from(path, fmt=fmt, finished=True)
    added, quarantined = add(store, str(path), stretch.segments, fallback_when=file_day(path))
    return Ingested(str(path), len(stretch.segments), added, quarantined, stretch.findings)


def search(store: Store, question: str, *, k: int = 5) -> list[Span]:
    """The spans that bear on ``question``, best first: at least two of its words (all of
    them for a one-word question) and a third of them must appear in the span."""
    words = query_words(question)
    path = store.state_dir / DB_NAME
    if not words or k <= 0 or not path.is_file():
        return []
    with opened(store) as db:
        rows = db.execute(
            "SELECT rowid, source, line, session, at, cls, text, quarantined, bm25(spans) AS rank "
            "FROM spans WHERE spans MATCH ? ORDER BY rank, rowid LIMIT ?",
            (" OR ".join(quote(w) for w in words), k * 8),
        ).fetchall()
    need = min(2, len(words))
    found = []
    for row in rows:
        if not all(isinstance(v, str) for v in (row[1], row[3], row[4], row[5], row[6])):
            continue  # not what kura stores (a damaged or foreign index): never shown
        if not isinstance(row[2], int):
            row = (*row[:2], 0, *row[3:])
        present = {w.lower() for w in _WORD.findall(row[6])}
        shared = sum(w in present for w in words)
        if shared >= need and shared * 3 >= len(words):
            row = (*row[:7], reads_like_instruction(row[6]), row[8])  # judged now, by today's rules
            found.append(
                Span(
                    id=row[0],
                    source=row[1],
                    line=int(row[2] or 0),
                    session=row[3],
                    when=row[4],
                    cls=row[5],
                    text=row[6],
                    quarantined=row[7],
                    score=-row[8],
                )
            )
    return found[:k]


def evidence(
    store: Store, question: str, shown: Sequence[str], *, k: int = 8
) -> tuple[list[Span], list[tuple[Span, str]]]:
    """The spans that may be put before a reader, and those left out with the reason: one
    that reads like an instruction, or that restates ``shown`` text (memories already
    included) — at least ``RESTATED`` of its content words inside one of them."""
    lowered = [text.lower() for text in shown]
    kept: list[Span] = []
    dropped: list[tuple[Span, str]] = []
    for span in search(store, question, k=k):
        if span.quarantined:
            dropped.append((span, f"quarantined: reads like an instruction ({span.quarantined})"))
        elif restated(words(span.text), lowered) >= 0:
            dropped.append((span, "restates a memory already shown"))
        else:
            kept.append(span)
    return kept, dropped


def restated(said: set[str], shown: Sequence[str]) -> int:
    """The first of ``shown`` (lower-cased texts) holding ``RESTATED`` of the span's content
    words ``said``, or -1 (a substring test first, which a word match implies, so thousands
    of map lines cost little)."""
    if len(said) < 3:
        return -1
    need = RESTATED * len(said)
    for i, text in enumerate(shown):
        if sum(word in text for word in said) >= need and len(said & words(text)) >= need:
            return i
    return -1


def count(store: Store) -> int:
    if not (store.state_dir / DB_NAME).is_file():
        return 0
    with opened(store) as db:
        return int(db.execute("SELECT count(*) FROM spans").fetchone()[0])


def carrying(store: Store, texts: Sequence[str]) -> list[int]:
    """The spans that carry one of ``texts`` (a memory being purged): the text itself (case
    and spacing aside); ``RESTATED`` of a text's content words (a rewording of the claim);
    a span ``RESTATED`` of whose own content words are the memory's (a short restatement);
    or a distinctive token of the memory — one mixing digits with letters, like
    ``4711-B`` — anywhere. Purge errs towards deleting: these are derived copies."""
    wanted = [t for t in texts if len(t.strip()) >= MIN_CHARS]
    if not wanted or not (store.state_dir / DB_NAME).is_file():
        return []
    theirs = set().union(*(words(t) for t in wanted))
    theirs |= {part for word in theirs for part in re.split(r"[-_./]", word) if part}  # 4711-B is 4711 B
    marks = {tok.lower() for t in wanted for tok in _TOKEN.findall(t) if _distinctive(tok)}
    terms = list(dict.fromkeys(w for t in wanted for w in query_words(t)))[:64] + sorted(marks)
    ids: set[int] = set()
    with opened(store) as db:
        rows = db.execute(
            "SELECT rowid, text FROM spans WHERE spans MATCH ?", (" OR ".join(map(quote, terms)),)
        )
        for rowid, body in rows:
            if not isinstance(body, str):
                continue
            said, lowered = words(body), " ".join(body.lower().split())
            if (
                any(" ".join(t.lower().split()) in lowered for t in wanted)
                or any(len(c) >= 3 and len(c & said) >= RESTATED * len(c) for c in map(words, wanted))
                or (len(said) >= 3 and len(said & theirs) >= RESTATED * len(said))
                or any(mark in lowered for mark in marks)
            ):
                ids.add(int(rowid))
    return sorted(ids)


def _distinctive(token: str) -> bool:
    return len(token) >= 4 and any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def forget(store: Store, ids: Sequence[int]) -> int:
    """Delete spans and compact the file so their words leave the disk. A hash of each
    (class and words, no session) stays in ``gone``: reading the transcript again — under
    its own name or another — does not bring them back."""
    if not ids:
        return 0
    with opened(store) as db:
        db.execute("PRAGMA secure_delete=ON")
        with db:
            marks = ",".join("?" * len(ids))
            rows = db.execute(f"SELECT cls, text FROM spans WHERE rowid IN ({marks})", list(ids)).fetchall()
            db.executemany("INSERT OR IGNORE INTO gone VALUES (?)", [(_grave(c, t),) for c, t in rows])
            gone = db.execute(f"DELETE FROM spans WHERE rowid IN ({marks})", list(ids)).rowcount
            db.execute("INSERT INTO spans(spans) VALUES('optimize')")
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(gone)


def _grave(cls: str, text: str) -> str:
    """A purged span's hash: its words in order, lower-cased — not its class, its spacing
    or its punctuation, so the same sentence does not come back as a tool output or with a
    comma for a full stop (``cls`` is kept in the signature for the callers' symmetry)."""
    del cls
    return hashlib.sha256(("gone\x00" + " ".join(_WORD.findall(text.lower()))).encode()).hexdigest()


def short_session(session: str) -> str:
    """A session by a name a person can say — the head of a long opaque id — in letters,
    digits, dots and dashes only, so a crafted session id cannot start a line, close a
    quote or read as an order ("" when nothing sayable is left)."""
    name = _UNSAYABLE.sub("-", clean(session)).strip("-.")
    name = name[:8] if _OPAQUE_ID.match(name) else name[:40]
    return "" if reads_like_instruction(name.replace("-", " ")) else name


def day(when: str) -> str:
    """The day a record's timestamp names (YYYY-MM-DD), else "date unknown" — never its
    raw text."""
    found = _DAY.match(when.strip())
    return found.group(0) if found else "date unknown"


def file_day(path: Path) -> str:
    try:
        return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC).date().isoformat()
    except OSError:
        return ""


def excerpt(text: str, words: Sequence[str], limit: int) -> str:
    """``text`` cut to about ``limit`` characters on word boundaries, around the first of
    ``words`` it contains, with ``…`` where text was left out."""
    if len(text) <= limit:
        return text
    lower = text.lower()
    hits = [lower.find(w) for w in words if lower.find(w) >= 0]
    start = max(0, min(hits) - limit // 3) if hits else 0
    if start:
        start = text.find(" ", start) + 1 or start
    end = start + limit
    if end < len(text):
        end = text.rfind(" ", start, end) if text.rfind(" ", start, end) > start else end
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")
