"""Journal adapters: a transcript in, classed segments out, and nobody believed on their word.

The gate can only be as honest as the classes it is handed, so the adapters decide who
said what by the transcript's own structure, never by what the text claims about itself:

    format    file                          USER           TOOL / ACT              SELF
    claude    Claude Code ``*.jsonl``       user text      tool_result / tool_use  assistant text,
                                                                                   a subagent's "user"
    codex     Codex CLI rollout JSONL       user message   *_output / *_call       assistant message
    chat      ``{"role","content"}`` JSONL  role user      role tool / tool_calls  role assistant
    evidence  ``{"class","text"}`` lines    as labelled    as labelled             as labelled
    text      plain text or markdown        every paragraph

This module detects the format, frames the lines and tracks progress; the record adapters
live in ``kura.transcripts.adapters``. Injected context is never USER even when it arrives
inside a "user" message: Claude Code wraps system reminders, hook output and local-command
echoes (``<command-name>``, ``<local-command-stdout>``, ``!`` bash mode) into user turns,
and Codex sends its environment context and AGENTS.md that way; meta entries, compaction
summaries, system and developer messages, thinking and reasoning blocks are skipped
outright. A subagent's "user" turns (``isSidechain``) are the parent agent talking: SELF.

A file is told apart by its suffix (``.md``/``.txt``: notes) and else by the shape of its
first records; a JSONL file no shape matches is reported and not read, never guessed.

A segment longer than ``CAP`` characters is cut there, not split: the head of a huge tool
dump is what a quote will come from, and splitting would let one output pose as many pieces
of evidence. Every cut is noted as a finding.

Reading is by complete lines. A last line with no newline is a transcript still being
written and is left for the next read. A line that is not JSON (or not an object, or not the
shape its format promises) becomes a finding with ``file:line`` — reported, never a crash,
never a silent skip. Progress is a ``Cursor``: the byte offset *and* the line number reached,
plus a fingerprint of the file's head. While the file only grows, the offset is exact; when
it shrank, its head changed or the offset no longer sits on a line boundary, the file was
rewritten (compacted, re-serialised, restored), a byte offset into it is a lie, and reading
resumes after the same number of complete lines — the sequence number — instead. A file
now shorter than that is not read at all until it grows past it: a watermark never moves
back on its own (``kura.transcripts.journals`` explains who may reset one). Notes are read by
lines too, so a paragraph still being typed, or cut by a ``max_bytes`` limit, can arrive in
two pieces; each is still the person's words.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

from kura.errors import InvalidRequest
from kura.files.finding import Finding
from kura.transcripts.adapters import ADAPTERS, Piece
from kura.transcripts.segments import CLASSES, Segment

CAP = 8000  # characters kept of one segment
HEAD_BYTES = 4096  # how much of a file's start its fingerprint covers
SNIFF_BYTES = 65536  # how much of a file's start format detection looks at
FORMATS = ("claude", "codex", "chat", "evidence", "text")
TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".text")

_CODEX_TOP = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_CLAUDE_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation"}


@dataclass(frozen=True, slots=True)
class Cursor:
    """How far a source has been read: ``offset`` bytes, ``line`` complete lines (the
    sequence number), and ``head``, a hash of the file's first ``min(offset, HEAD_BYTES)``."""

    offset: int = 0
    line: int = 0
    head: str = ""


@dataclass(frozen=True, slots=True)
class Stretch:
    """What one read produced, and the cursor the next read starts from."""

    segments: tuple[Segment, ...]
    cursor: Cursor
    findings: tuple[Finding, ...] = ()
    fmt: str = ""
    rewritten: bool = False


@dataclass(kw_only=True, frozen=True, slots=True)
class Raw:
    """Complete lines taken from a file, not yet parsed: ``start`` is where they begin
    (after any rewrite was resolved), ``end`` where the next read begins."""

    path: Path
    data: bytes
    start: Cursor
    end: Cursor
    fmt: str
    session: str
    findings: tuple[Finding, ...] = ()
    rewritten: bool = False
    tail: bytes = b""  # an unfinished last line, not part of the stretch

    def parse(self, *, finished: bool = False) -> Stretch:
        """Segments of the lines; ``finished`` also reads the unfinished last line (for a
        file known to be complete) — the cursor still stops before it."""
        data = self.data + self.tail + b"\n" if finished and self.tail.strip() else self.data
        findings = self.findings
        if self.tail.strip() and not finished:
            note = "last line has no newline yet (still being written?); not read until it ends"
            findings += (Finding(str(self.path), self.end.line + 1, note, "note"),)
        if not data:
            return Stretch((), self.end, findings, self.fmt, self.rewritten)
        segments, found = parse_lines(
            data, self.fmt, name=str(self.path), first_line=self.start.line + 1, session=self.session
        )
        return Stretch(segments, self.end, findings + found, self.fmt, self.rewritten)


