"""A host's character ceiling: the block made to fit by the map's own ladder, never cut.

Some hosts cap what a hook may hand the model, and cut silently: Claude Code keeps about
2 KB of a hook's output past 10,000 characters and gives the model a file path instead.
A cut map is the half map prefill exists to prevent — every memory below the cut would
seem not to exist. So a block with a ceiling (``[prefill] max_chars``, ``kura prefill
--max-chars``, ``$KURA_PREFILL_MAX_CHARS``; the smallest of those set holds) comes down
the ladder the budget already uses, and stops at the first rung that fits:

1. the map as woven;
2. the fresh window narrowed (7, 3, 1, 0 days): lines fold to their triggers, none is
   dropped, so the map is still whole;
3. the sector map — the index's sections with counts and titles, saying it is not the
   full map and to recall the rest — with as many titles as the ceiling leaves room for
   (every title, when they fit), then only counts, then only the first sections and how
   many more there are;
4. a few lines saying that not even the outline fits, and to recall.

The cloth does not depend on the ceiling. The weave records, beside it, the folded form
of each line it kept in full because it was fresh (a *fold*), and prefill applies folds
here; so hosts with different ceilings share one woven map, none re-weaves for another,
and the same files and ceiling give the same bytes. This module is on the shell-hook
path: it imports nothing heavy.

Characters are counted as JavaScript counts a string's length (UTF-16 code units: an
emoji outside the Basic Multilingual Plane is two), the stricter of the counts a host is
likely to use, so a Node host's cap holds too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kura.files.memory_index import Index, parse_index

LADDER = (7, 3, 1, 0)
SECTOR_TITLES = 3
NAME_CHARS = 200


@dataclass(frozen=True, slots=True)
class Fold:
    line: int  # the line of the cloth (from 0)
    age: int  # days since the memory changed: in full only under a wider window than this
    text: str  # the line folded to its trigger


@dataclass(frozen=True, slots=True)
class Outline:
    """The index's ``##`` sections, each with the titles (or slugs) of what it names."""

    total: int
    sections: tuple[tuple[str, tuple[str, ...]], ...]


def length(text: str) -> int:
    """``text``'s length as JavaScript counts it."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def tightest(*ceilings: int) -> int:
    """Every ceiling that is set holds, so the smallest of them does (0: none is set)."""
    return min((c for c in ceilings if c > 0), default=0)


def shown_name(name: str, max_chars: int) -> str:
    """The store's name as the markers show it: under a ceiling, at most NAME_CHARS long,
    so that the smallest block always fits MIN_CHARS."""
    if not max_chars or length(name) <= NAME_CHARS:
        return name
    cut = name[: NAME_CHARS - 1]
    while length(cut) > NAME_CHARS - 1:
        cut = cut[:-1]
    return cut + "…"


def folds_from(raw: Any, lines: int) -> tuple[Fold, ...]:
    """The folds map.json records, checked against a cloth of ``lines`` lines. Anything
    malformed means no folds at all: the ladder then goes from the map to the sector map,
    which is honest, instead of folding a line it cannot be sure of."""
    if not isinstance(raw, list):
        return ()
    out: list[Fold] = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 3):
            return ()
        line, age, text = item
        valid = type(line) is int and type(age) is int and isinstance(text, str)
        if not valid or not (out[-1].line if out else -1) < line < lines or age < 0 or "\n" in text:
            return ()
        out.append(Fold(line, age, text))
    return tuple(out)


def narrowed(body: str, folds: Sequence[Fold], days: float, room: int) -> tuple[int, str] | None:
    """(window, body) for the widest fresh window below ``days`` whose body fits ``room``
    characters, or None when not even every line folded does. Each window is priced
    from what its folds save before any text is built."""
    lines = body.rstrip("\n").split("\n")
    if not folds or folds[-1].line >= len(lines):
        return None
    size = length("\n".join(lines))
    saved = [(f, length(lines[f.line]) - length(f.text)) for f in folds]
    for window in (d for d in LADDER if d < days):
        if size - sum(cut for f, cut in saved if f.age >= window) <= room:
            folded = list(lines)
            for fold in folds:
                if fold.age >= window:
                    folded[fold.line] = fold.text
            return window, "\n".join(folded)
    return None


def smallest(body: str, folds: Sequence[Fold]) -> int:
    """The length of ``body`` with every fold applied."""
    lines = body.rstrip("\n").split("\n")
    valid = [f for f in folds if f.line < len(lines)]
    return length("\n".join(lines)) - sum(length(lines[f.line]) - length(f.text) for f in valid)


def outline(index: Index | str) -> Outline:
    """The index's sections, in order, with what each names."""
    sections: list[tuple[str, list[str]]] = [("(before any heading)", [])]
    total = 0
    for line in (parse_index(index) if isinstance(index, str) else index).lines:
        if line.kind == "heading" and line.text.lstrip().startswith("##"):
            sections.append((line.text.strip("# ").strip(), []))
        elif line.slugs:
            sections[-1][1].extend([line.title] if line.kind == "entry" else list(line.slugs))
            total += len(line.slugs)
    return Outline(total, tuple((title, tuple(names)) for title, names in sections if names))


