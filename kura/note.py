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
  Line endings (LF/CRLF) and a byte-order mark are kept as they were.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import frontmatter
import yaml

from kura.index import normalize

TYPES = ("user", "feedback", "project", "reference")

_OPEN = re.compile(r"^-{3,}[ \t\r]*$")
_CLOSE = re.compile(r"^(?:-{3,}|\.{3})[ \t\r]*$")
_KEY_LINE = re.compile(r"""^(["']?)([^\s"'#:\-][^:]*?)\1[ \t]*:(?:[ \t]+(.*)|[ \t]*)$""")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_LINK = re.compile(r"\[\[([^\[\]|#]+)(?:#[^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")


@dataclass(frozen=True, slots=True)
class Finding:
    """Something wrong in a file that a person should fix; ``kura doctor`` shows these."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True, slots=True)
class _Span:
    """Lines of the frontmatter that belong to one top-level key (``key`` None: comments)."""

    key: str | None
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Note:
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

    def with_meta(self, **changes: Any) -> Note:
        """A copy with top-level keys set (a ``None`` value removes the key)."""
        meta = dict(self.meta)
        for key, value in changes.items():
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        return replace(self, meta=meta)

    def with_type(self, kind: str) -> Note:
        """Set the type in whichever layout the file already uses."""
        nested = self.meta.get("metadata")
        if "type" not in self.meta and isinstance(nested, dict) and "type" in nested:
            return self.with_meta(metadata={**nested, "type": kind})
        return self.with_meta(type=kind)

    def with_body(self, body: str) -> Note:
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
    ``[[slug#part]]`` name ``slug``)."""
    seen: dict[str, None] = {}
    for match in _LINK.finditer(body):
        target = match.group(1).strip()
        if target.endswith(".md"):
            target = target[:-3]
        if target:
            seen.setdefault(target, None)
    return tuple(seen)


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


def new_note(meta: dict[str, Any], body: str) -> Note:
    """A memory that has never been on disk."""
    return Note(meta=dict(meta), body=body if body.endswith("\n") else body + "\n")


def parse(text: str, path: str = "<memory>") -> Note:
    """Read a memory file. Never raises for bad content: problems become findings."""
    raw = text
    text, bom, newline = normalize(text)
    lines = text.split("\n")
    close = None
    if _OPEN.match(lines[0]):
        close = next((i for i in range(1, len(lines)) if _CLOSE.match(lines[i])), None)
    if close is None:
        problem = (
            "frontmatter opened with --- but never closed; read the whole file as body — "
            "add the closing --- line"
            if _OPEN.match(lines[0])
            else "no frontmatter: the file has no name, description or type — add a --- "
            "block or run kura doctor"
        )
        return Note(
            meta={},
            body=text,
            raw=raw,
            newline=newline,
            bom=bom,
            source_body=text,
            has_frontmatter=False,
            findings=(Finding(path, 1, problem),),
        )
    front_lines = lines[1:close]
    body = "\n".join(lines[close + 1 :])
    meta, findings = _read_meta(front_lines, path)
    findings += _coerce(meta, front_lines, path)
    findings += _missing(meta, front_lines, path)
    return Note(
        meta=meta,
        body=body,
        raw=raw,
        newline=newline,
        bom=bom,
        source_meta=dict(meta),
        source_body=body,
        front_lines=tuple(front_lines),
        delimiters=(lines[0], lines[close]),
        findings=tuple(findings),
    )


def render(note: Note) -> str:
    """Text for the note; the original text when nothing changed."""
    if note.raw is not None and note.meta == note.source_meta and note.body == note.source_body:
        return note.raw
    if note.has_frontmatter or note.meta:
        front = _render_front(note)
        opener, closer = note.delimiters
        text = f"{opener}\n{front}{closer}\n{note.body}"
    else:
        text = note.body
    if note.newline != "\n":
        text = text.replace("\n", note.newline)
    return ("\ufeff" if note.bom else "") + text


def dump_value(key: str, value: Any) -> str:
    """One top-level key as YAML that reads back as the same value (strings quoted where
    YAML would otherwise guess a boolean, a date or a nested structure)."""
    return yaml.safe_dump(
        {key: value}, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000
    )


