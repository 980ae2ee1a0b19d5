"""Where a sentence ends, in the words people type to an agent.

A full stop ends a sentence only when a space or the end of the text follows it, so a dot
inside a word never does: ``Fly.io``, ``node.js``, ``v2.1.3``, ``3.14``,
``https://fly.io/docs`` and ``db-staging.internal`` are each one word of one sentence.
(Splitting at every dot cut "We moved the app off Heroku to Fly.io last month" into "…
to Fly." and "io last month.", and the correction in it was never read.) A dot followed by a
space still does not end one after an abbreviation that is always followed by more
(``e.g.``, ``i.e.``, ``vs.``, ``cf.``, ``Dr.``…), nor after the number that opens a list
item (``1. Install it``); after one that may end a sentence as well (``etc.``, ``a.m.``,
``Inc.``…) or an ellipsis, it ends one only when a capital letter follows. ``!`` and ``?``
always end one, and so do a line break and the CJK marks 。！？, which need no space.

A careful rule rather than a library: the ones that do this well (pysbd, sentencex) are one
more dependency of a local tool for a job a few lines do, and this one returns verbatim
slices of the text, which the gate's quote check needs.
"""

from __future__ import annotations

import re

# a terminator with the closing quotes or brackets after it, then a space or the end; a CJK
# mark needs no space; a line break ends whatever is open
_END = re.compile(r"[.!?]+[\"')\]\u201d\u2019\u00bb]*(?=\s|$)|[\u3002\uff01\uff1f]+[\u300d\u300f\uff09]*|\n")
# always followed by more of the same sentence
_NEVER_LAST = frozenset(
    "e.g i.e eg ie vs cf viz approx ca dr mr mrs ms prof st mt sgt fig figs eq no nos ref refs "
    "vol pp ch sec incl esp resp".split()
)
# may end a sentence: one ends there when a capital letter follows
_MAYBE_LAST = frozenset("etc al a.m p.m am pm inc ltd co corp jr sr bros dept est".split())
_WORD_BEFORE = re.compile(r"(\S+)$")
_NEXT = re.compile(r"\s*(\S)")
_LIST_NUMBER = re.compile(r"\d{1,3}|[a-z]")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, each a verbatim slice of it, stripped, in order."""
    out: list[str] = []
    start = 0
    for end in _END.finditer(text):
        if end.group() != "\n" and not _ends(text, start, end):
            continue
        piece = text[start : end.end()].strip()
        if piece:
            out.append(piece)
        start = end.end()
    rest = text[start:].strip()
    return [*out, rest] if rest else out


def _ends(text: str, start: int, end: re.Match[str]) -> bool:
    """Whether the terminator ``end`` ends the sentence begun at ``start``."""
    mark = end.group().rstrip("\"')]\u201d\u2019\u00bb")
    if mark not in (".", "...", "\u2026") or end.group()[0] in "\u3002\uff01\uff1f":
        return True
    before = _WORD_BEFORE.search(text, start, end.start())
    word = before.group(1).lower().strip("(\"'\u201c\u2018") if before else ""
    if mark == "." and word in _NEVER_LAST:
        return False
    opening = before is not None and not text[start : before.start()].strip()
    if mark == "." and opening and _LIST_NUMBER.fullmatch(word):
        return False  # "1. Install it": the number of a list item, not a sentence
    if mark == "." and word not in _MAYBE_LAST and not _initials(word):
        return True
    after = _NEXT.match(text, end.end())
    return after is None or not after.group(1).islower()


def _initials(word: str) -> bool:
    """``u.s`` or ``a.m``: single letters joined by dots (the last dot is the terminator)."""
    return len(word) >= 3 and all(len(part) == 1 and part.isalpha() for part in word.split("."))
