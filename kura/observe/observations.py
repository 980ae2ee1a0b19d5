"""The observation log: a store's running notebook of what an agent noticed, by day.

Memories are one fact a file and pass through weave, decay and the distiller's gate; an
observation is cheaper than that — "the deploy needs the VPN up", noted in passing and
read back next session. So observations live in one markdown file at the store root,
``_observations.md`` (a leading ``_`` keeps it out of the memories, the index and doctor;
it is still the user's file, git-tracked like the rest)::

    # Observations

    ## 2026-11-30
    - 🔴 the deploy needs the VPN up
    - 🟡 staging db moved to port 5433 ✅
    - 🔴 the release is blocked on the VPN
      - task: release 2.4
      - next: ask ops for the VPN, then rerun deploy

A person reads and edits it by hand, so it is parsed tolerantly and never re-rendered:
an entry is a list item (``-``, ``*``, ``+``, ``1.`` or ``1)``); one without a marker
counts as 🟡, ``(resolved)`` or ``✅`` at its end resolves it; prose, unknown headings and
indented lines under an entry (which travel with it) are kept, and every write splices
lines into the bytes just re-read under the log's lock. A marked item is an entry even
when it is nested under another — a 🔴 must never ride along with a 🟡 that gets dropped —
and any other line holding a marker is a finding, so nothing marked is silently unread.

An agent's entry may carry what it was doing and what should come next (Talon's
``currentTask`` and ``suggestedContinuation``) as ``task:`` and ``next:`` items indented
under it, which travel with the entry (markers are taken out of them).

The file at the log's name is not trusted (``kura.observe.log_read``): a link, a FIFO, a
device or a log over ``MAX_READ`` is read as no entries and a finding, and refused by
every write.

Consolidation (``kura.observe.consolidate``) keeps the file readable as it grows: it never drops
an unresolved 🔴, and whatever it drops is archived first. It is built on this module's
parser (``parse``) and its locked read-and-write (``writing``, ``write_lines``); this
module knows nothing of it.

A ``frozen`` store refuses these writes; ``distiller-only`` does not: it guards memories.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura.errors import NotFound, StoreError
from kura.files.finding import Finding
from kura.observe.log_read import MAX_READ, Snapshot, settled, snapshot
from kura.store import write_checks
from kura.store.atomic import locked, write_atomic
from kura.text.secrets import refuse_secrets

if TYPE_CHECKING:
    from kura.store.store import Store

LOG_NAME = "_observations.md"
HEADER = "# Observations\n"
MARKERS = {"high": "🔴", "medium": "🟡", "low": "🟢"}
PRIORITIES = {marker: name for name, marker in MARKERS.items()}
MAX_TEXT = 500  # characters in one entry
MAX_BYTES = 16 * 1024  # past either size, ``hint`` suggests a consolidation
MAX_ENTRIES = 200

_LINES = re.compile(r"[^\n]*\n|[^\n]+$")
_HEADING = re.compile(r"(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})(?:\s.*)?$")
_ITEM = re.compile(r"([ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+(.*?)\s*$")
_MARKED = re.compile(r"(🔴|🟡|🟢)\ufe0f?\s*(.*)$")
_ANY_MARKER = re.compile("🔴|🟡|🟢")
_ABOUT = re.compile(r"[ \t]+[-*+][ \t]+(task|next):[ \t]*(.*?)\s*$", re.IGNORECASE)
RESOLVED = re.compile(r"(.*?)\s*(?:\(resolved(?:\s+\d{4}-\d{2}-\d{2})?\)|✅\ufe0f?)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Entry:
    """One observation: ``number`` counts entries in file order from 1, ``line`` is its
    line in the file (both change when the file does)."""

    number: int
    day: date
    priority: str
    text: str
    resolved: bool
    line: int
    task: str = ""  # what the agent was doing (an indented "- task: …" under the entry)
    continuation: str = ""  # what it suggests doing next ("- next: …")

    @property
    def marker(self) -> str:
        return MARKERS[self.priority]

    @property
    def open_high(self) -> bool:
        return self.priority == "high" and not self.resolved

    def render(self) -> str:
        done = " (resolved)" if self.resolved else ""
        return f"#{self.number} {self.day.isoformat()} {self.marker} {self.text}{done}"

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "day": self.day.isoformat(), "priority": self.priority,
                "marker": self.marker, "text": self.text, "resolved": self.resolved,
                "line": self.line, **({"task": self.task} if self.task else {}),
                **({"next": self.continuation} if self.continuation else {})}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Log:
    """The log as read: its entries and what a person should fix in it."""

    path: Path
    entries: tuple[Entry, ...]
    findings: tuple[Finding, ...]
    size: int

    @property
    def hint(self) -> str | None:
        """A nudge to consolidate, once the log has outgrown its size."""
        over = f"is {self.size // 1024} KB, over {MAX_BYTES // 1024} KB" if self.size > MAX_BYTES else ""
        if not over and len(self.entries) > MAX_ENTRIES:
            over = f"has {len(self.entries)} entries, over {MAX_ENTRIES}"
        return f"the log {over}; run kura observe --consolidate" if over else None


@dataclass(frozen=True, slots=True)
class Parsed:
    """The log's lines and what they hold, for a writer that splices lines back in."""

    lines: tuple[str, ...]  # each with its own line ending; joined, they are the file
    entries: tuple[Entry, ...]
    spans: tuple[tuple[int, int], ...]  # per entry: its lines [start, end), continuations included
    sections: tuple[tuple[date, int, int], ...]  # a dated section's heading index and end
    findings: tuple[Finding, ...]


