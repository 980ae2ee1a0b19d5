"""MEMORY.md: the one line per memory that is read every single time.

The index is a markdown file people edit, so everything in it is legal and kept: headings,
prose, HTML comments (also across lines), code fences, and *grouped* lines that name several
memories at once. Only an *entry* line — ``- [Title](slug.md) — trigger`` — belongs to one
memory, and only that line is ever rewritten by kura: adding a memory appends or updates
exactly its own line and leaves every other byte alone.

Titles stay short and whole: the given title when it is 1–40 characters, else the
description when that is short, else the slug. A truncated sentence reads as a complete
one and misleads, so none is ever produced.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from urllib.parse import unquote

TITLE_MAX = 40
HEADER = (
    "# Memory index\n\n"
    "<!-- One line per memory: - [Title](slug.md) — a recognition trigger. "
    "Kept by kura; edit freely. -->\n"
)

_MD_LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\(\s*(<[^>]*>|[^()\s]+)(?:\s+\"[^\"]*\")?\s*\)")
_ENTRY = re.compile(
    r"^(?P<bullet>\s*[-*+]\s+)(?P<link>\[(?:\\.|[^\]\\])*\]\([^)]*\))"
    r"(?:\s*(?:—|–|--?|:)?\s*(?P<trigger>.*?))?\s*$"
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


@dataclass(frozen=True, slots=True)
class IndexLine:
    """One line of MEMORY.md. ``kind``: entry, group, heading, comment, prose or blank."""

    text: str
    kind: str
    slugs: tuple[str, ...] = ()
    title: str = ""
    trigger: str = ""


@dataclass(frozen=True, slots=True)
class Index:
    lines: tuple[IndexLine, ...] = ()
    newline: str = "\n"
    bom: bool = False
    final_newline: bool = True

    def entries(self) -> tuple[IndexLine, ...]:
        return tuple(line for line in self.lines if line.kind == "entry")

    def named(self) -> tuple[str, ...]:
        """Every slug the index names (entries and grouped lines), in order, once each."""
        seen: dict[str, None] = {}
        for line in self.lines:
            for slug in line.slugs:
                seen.setdefault(slug, None)
        return tuple(seen)

    def line_for(self, slug: str) -> IndexLine | None:
        return next((ln for ln in self.lines if ln.kind == "entry" and ln.slugs == (slug,)), None)


def normalize(text: str) -> tuple[str, bool, str]:
    """Text with a BOM stripped and CRLF made LF, plus what was there to put back."""
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    newline = "\r\n" if "\r\n" in text else "\n"
    return text.replace("\r\n", "\n"), bom, newline


def parse_index(text: str) -> Index:
    text, bom, newline = normalize(text)
    final_newline = text.endswith("\n") or text == ""
    raw_lines = text.split("\n")
    if final_newline:
        raw_lines.pop()
    lines: list[IndexLine] = []
    in_comment = in_fence = False
    for raw in raw_lines:
        if in_fence or _FENCE.match(raw):
            if _FENCE.match(raw):
                in_fence = not in_fence
            lines.append(IndexLine(raw, "prose"))
            continue
        if in_comment:
            in_comment = "-->" not in raw
            lines.append(IndexLine(raw, "comment"))
            continue
        if raw.lstrip().startswith("<!--"):
            in_comment = "-->" not in raw.split("<!--", 1)[1]
            lines.append(IndexLine(raw, "comment"))
            continue
        lines.append(_classify(raw))
    return Index(tuple(lines), newline, bom, final_newline)


def render_index(index: Index) -> str:
    text = "\n".join(line.text for line in index.lines)
    if index.final_newline and index.lines:
        text += "\n"
    if index.newline != "\n":
        text = text.replace("\n", index.newline)
    return ("\ufeff" if index.bom else "") + text


def title_for(given: str, description: str, slug: str) -> str:
    """The title rule: given if 1–40 chars, else a short description, else the slug."""
    for candidate in (given, description):
        candidate = " ".join((candidate or "").split())
        if 1 <= len(candidate) <= TITLE_MAX:
            return candidate
    return slug


def entry_text(slug: str, title: str, trigger: str) -> str:
    title = " ".join(title.split()).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    target = f"{slug}.md"
    if re.search(r"[\s()<>]", target):
        target = f"<{target}>"
    trigger = " ".join(trigger.split())
    return f"- [{title}]({target}) — {trigger}" if trigger else f"- [{title}]({target})"


def upsert(index: Index, slug: str, line: str) -> Index:
    """Set the memory's own entry line: replace it where it is, leave a grouped line that
    already names it alone, or append after the last line that names a memory."""
    new = _classify(line)
    for position, existing in enumerate(index.lines):
        if existing.kind == "entry" and existing.slugs == (slug,):
            if existing.text == line:
                return index
            lines = list(index.lines)
            lines[position] = new
            return replace(index, lines=tuple(lines))
    if slug in index.named():
        return index
    lines = list(index.lines)
    last = max((i for i, ln in enumerate(lines) if ln.slugs), default=None)
    if last is None:
        while lines and lines[-1].kind == "blank":
            lines.pop()
        if lines:
            lines.append(IndexLine("", "blank"))
        lines.append(new)
    else:
        lines.insert(last + 1, new)
    return replace(index, lines=tuple(lines), final_newline=True)


def remove(index: Index, slug: str) -> Index:
    """Drop the memory's own entry lines (grouped lines are a person's; they stay)."""
    kept = tuple(ln for ln in index.lines if not (ln.kind == "entry" and ln.slugs == (slug,)))
    return index if len(kept) == len(index.lines) else replace(index, lines=kept)


def slug_of_target(target: str) -> str | None:
    """The slug a markdown link target names, or None when it is not a local memory."""
    target = target.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    target = unquote(target.split("#", 1)[0])
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or not target.endswith(".md"):
        return None
    while target.startswith("./"):
        target = target[2:]
    return target[:-3] or None


def _classify(raw: str) -> IndexLine:
    if not raw.strip():
        return IndexLine(raw, "blank")
    if _HEADING.match(raw):
        return IndexLine(raw, "heading")
    links = [(m.group(1), slug_of_target(m.group(2))) for m in _MD_LINK.finditer(raw)]
    slugs = tuple(dict.fromkeys(slug for _, slug in links if slug))
    if not slugs:
        return IndexLine(raw, "prose")
    match = _ENTRY.match(raw)
    if match is not None and len(links) == 1 and len(slugs) == 1:
        title = re.sub(r"\\(.)", r"\1", links[0][0])
        return IndexLine(raw, "entry", slugs, title.strip(), (match.group("trigger") or "").strip())
    return IndexLine(raw, "group", slugs)
