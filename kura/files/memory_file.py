"""One memory file: text in, value out, and back again without mangling it.

Memory files are edited by hand, by agents, by distill-kura and by Claude Code, and kept
in git. So reading is tolerant and writing is conservative:

* The frontmatter is read with python-frontmatter (YAML). When a person's edit breaks the
  YAML (``description: Chose Postgres: ACID``, a value starting with ``- `` or ``#``) the
  block is read again as flat ``key: value`` lines and a ``Finding`` records where and why;
  a file is never skipped and never crashes the reader.
* YAML's own guesses are undone for the fields people write as prose: ``no``/``on`` become
  booleans and ``2026-01-02`` becomes a date, so ``name``/``description``/``type`` that did
  not come back as strings are re-read as the text written, with a finding.
* Both layouts carry the type: ``type:`` at top level (Claude Code) and
  ``metadata: {type: …}`` (distill-kura).
* Rendering reuses the original text of every key that did not change, so an unchanged
  memory re-saves to identical bytes and a changed one differs only in the changed keys.
  Line endings (LF/CRLF) and a byte-order mark are kept as they were. The line-level
  work (which lines belong to which key; reading a broken block) is ``kura.files.frontmatter``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from kura.files.body import links as body_links
from kura.files.checks import conflict_markers, nul_bytes
from kura.files.finding import Finding as Finding
from kura.files.frontmatter import KEY_LINE, raw_values, read_meta, render_front
from kura.files.memory_index import normalize
from kura.request import TYPES as TYPES  # defined with the requests that name one

_OPEN = re.compile(r"^-{3,}[ \t\r]*$")
_CLOSE = re.compile(r"^(?:-{3,}|\.{3})[ \t\r]*$")
_CLOSE_LINE = re.compile(_CLOSE.pattern, re.MULTILINE)  # a line of the text that is a closer


@dataclass(kw_only=True, frozen=True, slots=True)
class MemoryFile:
    """A parsed memory file. ``meta`` and ``body`` are what to edit; the rest is provenance
    that lets ``render`` give back the original bytes for whatever did not change."""

    meta: dict[str, Any]
    body: str
    findings: tuple[Finding, ...] = ()
    raw: str | None = None
    newline: str = "\n"
    bom: bool = False
    source_meta: dict[str, Any] = field(default_factory=dict)
    source_body: str | None = None
    front_lines: tuple[str, ...] = ()
    delimiters: tuple[str, str] = ("---", "---")
    has_frontmatter: bool = True

    @property
    def name(self) -> str:
        return _text(self.meta.get("name"))

    @property
    def description(self) -> str:
        return _text(self.meta.get("description"))

    @property
    def type(self) -> str | None:
        return note_type(self.meta)

    @property
    def links(self) -> tuple[str, ...]:
        return links(self.body)

    def with_meta(self, **changes: Any) -> MemoryFile:
        """A copy with top-level keys set (a ``None`` value removes the key)."""
        meta = dict(self.meta)
        for key, value in changes.items():
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        return replace(self, meta=meta)

    def with_type(self, kind: str) -> MemoryFile:
        """Set the type in whichever layout the file already uses."""
        nested = self.meta.get("metadata")
        if "type" not in self.meta and isinstance(nested, dict) and "type" in nested:
            return self.with_meta(metadata={**nested, "type": kind})
        return self.with_meta(type=kind)

    def with_body(self, body: str) -> MemoryFile:
        return replace(self, body=body if body.endswith("\n") else body + "\n")


def note_type(meta: dict[str, Any]) -> str | None:
    """The memory's type from either layout, lower-cased; None when absent."""
    value = meta.get("type")
    nested = meta.get("metadata")
    if value is None and isinstance(nested, dict):
        value = nested.get("type")
    if value is None:
        return None
    return _text(value).strip().lower() or None


def links(body: str) -> tuple[str, ...]:
    """``[[slug]]`` targets in order of first appearance (``[[slug|label]]`` and
    ``[[slug#part]]`` name ``slug``), outside code and raw HTML (``kura.files.body``)."""
    return body_links(body)


def compose_body(fact: str, *, why: str = "", how: str = "", related: tuple[str, ...] = ()) -> str:
    """The body convention: the fact, then **Why:**, **How to apply:** and links."""
    parts = [fact.strip()]
    tail = []
    if why.strip():
        tail.append(f"**Why:** {why.strip()}")
    if how.strip():
        tail.append(f"**How to apply:** {how.strip()}")
    if tail:
        parts.append("\n".join(tail))
    if related:
        parts.append("Related: " + ", ".join(f"[[{slug}]]" for slug in related))
    return "\n\n".join(parts) + "\n"


def new_note(meta: dict[str, Any], body: str) -> MemoryFile:
    """A memory that has never been on disk."""
    return MemoryFile(meta=dict(meta), body=body if body.endswith("\n") else body + "\n")


def parse(text: str, path: str = "<memory>") -> MemoryFile:
    """Read a memory file. Never raises for bad content: problems become findings."""
    raw = text
    text, bom, newline = normalize(text)
    end = text.find("\n")
    first = text if end < 0 else text[:end]
    # the first line after the opener that closes the block, found in the text itself
    close = _closer(text, end) if end >= 0 and _OPEN.match(first) else None
    if close is None:
        problem = (
            "frontmatter opened with --- but never closed; read the whole file as body — "
            "add the closing --- line"
            if _OPEN.match(first)
            else "no frontmatter: the file has no name, description or type — add a --- "
            "block or run kura doctor"
        )
        return MemoryFile(
            meta={},
            body=text,
            raw=raw,
            newline=newline,
            bom=bom,
            source_body=text,
            has_frontmatter=False,
            findings=(Finding(path, 1, problem),),
        )
    front = text[end + 1 : close.start()]  # "" or whole lines, each ending in a newline
    front_lines = front[:-1].split("\n") if front else []
    body = text[close.end() + 1 :]
    meta, findings = read_meta(front_lines, path)
    findings += _coerce(meta, front_lines, path)
    findings += _missing(meta, front_lines, path)
    return MemoryFile(
        meta=meta,
        body=body,
        raw=raw,
        newline=newline,
        bom=bom,
        source_meta=dict(meta),
        source_body=body,
        front_lines=tuple(front_lines),
        delimiters=(first, close.group()),
        findings=tuple(findings),
    )