# -- reading ------------------------------------------------------------------------------


def log_path(store: Store) -> Path:
    """Where the store keeps its log; StoreError when there is no store folder."""
    if not store.root.is_dir():
        raise StoreError(
            f"store '{store.name}': {store.root} is not a directory — create it "
            f"with `kura init {store.name} --path {store.root}`"
        )
    return store.root / LOG_NAME


def read_log(store: Store) -> Log:
    """The log's entries and findings (no file yet: no entries). A log that cannot or must
    not be read (a link, a FIFO, over ``MAX_READ``) is no entries and a finding, never an
    error: ``kura context`` reads it on every request."""
    path = log_path(store)
    snap = snapshot(path, store.root, cap=MAX_READ)
    if snap.problem:
        what, todo = snap.problem
        return Log(path, (), (_finding(1, f"{what}; it was not read — {todo}"),), snap.size)
    parsed = parse(snap.data)
    return Log(path, parsed.entries, parsed.findings, snap.size)


def latest(store: Store, n: int = 10, *, log: Log | None = None) -> list[Entry]:
    """What a prompt should carry: every unresolved 🔴 and the last ``n`` unresolved
    entries (of ``log`` when the caller has read it already), by priority and, within a
    priority, the newest first — so a prompt cut to its budget keeps the latest note, and
    a flood of old 🔴 lines cannot keep the first of them on top."""
    live = [e for e in (log or read_log(store)).entries if not e.resolved]
    recent = {e.number for e in live[-n:]} if n > 0 else set()
    chosen = [e for e in live if e.open_high or e.number in recent]
    return sorted(chosen, key=lambda e: (_RANK[e.priority], -e.number))


_RANK = {name: rank for rank, name in enumerate(MARKERS)}  # high, medium, low


def read_bytes(store: Store, *, cap: int = MAX_READ, settle: bool = False) -> bytes:
    """The log's bytes for a write (or for a scribe that is to plan one); StoreError when
    they cannot or must not be read."""
    path = log_path(store)
    snap: Snapshot = (settled if settle else snapshot)(path, store.root, cap=cap)
    if snap.problem:
        what, todo = snap.problem
        raise StoreError(f"{path}: {what}; nothing was written — {todo}")
    return snap.data


