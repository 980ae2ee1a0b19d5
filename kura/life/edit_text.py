"""The text of an edit in place: what append, prepend, replace, a section and a rename's
links do to a memory's words, apart from the files (``kura.life.edit`` writes them).

Each is exact or refused. A phrase to replace must stand in the memory once: found nowhere,
the writer has the wrong memory or the wrong words; found twice, kura would have to guess
which one was meant — both are refused, saying where it looked or where it found them. A
section is found by its heading as the markdown parser reads headings (``kura.files.body``),
so a ``# comment`` in a code block is never one. A rename rewrites ``[[old]]``,
``[[old|label]]`` and ``[[old#part]]`` in prose only: ``[[old]]`` in a code block or a code
span is an example someone wrote, not a link, and is left as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Any

from kura.errors import StoreError
from kura.files.body import read as read_body
from kura.text.secrets import find_secret

_LINK_TAIL = r"(\.md)?(\s*(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?)\]\]"  # after a wiki link's target
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s")  # a list item: appended under one, it joins the list
POINTERS = ("supersedes", "superseded_by", "contradicted_by", "derived_from")  # frontmatter naming memories


@dataclass(frozen=True, slots=True)
class Place:
    """Where a phrase stands: the description, or a line of the body (from 1)."""

    field: str
    line: int = 0

    def __str__(self) -> str:
        if self.field == "description":
            return "the description"
        return f"body line {self.line}" if self.line else "the body"


def appended(body: str, text: str) -> str:
    """``text`` after the body: a paragraph of its own, or the next item of a list it ends with.
    A body that already ends with that paragraph (or list item) is returned as it is, so a
    retried append writes nothing twice."""
    text = text.strip("\n")
    kept = body.rstrip("\n")
    if not kept.strip():
        return text + "\n"
    if kept == text or kept.endswith("\n\n" + text) or (_ITEM.match(text) and kept.endswith("\n" + text)):
        return body
    last = kept.rsplit("\n", 1)[-1]
    joint = "\n" if _ITEM.match(last) and _ITEM.match(text) else "\n\n"
    return kept + joint + text + "\n"


def prepended(body: str, text: str) -> str:
    """``text`` at the top of the body (below the frontmatter), a paragraph of its own; a
    body that already opens with that paragraph is returned as it is."""
    rest = body.lstrip("\n")
    lead = body[: len(body) - len(rest)]
    text = text.strip("\n")
    if rest.rstrip("\n") == text or rest.startswith(text + "\n\n"):
        return body
    return lead + text + ("\n\n" + rest if rest.strip() else "\n")


def replaced(description: str, body: str, find: str, new: str, *, where: str) -> tuple[str, str, Place]:
    """(description, body, where it was) with the one occurrence of ``find`` made ``new``;
    StoreError when it occurs nowhere or more than once, naming the places."""
    places = [Place("description")] * description.count(find)
    lines = body.split("\n")
    on_lines = [Place("body", n) for n, line in enumerate(lines, start=1) for _ in range(line.count(find))]
    places += on_lines or [Place("body")] * body.count(find)  # a phrase across lines: the body, no line
    if len(places) == 1:
        if places[0].field == "description":
            return description.replace(find, new, 1), body, places[0]
        return description, body.replace(find, new, 1), places[0]
    shown = repr(find if len(find) <= 60 else find[:59] + "…") if not find_secret(find) else "the phrase"
    if not places:
        hint = _near(description, body, find)
        raise StoreError(
            f"{where}: {shown} is not in its description or body{hint}; nothing was changed — read the "
            "memory and send the phrase exactly as written"
        )
    listed = ", ".join(dict.fromkeys(map(str, places)))
    raise StoreError(
        f"{where}: {shown} occurs {len(places)} times ({listed}); nothing was changed — send a longer "
        "phrase that occurs once"
    )


def _near(description: str, body: str, find: str) -> str:
    """Where the phrase stands with other capitals or spacing, said as a hint ("" if nowhere)."""
    said = " ".join(find.split()).casefold()
    if said and said in " ".join(description.split()).casefold():
        return " (the description has it with other capitals or spacing)"
    if said and said in " ".join(body.split()).casefold():
        return " (the body has it with other capitals or spacing)"
    return ""


def sectioned(body: str, heading: str, text: str, *, where: str) -> tuple[str, bool]:
    """(body, added): the section under ``heading`` (``## Steps`` or ``Steps``; matched on its
    words, any capitals; with ``#`` marks, its level too) holding ``text`` instead, down to
    the next heading of its level or above; a heading the body lacks is added at the end,
    at the level given (two by default). Several such headings are refused, with their lines."""
    heading = heading.strip()
    marks = len(heading) - len(heading.lstrip("#"))
    wanted = " ".join(heading.lstrip("#").split()).casefold()
    if not wanted:
        raise StoreError(f"{where}: the heading has no words; name the section, e.g. 'Steps'")
    found = [h for h in read_body(body).headings if " ".join(h.text.split()).casefold() == wanted]
    found = [h for h in found if not marks or h.level == marks]
    if len(found) > 1:
        at = ", ".join(str(h.line) for h in found)
        raise StoreError(
            f"{where}: {len(found)} sections are headed {heading!r} (body lines {at}); "
            "nothing was changed — give the heading with its # marks, or edit the file"
        )
    block = text.strip("\n").split("\n")
    if not found:
        title = f"{'#' * (marks or 2)} {' '.join(heading.lstrip('#').split())}"
        return appended(body, "\n".join([title, "", *block])), True
    lines = body.split("\n")
    start = found[0].line  # the heading's index + 1: the section's first line
    later = [h.line - 1 for h in read_body(body).headings if h.line > start and h.level <= found[0].level]
    if later:
        return "\n".join([*lines[:start], "", *block, "", *lines[later[0] :]]), False
    return "\n".join([*lines[:start], "", *block]) + "\n", False


def relinked(body: str, old: str, new: str) -> str:
    """The body with its prose ``[[old]]`` links (with a label or a part) naming ``new``."""
    if "[[" not in body or old not in body:
        return body
    pattern = re.compile(r"\[\[(\s*)" + re.escape(old) + _LINK_TAIL)
    skipped = {n for first, after in read_body(body).verbatim for n in range(first, after)}
    lines = body.split("\n")
    for number, line in enumerate(lines):
        if number not in skipped and "[[" in line:
            lines[number] = pattern.sub(partial(_retarget, line=line, new=new), line)
    return "\n".join(lines)


def _retarget(match: re.Match[str], *, line: str, new: str) -> str:
    if line.count("`", 0, match.start()) % 2:  # inside a code span: an example, not a link
        return match.group(0)
    return f"[[{match.group(1)}{new}{match.group(2) or ''}{match.group(3)}]]"


def repointed(meta: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """The frontmatter keys that name ``old`` (``POINTERS``), naming ``new`` instead."""
    changes: dict[str, Any] = {}
    for key in POINTERS:
        value = meta.get(key)
        if isinstance(value, list) and old in [str(v) for v in value]:
            changes[key] = [new if str(v) == old else v for v in value]
        elif isinstance(value, str) and value.strip() == old:
            changes[key] = new
    return changes