def read_segments(path: str | Path, *, finished: bool = False) -> list[Segment]:
    """Every segment in a transcript, its format detected; the unfinished last line only
    when the file is known to be ``finished``."""
    return list(read_from(path, finished=finished).segments)


def read_from(
    path: str | Path,
    cursor: Cursor | None = None,
    *,
    fmt: str | None = None,
    max_bytes: int = 0,
    finished: bool = False,
) -> Stretch:
    """Segments from ``cursor`` on (at most about ``max_bytes`` of lines when given)."""
    raw = take(Path(path), cursor or Cursor(), fmt=fmt, max_bytes=max_bytes)
    return raw.parse(finished=finished)


def take(path: Path, cursor: Cursor, *, fmt: str | None = None, max_bytes: int = 0) -> Raw:
    """The complete lines after ``cursor`` — resolving a rewrite first — without parsing."""
    with open(path, "rb") as handle:
        size = handle.seek(0, 2)
        sniff = _pread(handle, 0, SNIFF_BYTES)
        kind = fmt or detect(path, sniff)
        session = _session(kind, sniff, path)
        start, rewritten, found = _resume(handle, cursor, size, str(path))
        if start is None:  # rewritten shorter than what was read: wait for it to grow
            return Raw(
                path=path,
                data=b"",
                start=cursor,
                end=cursor,
                fmt=kind,
                session=session,
                findings=tuple(found),
                rewritten=rewritten,
            )
        if kind not in FORMATS:
            problem = Finding(
                str(path),
                1,
                "cannot tell which transcript format this is; not read — give its "
                "journal root a format name or convert it to the evidence JSONL",
                "warning",
            )
            return Raw(
                path=path,
                data=b"",
                start=start,
                end=start,
                fmt=kind,
                session=session,
                findings=(*found, problem),
                rewritten=rewritten,
            )
        data, tail = _complete_lines(handle, start.offset, max_bytes, size)
        end_offset = start.offset + len(data)
        head = _fingerprint(_pread(handle, 0, min(end_offset, HEAD_BYTES)))
    end = Cursor(end_offset, start.line + data.count(b"\n"), head)
    return Raw(
        path=path,
        data=data,
        start=start,
        end=end,
        fmt=kind,
        session=session,
        findings=tuple(found),
        rewritten=rewritten,
        tail=tail,
    )