def _render_front(note: Note) -> str:
    """Original lines for unchanged keys, fresh YAML for changed ones. A key written twice
    by hand keeps its earlier lines; only the last (the one YAML reads) is replaced. A
    frontmatter written as one flow mapping (``{a: 1}``) is written out again whole."""
    spans = _spans(list(note.front_lines))
    if spans is None:
        return yaml.safe_dump(note.meta, sort_keys=False, allow_unicode=True, width=10_000)
    last = {span.key: i for i, span in enumerate(spans) if span.key is not None}
    out: list[str] = []
    for i, span in enumerate(spans):
        key = span.key
        if key is None or (last[key] != i and key in note.meta):
            out.extend(span.lines)
        elif key not in note.meta:
            continue
        elif key in note.source_meta and note.meta[key] == note.source_meta[key]:
            out.extend(span.lines)
        else:
            out.extend(dump_value(key, note.meta[key]).rstrip("\n").split("\n"))
    for key, value in note.meta.items():
        if key not in last:
            out.extend(dump_value(key, value).rstrip("\n").split("\n"))
    return "".join(line + "\n" for line in out)


def _spans(front_lines: list[str]) -> tuple[_Span, ...] | None:
    """The lines that belong to each top-level key. Where the block is valid YAML the
    parser's own marks decide (so a quoted value that runs onto a column-0 line, or a
    comment inside a nested block, stays with its key); elsewhere a line-based reading.
    None for a flow mapping, whose keys share lines."""
    try:
        node = yaml.compose("".join(line + "\n" for line in front_lines), Loader=_Loader)
    except yaml.YAMLError:
        node = None
    if isinstance(node, yaml.MappingNode):
        if node.flow_style:
            return None
        spans = _node_spans(node, front_lines)
        if spans is not None:
            return spans
    return _line_spans(front_lines)


def _node_spans(node: yaml.MappingNode, front_lines: list[str]) -> tuple[_Span, ...] | None:
    spans: list[_Span] = []
    position = 0
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            return None
        start = key_node.start_mark.line
        end_mark = value_node.end_mark
        end = max(end_mark.line + (1 if end_mark.column else 0), start + 1)
        if start < position:
            return None
        spans.extend(_Span(None, (line,)) for line in front_lines[position:start])
        spans.append(_Span(str(key_node.value), tuple(front_lines[start:end])))
        position = end
    spans.extend(_Span(None, (line,)) for line in front_lines[position:])
    return tuple(spans)


def _line_spans(front_lines: list[str]) -> tuple[_Span, ...]:
    spans: list[_Span] = []
    key: str | None = None
    current: list[str] = []
    for index, line in enumerate(front_lines):
        match = _KEY_LINE.match(line)
        if match is None and key is not None and _continues(front_lines, index):
            current.append(line)
            continue
        if current:
            spans.append(_Span(key, tuple(current)))
        if match is not None:
            key, current = match.group(2).strip(), [line]
        else:
            spans.append(_Span(None, (line,)))
            key, current = None, []
    if current:
        spans.append(_Span(key, tuple(current)))
    return tuple(spans)


def _continues(front_lines: list[str], index: int) -> bool:
    """Whether a line belongs to the key above it: indented, a ``- `` item, or a blank
    line inside a block that goes on indented below it."""
    line = front_lines[index]
    if line[:1] in (" ", "\t") or line.startswith("- "):
        return True
    if line.strip():
        return False
    rest = next((ln for ln in front_lines[index + 1 :] if ln.strip()), "")
    return rest[:1] in (" ", "\t")