def _closer(text: str, end: int) -> re.Match[str] | None:
    """The first line after the one ending at ``end`` (a newline) that closes a frontmatter
    block: only a line that starts with ``---`` or ``...`` is tried."""
    at = end
    while True:
        dashes, dots = text.find("\n---", at), text.find("\n...", at)
        found = min(dashes, dots) if dashes >= 0 and dots >= 0 else max(dashes, dots)
        if found < 0:
            return None
        close = _CLOSE_LINE.match(text, found + 1)
        if close is not None:
            return close
        at = found + 1


def from_bytes(data: bytes, path: str = "<memory>") -> MemoryFile:
    """Read a memory file's bytes: text that is not UTF-8 is read with replacement
    characters (and no ``raw``, so nothing rewrites it); NUL bytes and a merge conflict
    left in the file are findings too. Never raises for bad content."""
    try:
        text = data.decode("utf-8")
        note = parse(text, path)
    except UnicodeDecodeError as err:
        text = data.decode("utf-8", errors="replace")
        read = parse(text, path)
        line = data[: err.start].count(b"\n") + 1
        bad = Finding(
            path, line, "not valid UTF-8; read with replacement characters — re-save the file as UTF-8"
        )
        note = MemoryFile(meta=read.meta, body=read.body, findings=(bad, *read.findings),
                    has_frontmatter=read.has_frontmatter)  # fmt: skip
    found = nul_bytes(data, path) + conflict_markers(text, path)
    return replace(note, findings=(*note.findings, *found)) if found else note


def render(note: MemoryFile) -> str:
    """Text for the note; the original text when nothing changed."""
    if note.raw is not None and note.meta == note.source_meta and note.body == note.source_body:
        return note.raw
    if note.has_frontmatter or note.meta:
        front = render_front(note.meta, note.source_meta, note.front_lines)
        opener, closer = note.delimiters
        text = f"{opener}\n{front}{closer}\n{note.body}"
    else:
        text = note.body
    if note.newline != "\n":
        text = text.replace("\n", note.newline)
    return ("\ufeff" if note.bom else "") + text


def _coerce(meta: dict[str, Any], front_lines: list[str], path: str) -> list[Finding]:
    """Undo YAML's guesses on the prose fields (in place, before the MemoryFile exists)."""
    findings: list[Finding] = []
    guessed = [k for k in ("name", "description", "type") if not isinstance(meta.get(k), str)]
    if not guessed:
        return findings
    written = raw_values(front_lines)
    for key in guessed:
        value = meta.get(key)
        if value is None and not written.get(key):
            continue
        meta[key] = written.get(key) or _text(value)
        findings.append(
            Finding(
                path,
                _line_of(front_lines, key),
                f"{key} was read as {_kind(value)}; kept the text as written — quote it",
                "warning",
            )
        )
    return findings


def _missing(meta: dict[str, Any], front_lines: list[str], path: str) -> list[Finding]:
    """What a person should add so the memory can be indexed and typed."""
    findings: list[Finding] = []
    for key in ("name", "description"):
        if not _text(meta.get(key)).strip():
            findings.append(
                Finding(
                    path,
                    _line_of(front_lines, key),
                    f"no {key}: add a {key}: line so the index can name this memory",
                )
            )
    if len(meta) < len(front_lines) and len(meta) < sum(
        1 for line in front_lines if line[:1] not in (" ", "\t", "#", "-", "")
    ):  # (no more keys can be written than there are lines)
        findings.extend(_duplicates(front_lines, path))
    kind = note_type(meta)
    if kind is None:
        findings.append(Finding(path, 1, "no type: add type: user|feedback|project|reference"))
    elif kind not in TYPES:
        findings.append(
            Finding(
                path,
                _line_of(front_lines, "type"),
                f"unknown type {kind!r}: use one of user, feedback, project, reference",
            )
        )
    return findings


def _duplicates(front_lines: list[str], path: str) -> Iterator[Finding]:
    """Keys written more than once (YAML keeps the last one silently)."""
    where: dict[str, list[int]] = {}
    for offset, line in enumerate(front_lines):
        match = KEY_LINE.match(line)
        if match is not None:
            where.setdefault(match.group(2).strip(), []).append(offset + 2)
    for key, lines in sorted(where.items()):
        if len(lines) > 1:
            listed = ", ".join(map(str, lines))
            yield Finding(
                path,
                lines[-1],
                f"{key} is set {len(lines)} times (lines {listed}); only the last counts — remove the others",
                "warning",
            )


def _line_of(front_lines: list[str], key: str) -> int:
    for offset, line in enumerate(front_lines):
        match = KEY_LINE.match(line.strip())
        if match is not None and match.group(2).strip() == key:
            return offset + 2
    return 1


def _kind(value: Any) -> str:
    if value is None:
        return "empty (a # starts a YAML comment)"
    return f"{type(value).__name__} ({value!r})"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