def sector_text(found: Outline, *, titles: int = SECTOR_TITLES) -> str:
    """The sector map: every section with its count and its first ``titles`` titles."""
    if titles and titles >= max((len(names) for _, names in found.sections), default=0):
        how = "Every memory it names is listed below by its title alone, section by section."
    elif titles:
        how = "Only its sections are listed, with a few titles each."
    else:
        how = "Only its sections are listed, with how many memories each names."
    return "\n".join([_intro(found.total, how), "", *(_section(t, n, titles) for t, n in found.sections)])


def sector_map(index: Index | str) -> str:
    """The index's ``##`` sections with how many memories each names and a few titles."""
    return sector_text(outline(index))


def fitted_sectors(found: Outline, room: int) -> str | None:
    """The fullest sector map within ``room`` characters: as many titles per section as fit
    (every title when the room allows), then none, then the first sections and how many
    more there are. None if not even the introduction fits."""
    low, high = -1, max((len(names) for _, names in found.sections), default=0)
    while low < high:  # the most titles per section that fit; the length grows with the number
        middle = (low + high + 1) // 2
        if length(sector_text(found, titles=middle)) <= room:
            low = middle
        else:
            high = middle - 1
    if low >= 0:
        return sector_text(found, titles=low)
    lines = [
        _intro(found.total, "Only its first sections are listed, with how many memories each names."),
        "",
    ]
    used = length("\n".join(lines))
    left, memories = len(found.sections), found.total
    for title, names in found.sections:
        line = _section(title, names, 0)
        after = _more(left - 1, memories - len(names))
        if used + 1 + length(line) + (1 + length(after) if after else 0) > room:
            break
        lines.append(line)
        used += 1 + length(line)
        left, memories = left - 1, memories - len(names)
    more = _more(left, memories)
    if more:
        lines.append(more)
    text = "\n".join(lines)
    return text if length(text) <= room else None


def _intro(total: int, how: str) -> str:
    return (
        f"This is NOT the full map: the index names {total} memories, more than this prompt can "
        f"carry. {how} Before answering about anything that might be remembered, recall it "
        '(kura recall "QUESTION", or the kura_recall tool).'
    )


def _section(title: str, names: tuple[str, ...], titles: int) -> str:
    if not titles:
        return f"- {title} ({len(names)})"
    shown = "; ".join(names[:titles]) + ("; …" if len(names) > titles else "")
    return f"- {title} ({len(names)}): {shown}"


def _more(sections: int, memories: int) -> str:
    if not sections:
        return ""
    return f"- … and {sections} more section{'s' if sections != 1 else ''} naming {memories} memories"