def parse(data: bytes) -> Parsed:
    """The log's bytes as lines, entries, their spans and dated sections, and findings."""
    text = data.decode("utf-8", "surrogateescape")
    lines = tuple(_LINES.findall(text))
    entries: list[Entry] = []
    spans: list[tuple[int, int]] = []
    sections: list[list[Any]] = []
    findings: list[Finding] = []
    day: date | None = None
    following = False  # whether an indented line belongs to the entry above
    if text.encode("utf-8", "surrogateescape") != text.encode("utf-8", "replace"):
        findings.append(_finding(1, "not valid UTF-8; kept as it is — re-save the file as UTF-8"))
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r\n").lstrip("\ufeff") if i == 0 else raw.rstrip("\r\n")
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) <= 2:
            if day is not None:
                sections[-1][2] = i
            day = _day_of(heading.group(2) or "", i + 1, findings)
            if mark := _ANY_MARKER.search(line):
                findings.append(_finding(i + 1, _HEADED.format(m=mark.group())))
            following = False
            if day is not None:
                sections.append([day, i, len(lines)])
            continue
        entry = _entry(line, day, len(entries) + 1, i + 1, findings)
        if entry is not None:
            entries.append(entry)
            spans.append((i, i + 1))
            following = True
        elif following and line[:1] in (" ", "\t") and line.strip():
            spans[-1] = (spans[-1][0], i + 1)
            if (about := _ABOUT.match(line)) and about.group(2):
                said = about.group(2)
                if about.group(1).lower() == "task":
                    entries[-1] = replace(entries[-1], task=said)
                else:
                    entries[-1] = replace(entries[-1], continuation=said)
        else:
            following = False
    return Parsed(lines, tuple(entries), tuple(spans),
                  tuple((d, s, e) for d, s, e in sections), tuple(findings))  # fmt: skip


def _day_of(title: str, line: int, findings: list[Finding]) -> date | None:
    found = _DAY.match(title)
    try:
        return date.fromisoformat(found.group(1)) if found else None
    except ValueError:
        findings.append(_finding(line, f"{title.split()[0]} is not a date; its entries are not read"))
        return None


def _entry(line: str, day: date | None, number: int, at: int, findings: list[Finding]) -> Entry | None:
    """The entry on this line: a list item, at the left edge or nested when it starts with
    a marker, under a dated heading. A marker on a line that is not one is a finding."""
    item = _ITEM.match(line)
    body = item.group(2).encode("utf-8", "surrogateescape").decode("utf-8", "replace") if item else ""
    marked = _MARKED.match(body)
    stray = _ANY_MARKER.search(line)
    if item is None or (item.group(1) and not marked):
        if stray:
            findings.append(_finding(at, _STRAY.format(m=stray.group())))
        return None
    priority, body = (PRIORITIES[marked.group(1)], marked.group(2)) if marked else ("medium", body)
    done = RESOLVED.match(body)
    text = done.group(1) if done else body
    if day is not None and text.strip():
        if stray and not marked:
            findings.append(_finding(at, _UNSET.format(m=stray.group())))
        return Entry(number, day, priority, text, done is not None, at)
    if marked:
        findings.append(_finding(at, _EMPTY.format(m=marked.group(1)) if not text.strip() else _OUTSIDE))
    elif stray:
        findings.append(_finding(at, _STRAY.format(m=stray.group())))
    return None


_STRAY = ('this line has a {m} but is not read as an observation (only a list item that starts with '
          'one is); write it as "- {m} …" to make it one')  # fmt: skip
_UNSET = ("read as 🟡: the {m} in it is not right after the list mark, so it sets no priority; "
          "move it there if it should")  # fmt: skip
_HEADED = ('the {m} in a heading marks no entry and sets no priority (and items under a heading that is '
           'not ## YYYY-MM-DD are not read); mark each entry instead: "- {m} …"')  # fmt: skip
_EMPTY = "a {m} with nothing after it is not read; write what you noticed after it, or delete the line"
_OUTSIDE = "an observation outside a ## YYYY-MM-DD section is not read; move it under a date heading"


def _finding(line: int, message: str) -> Finding:
    return Finding(LOG_NAME, line, message, severity="warning")


# -- writing ------------------------------------------------------------------------------