def _read_meta(front_lines: list[str], path: str) -> tuple[dict[str, Any], list[Finding]]:
    block = "".join(line + "\n" for line in front_lines)
    try:
        meta, _ = frontmatter.parse(f"---\n{block}---\n")
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = 1 + (mark.line if mark is not None else 1)
        problem = getattr(err, "problem", None) or str(err).split("\n")[0]
        finding = Finding(
            path,
            line,
            f"frontmatter is not valid YAML ({problem}); read it as "
            "flat key: value lines — quote the value or run kura doctor",
        )
        flat, more = _read_flat(front_lines, path)
        return flat, [finding, *more]
    if not meta and any(ln.strip() and not ln.lstrip().startswith("#") for ln in front_lines):
        flat, more = _read_flat(front_lines, path)
        return flat, [
            Finding(
                path,
                2,
                "frontmatter is not a key: value mapping; read it as "
                "flat key: value lines — fix the block or run kura doctor",
            ),
            *more,
        ]
    return _restore_keys(meta, front_lines), []


def _restore_keys(meta: dict[Any, Any], front_lines: list[str]) -> dict[str, Any]:
    """YAML 1.1 turns a key like ``on`` or ``no`` into a boolean; give keys back as written."""
    if all(isinstance(key, str) for key in meta):
        return dict(meta)
    restored: dict[str, Any] = {}
    for span in _spans(front_lines) or ():
        if span.key is None:
            continue
        try:
            guessed = yaml.safe_load(span.key)
        except yaml.YAMLError:
            guessed = span.key
        for candidate in (span.key, guessed):
            if candidate in meta:
                restored[span.key] = meta.pop(candidate)
                break
    restored.update({str(key): value for key, value in meta.items()})
    return restored


def _read_flat(front_lines: list[str], path: str) -> tuple[dict[str, Any], list[Finding]]:
    """The fallback reader, one top-level key at a time: a key whose own lines are valid
    YAML keeps its value; otherwise its first line is taken as text, as written."""
    meta: dict[str, Any] = {}
    findings: list[Finding] = []
    lineno = 2
    for span in _line_spans(front_lines):
        first = span.lines[0]
        if span.key is not None:
            meta[span.key] = _span_value(span)
        elif first.strip() and not first.lstrip().startswith("#"):
            findings.append(Finding(path, lineno, f"frontmatter line not read: {first.strip()[:60]!r}"))
        lineno += len(span.lines)
    return meta, findings


def _span_value(span: _Span) -> Any:
    try:
        loaded = yaml.safe_load("\n".join(span.lines))
    except yaml.YAMLError:
        loaded = None
    if isinstance(loaded, dict) and span.key in loaded:
        return loaded[span.key]
    match = _KEY_LINE.match(span.lines[0])
    return _unquote(match.group(3) or "") if match is not None else ""


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in ("'", '"'):
        return value[1:-1]
    return value


def _raw_values(front_lines: list[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in front_lines:
        match = _KEY_LINE.match(line)
        if match is not None:
            values.setdefault(match.group(2).strip(), _unquote(match.group(3) or ""))
    return values


def _coerce(meta: dict[str, Any], front_lines: list[str], path: str) -> list[Finding]:
    """Undo YAML's guesses on the prose fields (in place, before the Note exists)."""
    findings: list[Finding] = []
    guessed = [k for k in ("name", "description", "type") if not isinstance(meta.get(k), str)]
    if not guessed:
        return findings
    raw_values = _raw_values(front_lines)
    for key in guessed:
        value = meta.get(key)
        if value is None and not raw_values.get(key):
            continue
        meta[key] = raw_values.get(key) or _text(value)
        findings.append(
            Finding(
                path,
                _line_of(front_lines, key),
                f"{key} was read as {_kind(value)}; kept the text as written — quote it",
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
    if len(meta) < sum(1 for line in front_lines if line[:1] not in (" ", "\t", "#", "-", "")):
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
        match = _KEY_LINE.match(line)
        if match is not None:
            where.setdefault(match.group(2).strip(), []).append(offset + 2)
    for key, lines in sorted(where.items()):
        if len(lines) > 1:
            listed = ", ".join(map(str, lines))
            yield Finding(
                path,
                lines[-1],
                f"{key} is set {len(lines)} times (lines {listed}); only the last counts — remove the others",
            )


def _line_of(front_lines: list[str], key: str) -> int:
    for offset, line in enumerate(front_lines):
        match = _KEY_LINE.match(line.strip())
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