def detect(path: Path, sniff: bytes) -> str:
    """The adapter for a file: by its suffix, else by the shape of its first records."""
    if path.suffix.lower() in TEXT_SUFFIXES:
        return "text"
    for line in sniff.splitlines()[:50]:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and (kind := _shape(obj)):
            return kind
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson") or sniff.lstrip().startswith(b"{"):
        return "unknown"
    return "text"


def _shape(obj: dict[str, Any]) -> str:
    kind = obj.get("type")
    if obj.get("class") in CLASSES and "text" in obj:
        return "evidence"
    if kind in _CODEX_TOP or ("instructions" in obj and "id" in obj and "timestamp" in obj):
        return "codex"
    if kind in _CLAUDE_TYPES and ({"sessionId", "message", "leafUuid", "uuid"} & obj.keys()):
        return "claude"
    if "role" in obj or isinstance(obj.get("messages"), list):
        return "chat"
    return ""


# -- reading complete lines from a cursor -------------------------------------------------


def cursor_at(path: Path, offset: int) -> Cursor | None:
    """The cursor of a reader that has read ``path`` up to byte ``offset``, taken back to the
    start of the line ``offset`` falls in (so no line is skipped); None when the file is
    shorter than that."""
    lines, read, end, head = 0, 0, 0, b""
    with open(path, "rb") as handle:
        while read < offset:
            block = handle.read(min(1 << 20, offset - read))
            if not block:
                return None
            head += block[: max(0, HEAD_BYTES - len(head))]
            if b"\n" in block:
                lines, end = lines + block.count(b"\n"), read + block.rfind(b"\n") + 1
            read += len(block)
    return Cursor(end, lines, _fingerprint(head[:end])) if end else Cursor()


def _pread(handle: BinaryIO, offset: int, size: int) -> bytes:
    handle.seek(offset)
    return handle.read(size)


def _fingerprint(head: bytes) -> str:
    return hashlib.sha256(head).hexdigest()[:32]


def _resume(
    handle: BinaryIO, cursor: Cursor, size: int, name: str
) -> tuple[Cursor | None, bool, list[Finding]]:
    """The cursor to read from: ``cursor`` while the file only grew, else the same line
    (None when the rewritten file no longer has that many lines)."""
    if cursor.offset == 0 and cursor.line == 0:
        return Cursor(), False, []
    intact = (
        cursor.offset <= size
        and _pread(handle, cursor.offset - 1, 1) == b"\n"
        and _fingerprint(_pread(handle, 0, min(cursor.offset, HEAD_BYTES))) == cursor.head
    )
    if intact:
        return cursor, False, []
    offset, lines = 0, 0
    handle.seek(0)
    while lines < cursor.line:
        line = handle.readline()
        if not line.endswith(b"\n"):
            note = (
                f"was rewritten and now has {lines} complete lines, fewer than the {cursor.line} "
                "already read; nothing more is read until it grows past that (reset its "
                "watermark to read it again)"
            )
            return None, True, [Finding(name, lines + 1, note, "warning")]
        offset, lines = offset + len(line), lines + 1
    head = _fingerprint(_pread(handle, 0, min(offset, HEAD_BYTES)))
    note = f"was rewritten since it was last read; resumed after line {lines} (by count, not bytes)"
    return Cursor(offset, lines, head), True, [Finding(name, lines + 1, note, "note")]


def _complete_lines(handle: BinaryIO, offset: int, max_bytes: int, size: int) -> tuple[bytes, bytes]:
    """Bytes from ``offset`` through the last newline — never a partial line, but always at
    least one whole line when there is one, however long — and, when the read reached the
    end, the unfinished last line after them."""
    handle.seek(offset)
    data = handle.read(max_bytes) if max_bytes > 0 else handle.read()
    while max_bytes > 0 and b"\n" not in data:
        more = handle.read(max_bytes)
        if not more:
            break
        data += more
    cut = data.rfind(b"\n") + 1
    return data[:cut], (data[cut:] if offset + len(data) >= size else b"")


def _session(kind: str, sniff: bytes, path: Path) -> str:
    if kind == "codex":
        try:
            first = json.loads(sniff.split(b"\n", 1)[0])
            meta = first.get("payload", first) if isinstance(first, dict) else {}
            if isinstance(meta, dict) and isinstance(meta.get("id"), str):
                return str(meta["id"])
        except ValueError:
            pass
    return path.stem


# -- parsing ------------------------------------------------------------------------------


def parse_lines(
    data: bytes, fmt: str, *, name: str, first_line: int = 1, session: str = ""
) -> tuple[tuple[Segment, ...], tuple[Finding, ...]]:
    """Segments and findings of complete lines; ``first_line`` numbers the first of them."""
    if fmt not in FORMATS:
        raise InvalidRequest(f"no adapter named {fmt!r} (known: {', '.join(FORMATS)})")
    segments: list[Segment] = []
    found: list[Finding] = []
    lines = data.split(b"\n")[:-1] if data.endswith(b"\n") or not data else data.split(b"\n")
    texts = [_decode(raw, name, first_line + i, found) for i, raw in enumerate(lines)]
    if first_line == 1 and texts:
        texts[0] = texts[0].removeprefix("\ufeff")
    pieces = _text(texts, first_line, session) if fmt == "text" else _records(texts, fmt, first_line, session)
    for number, piece in pieces:
        if isinstance(piece, str):
            found.append(Finding(name, number, f"{piece}; line skipped — fix or remove it"))
        elif piece.text.strip():
            segments.append(replace(_capped(piece, name, number, found), line=number, when=piece.when))
    return tuple(segments), tuple(found)


def _decode(raw: bytes, name: str, number: int, found: list[Finding]) -> str:
    try:
        return raw.decode("utf-8").removesuffix("\r")
    except UnicodeDecodeError:
        found.append(Finding(name, number, "not valid UTF-8; undecodable bytes replaced", "warning"))
        return raw.decode("utf-8", errors="replace").removesuffix("\r")


def _capped(segment: Segment, name: str, number: int, found: list[Finding]) -> Segment:
    if len(segment.text) <= CAP:
        return segment
    note = f"{segment.cls} segment of {len(segment.text)} characters cut to the first {CAP}"
    found.append(Finding(name, number, note, "note"))
    return replace(segment, text=segment.text[:CAP])


def _text(lines: list[str], first_line: int, session: str) -> Iterator[tuple[int, Piece]]:
    """Every paragraph (lines between blank lines) of a note is the person's own words."""
    block: list[str] = []
    start = first_line
    for i, line in enumerate([*lines, ""]):
        if line.strip():
            if not block:
                start = first_line + i
            block.append(line)
        elif block:
            yield start, Segment("USER", "\n".join(block).strip(), session, str(start))
            block = []


def _records(lines: list[str], fmt: str, first_line: int, session: str) -> Iterator[tuple[int, Piece]]:
    adapter = ADAPTERS[fmt]
    for i, line in enumerate(lines):
        number = first_line + i
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as err:
            yield number, f"not valid JSON ({err.args[0] if err.args else err})"
            continue
        if not isinstance(obj, dict):
            yield number, f"a JSON {type(obj).__name__}, not an object"
            continue
        stamp = obj.get("timestamp")
        when = stamp if isinstance(stamp, str) and len(stamp) <= 40 else ""
        for piece in adapter(obj, number, session):
            yield number, replace(piece, when=when) if when and not isinstance(piece, str) else piece