def observe(
    store: Store,
    text: str,
    priority: str = "medium",
    *,
    today: date | None = None,
    task: str = "",
    continuation: str = "",
) -> Entry:
    """Append one entry under today's heading (a new heading when the last one is another
    day), with ``task`` and ``continuation`` indented under it when given; every other byte
    of the file stays as it was."""
    if priority not in MARKERS:
        raise StoreError(f"priority {priority!r} is not one of {', '.join(MARKERS)}; nothing was written")
    folded = " ".join(text.split())
    where = f"store '{store.name}', {LOG_NAME}"
    day = today or date.today()
    line = f"- {MARKERS[priority]} {folded}"
    if _entry(line, day, 1, 1, []) is None:  # nothing, or nothing but a resolved mark
        raise StoreError(f"{where}: the observation is empty; nothing was written — say what you noticed")
    if len(folded) > MAX_TEXT:
        raise StoreError(
            f"{where}: the observation is {len(folded)} characters, over {MAX_TEXT}; nothing was "
            "written — say it in one line, or make it a memory with kura remember"
        )
    about = [(name, " ".join(_ANY_MARKER.sub("", said).split())) for name, said in
             (("task", task), ("next", continuation))]  # fmt: skip
    for name, said in about:
        if len(said) > MAX_TEXT:
            raise StoreError(
                f"{where}: the {name} is {len(said)} characters, over {MAX_TEXT}; nothing was written"
            )
        if said:
            line += f"\n  - {name}: {said}"
    write_checks.utf8(where, line)
    refuse_secrets(where, line)
    with writing(store) as parsed:
        lines, at = _appended(parsed, day, line)
        write_lines(store, lines)
    written = parse("".join(lines).encode("utf-8", "surrogateescape"))
    return next(e for e in written.entries if e.line == at + 1)


def _appended(parsed: Parsed, day: date, entry: str) -> tuple[list[str], int]:
    """The lines with ``entry`` spliced in, and the index it went to."""
    eol = "\r\n" if parsed.lines and parsed.lines[0].endswith("\r\n") else "\n"
    entry = entry.replace("\n", eol)  # an entry with its task and next lines
    lines = list(parsed.lines) or [HEADER.replace("\n", eol)]
    if parsed.sections and parsed.sections[-1][0] == day:
        _, start, end = parsed.sections[-1]
        at = max([s[1] for s in parsed.spans if start < s[0] < end], default=start + 1)
        if at == len(lines) and not lines[-1].endswith("\n"):
            lines[-1] += eol
        lines.insert(at, entry + eol)
        return lines, at
    if not lines[-1].endswith("\n"):
        lines[-1] += eol
    if lines[-1].strip():
        lines.append(eol)
    lines += [f"## {day.isoformat()}{eol}", entry + eol]
    return lines, len(lines) - 1


def resolve(store: Store, number: int, *, today: date | None = None) -> tuple[Entry, bool]:
    """Mark entry ``number`` resolved ("(resolved DATE)" at the end of its line); the entry
    as it now reads, and whether the file changed (False: it was resolved already)."""
    day = today or date.today()
    with writing(store) as parsed:
        entry = next((e for e in parsed.entries if e.number == number), None)
        if entry is None:
            raise NotFound(
                f"store '{store.name}': {LOG_NAME} has no entry #{number} "
                f"({len(parsed.entries)} entries); kura observe --list numbers them"
            )
        if entry.resolved:
            return entry, False
        lines = list(parsed.lines)
        raw = lines[entry.line - 1]
        content = raw.rstrip("\r\n")
        lines[entry.line - 1] = f"{content.rstrip()} (resolved {day.isoformat()}){raw[len(content) :]}"
        write_lines(store, lines)
    return replace(entry, resolved=True), True


@contextmanager
def writing(store: Store, *, cap: int = MAX_READ) -> Iterator[Parsed]:
    """The log as it is now, read under its lock, held while the caller writes it."""
    log_path(store)  # no store folder: a StoreError, before the lock would create one
    if store.write_policy == "frozen":
        store.check_write()
    with locked(store.state_dir / "observations.lock"):
        yield parse(read_bytes(store, cap=cap, settle=True))


def write_lines(store: Store, lines: Sequence[str]) -> None:
    """The log replaced, atomically, by ``lines`` (call it inside ``writing``)."""
    write_atomic(log_path(store), "".join(lines).encode("utf-8", "surrogateescape"))
