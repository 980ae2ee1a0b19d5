"""MEMORY.md: the one line per memory that is read every single time.

The index is a markdown file people edit, so everything in it is legal and kept: headings,
prose, HTML comments (also across lines), code fences, and *grouped* lines that name several
memories at once. Only an *entry* line — ``- [Title](slug.md) — trigger`` — belongs to one
memory, and only that line is ever rewritten by kura: adding a memory appends or updates
exactly its own line and leaves every other byte alone.

Titles stay short and whole: the given title when it is 1–40 characters, else the
description when that is short, else the slug. A truncated sentence reads as a complete
one and misleads, so none is ever produced; a longer title given to ``kura remember`` is
refused (``limits.check_title``) rather than dropped without a word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from urllib.parse import unquote

from kura.request import RememberRequest

TITLE_MAX = RememberRequest.TITLE_CHARS
INDEX_FILE = "MEMORY.md"
HEADER = (
    "# Memory index\n\n"
    "<!-- One line per memory: - [Title](slug.md) — a recognition trigger. "
    "Kept by kura; edit freely. -->\n"
)

_MD_LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\(\s*(<[^>]*>|[^()\s]+)(?:\s+\"[^\"]*\")?\s*\)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
_ENTRY = re.compile(
    r"^(?P<head>\s*(?:[-*+]|\d{1,9}[.)])\s+\[(?P<title>(?:\\.|[^\]\\])*)\]"
    r"\(\s*(?P<target><[^>]*>|[^()\s]+)(?:\s+\"[^\"]*\")?\s*\)"
    r"(?:\s*(?:—|–|--?|:)\s*|\s*$))(?P<trigger>.*)"
)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


@dataclass(frozen=True, slots=True)
class IndexLine:
    """One line of MEMORY.md. ``kind``: entry, group, heading, comment, prose or blank."""

    text: str
    kind: str
    slugs: tuple[str, ...] = ()
    title: str = ""
    trigger: str = ""
    head: str = ""  # an entry's text up to its trigger: indent, bullet, link, separator


@dataclass(frozen=True, slots=True)
class Index:
    lines: tuple[IndexLine, ...] = ()
    newline: str = "\n"
    bom: bool = False
    final_newline: bool = True
    unclosed: tuple[str, int] | None = None  # an HTML comment or code fence never closed: what, at which line

    def hidden(self) -> str:
        """What an unclosed comment or fence hides, said for a person ("" when nothing is)."""
        if self.unclosed is None:
            return ""
        what, line = self.unclosed
        opened = (
            "an HTML comment opened here (<!--)" if what == "<!--" else f"a code fence opened here ({what})"
        )
        close = "-->" if what == "<!--" else f"a {what} line"
        return (
            f"{INDEX_FILE}:{line}: {opened} is never closed, so every line after it is hidden from the "
            f"map — close it with {close}, or remove it"
        )

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
    """Text with a BOM stripped and CRLF made LF (only when every line ends so), plus
    what was there to put back."""
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    crlf = text.count("\r\n")
    if crlf and crlf == text.count("\n"):
        return text.replace("\r\n", "\n"), bom, "\r\n"
    return text, bom, "\n"  # LF, or mixed: lines keep their own \r and nothing is converted


def parse_index(text: str) -> Index:
    text, bom, newline = normalize(text)
    final_newline = text.endswith("\n") or text == ""
    raw_lines = text.split("\n")
    if final_newline:
        raw_lines.pop()
    lines: list[IndexLine] = []
    fence, fence_at, comment_at = "", 0, 0
    for number, raw in enumerate(raw_lines, start=1):
        if fence:
            if re.match(rf"^\s{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", raw):
                fence = ""
            lines.append(IndexLine(raw, "prose"))
            continue
        opened = _FENCE.match(raw) if not comment_at and ("``" in raw or "~~" in raw) else None
        if opened is not None:
            fence, fence_at = opened.group(1), number
            lines.append(IndexLine(raw, "prose"))
            continue
        if not comment_at and "<!--" not in raw:
            lines.append(classify_line(raw))
            continue
        visible, still_open = _uncomment(raw, bool(comment_at))
        had_comment = bool(comment_at) or visible != raw
        comment_at = (comment_at or number) if still_open else 0
        if had_comment and not visible.strip():
            lines.append(IndexLine(raw, "comment"))
        else:
            lines.append(classify_line(raw, visible))
    unclosed = (fence, fence_at) if fence else ("<!--", comment_at) if comment_at else None
    return Index(tuple(lines), newline, bom, final_newline, unclosed)


def parse_bytes(raw: bytes) -> Index:
    """The index from its file's bytes (bytes that are not UTF-8 survive a rewrite)."""
    return parse_index(raw.decode("utf-8", "surrogateescape"))


def _uncomment(raw: str, in_comment: bool) -> tuple[str, bool]:
    """The part of a line outside HTML comments, and whether a comment is still open."""
    visible: list[str] = []
    position = 0
    while position < len(raw):
        if in_comment:
            end = raw.find("-->", position)
            if end < 0:
                return "".join(visible), True
            position, in_comment = end + 3, False
        else:
            start = _comment_start(raw, position)
            if start < 0:
                visible.append(raw[position:])
                break
            visible.append(raw[position:start])
            position, in_comment = start + 4, True
    return "".join(visible), in_comment


def _comment_start(raw: str, position: int) -> int:
    """Where the next ``<!--`` opens a comment: one written ``\\<!--`` (a backslash escape,
    as kura writes it inside a title or trigger) is plain text in markdown."""
    start = raw.find("<!--", position)
    while start > 0 and (len(raw[:start]) - len(raw[:start].rstrip("\\"))) % 2:
        start = raw.find("<!--", start + 1)
    return start


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
    target = f"{slug}.md"
    if re.search(r"[\s()<>]", target):
        target = f"<{target}>"
    trigger = _plain(" ".join(trigger.split()))
    link = f"- [{_escape(title)}]({target})"
    return f"{link} — {trigger}" if trigger else link


def own_line(index: Index, slug: str, *, name: str, description: str, title: str | None) -> str:
    """A memory's index line; a title someone gave its existing line is kept."""
    existing = index.line_for(slug)
    chosen = title_for(title or (existing.title if existing else "") or name, description, slug)
    if existing is not None:
        return update_entry(existing, chosen, description)
    return entry_text(slug, chosen, description)


def update_entry(line: IndexLine, title: str, trigger: str) -> str:
    """A memory's existing line with a new title and trigger, keeping what a person chose:
    indentation and bullet, the link target as written, the separator, a trailing comment."""
    head = line.head
    if title != line.title:
        start = head.index("[")
        end = head.index("](", start)
        head = head[:start] + f"[{_escape(title)}" + head[end:]
    trigger = _plain(" ".join(trigger.split()))
    tail = line.text[len(line.head) + len(line.trigger) :] if line.trigger else ""
    if not line.trigger and trigger:
        head = head.rstrip() + " — "
    return head + trigger + tail


def _escape(title: str) -> str:
    return _plain(" ".join(title.split()).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]"))


def _plain(text: str) -> str:
    """Text that cannot open an HTML comment: a ``<!--`` in a description would hide the
    memory's own line, and every line after it, from the map."""
    return re.sub(
        r"(\\*)<!--", lambda m: m.group(1) + ("\\" if len(m.group(1)) % 2 == 0 else "") + "<!--", text
    )


def upsert(index: Index, slug: str, line: str) -> Index:
    """Set the memory's own entry line: replace it where it is, leave a grouped line that
    already names it alone, or append after the last line that names a memory."""
    new = classify_line(line)
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
    if "#" in target:
        target = target.split("#", 1)[0]
    if "%" in target:
        target = unquote(target)
    if not target.endswith(".md") or (":" in target and _SCHEME.match(target)):
        return None
    while target.startswith("./"):
        target = target[2:]
    return target[:-3] or None


def classify_line(raw: str, visible: str | None = None) -> IndexLine:
    """An entry is a list item whose first thing is a link to a memory, then a separator
    (or nothing); links later on the line belong to its trigger. Any other list item
    naming memories is a grouped line. Prose that mentions a memory names nothing."""
    visible = raw if visible is None else visible
    first = visible.lstrip()[:1]
    if not first:
        return IndexLine(raw, "blank")
    if first == "#" and _HEADING.match(visible):
        return IndexLine(raw, "heading")
    if not (first in "-*+" or first.isdigit()) or not _ITEM.match(visible):
        return IndexLine(raw, "prose")
    match = _ENTRY.match(visible)
    if match is not None:
        slug = slug_of_target(match.group("target"))
        if slug is not None:
            title = match.group("title")
            title = (re.sub(r"\\(.)", r"\1", title) if "\\" in title else title).strip()
            trigger = match.group("trigger").rstrip()
            head = match.group("head") if trigger else visible.rstrip()
            return IndexLine(raw, "entry", (slug,), title, trigger, head)
    slugs = tuple(dict.fromkeys(s for m in _MD_LINK.finditer(visible) if (s := slug_of_target(m.group(2)))))
    return IndexLine(raw, "group", slugs) if slugs else IndexLine(raw, "prose")
