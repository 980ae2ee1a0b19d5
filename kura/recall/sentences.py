"""A memory's first sentences, each embedded on its own beside the whole memory's vector.

The whole memory's vector (name, description, body) is an average of everything it says,
and its headline's (``kura.recall.headline``) is the average of what it is about. A
question in other words often matches one thing the memory says: "If someone slips on our
shop floor and sues, are we protected?" is one sentence of the insurance memory ("A
customer injury claim without cover could close the business"), diluted in the whole by
the insurer, the sums insured, the policy number and its renewal date. A sentence on its
own is nearer that question than the whole is, so a memory's cosine is lifted towards its
best sentence's when that is higher, never lowered, as it is towards its headline's
(``headline.lift``: ``cosine + LIFT × max(best sentence − cosine, 0)``).

What counts as a sentence of a body: its paragraphs, list items and headings, a wrapped
line joined to its paragraph; code blocks, tables, rules, HTML comments and lines that only
link (``Related: [[a]], [[b]]``, ``See also: [Oven](oven.md)``) left out, and a label that
opens a line (``**Why:**``, ``*How to apply*:``, ``Why:``) taken off: they say the same in
every memory of a store and nothing about this one. Each block is cut after ``.``, ``!`` or
``?`` and a space unless a small letter follows ("e.g. the wide one"), and after a
full-width ``。！？``. A sentence of fewer than ``WORDS`` words is none, and one the
description says whole is left out (the headline has it). A memory with at least ``LEAST``
others has the vectors of its first ``FIRST``, each cut at about ``TOKENS`` tokens; one with
fewer is barely diluted (distill-kura's description, Why and How to apply; a chat's one
observation) and has none, so its store pays nothing for them. Every pattern reads one line
or one block, and a link's parts are bounded: a crafted body of 64k blank lines, or of 32k
``[[``, costs milliseconds, not the 24 s and 38 s that patterns running across lines or to
a line's end took.

Measured on bench/recall_quality.py, MRR over every answerable question, before → after,
LIFT and LEAST chosen on the A halves of the bakery and padded sets (docs/recall.md has the
table and what was tried): bakery 0.915 → 0.928, its paraphrases 0.848 → 0.871; with 2,000
distractors 0.746 → 0.755; the team set, blind to the rule, 0.773 → 0.775 and 0.703 → 0.707
with distractors; the chat sets (no memory of three sentences) unchanged. Recall's floor
does not read the lift: read, the bakery refused 19 of its 30 unrelated questions, not 21.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kura.text import scripts

LIFT = 0.25  # how far a memory's cosine moves towards its best sentence's, when that is higher
FIRST = 3  # sentences of a body embedded, from its start
LEAST = 3  # ... when it has at least this many beyond its description (fewer: barely diluted)
WORDS = 3  # a sentence of fewer words is no sentence (a heading's label, "See below.")
TOKENS = 32  # a sentence is cut after about this many tokens
LOOK = 12  # sentences of a body compared with its description, at most (each costs a search of it)

# Each pattern reads one line or one block, never ``\s`` across lines: ``^\s*`` in a pattern
# over the whole body took 24 s on 64k blank lines.
# a link's text holds no bracket and its address no parenthesis or space, so a search from
# each "[" stops at the next: ``[^\]]*`` from each of 30,000 "[[" took 38 s
_LINK = re.compile(r"\[\[[^\[\]\n]{0,200}\]\]|\[[^\[\]\n]{0,200}\]\([^()\s]{0,500}\)")  # [[a]], [a](b)
_ALIAS = re.compile(r"\[\[[^\[\]|\n]{0,200}\|([^\[\]\n]{0,200})\]\]|\[([^\[\]\n]{0,200})\]\([^()\s]{0,500}\)")
_ITEM = re.compile(r"(?:[-*+]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")  # a list item's marker
_MARKED = re.compile(r"(\*\*|__|\*|_)[^*_\n]{1,40}?(?:[:：]\1|\1[:：])[ \t]*")  # **Why:**, *Why*:
_PLAIN = re.compile(r"[^\s:：*_]{1,24}(?: [^\s:：]{1,24}){0,2}[:：][ \t]+(?=\S)")  # How to apply: ...
_RULE = re.compile(r"(?:[-*_][ \t]*){3,}")
_MARKS = re.compile(r"\*\*|__|\[\[|\]\]|`")
_STOP = re.compile(r"(?:(?<=[.!?।؟])|(?<=[.!?][\"'”’)\]]))\s+|(?<=[。！？])")


def of(body: str, description: str = "") -> list[str]:
    """The sentences of ``body`` (a memory's markdown, frontmatter excluded) that are
    embedded on their own: its first ``FIRST`` that ``description`` does not say whole (the
    headline has those), and none unless it has at least ``LEAST`` such."""
    told = _squash(description)
    said: list[str] = []
    looked = 0
    for block in _blocks(_uncommented(body)):
        for piece in _sentences(block):
            if _words(piece) < WORDS:
                continue
            looked += 1
            if _squash(piece) not in told:
                said.append(piece)
            if len(said) == max(FIRST, LEAST) or looked == LOOK:
                return [cut(piece, TOKENS) for piece in said[:FIRST]] if len(said) >= LEAST else []
    return [cut(piece, TOKENS) for piece in said[:FIRST]] if len(said) >= LEAST else []


def _blocks(body: str) -> Iterator[str]:
    """The paragraphs, list items and headings of ``body``, each as one line of plain text:
    a wrapped line joined to its paragraph; code blocks, tables, rules and lines that only
    link (``Related: [[a]], [[b]]``) left out; a label opening a line (``**Why:**``, ``How to
    apply:``) taken off, as it says the same in every memory of a store."""
    lines: list[str] = []
    fenced = False
    for raw in body.splitlines():
        line = raw.strip()
        fence = line.startswith(("```", "~~~"))
        fenced = fenced != fence
        if fenced or fence or not line or line.startswith("|") or _RULE.fullmatch(line) or _linking(line):
            yield from _joined(lines)
            continue
        heading = line.startswith("#")
        line = line.lstrip("#> \t")
        item = _ITEM.match(line)
        line = line[item.end() :] if item else line
        label = _MARKED.match(line) or _PLAIN.match(line)
        if heading or item or label:  # a block of its own
            yield from _joined(lines)
        lines.append(line[label.end() :] if label else line)
        if heading:  # never joined to what follows it
            yield from _joined(lines)
    yield from _joined(lines)


def _joined(lines: list[str]) -> Iterator[str]:
    """The lines gathered so far as one block (and none gathered after)."""
    if lines:
        yield _MARKS.sub("", _ALIAS.sub(lambda m: m.group(1) or m.group(2) or "", " ".join(lines)))
        lines.clear()


def _linking(line: str) -> bool:
    """Whether ``line`` only links to other memories or pages: its links taken out, a label
    and fewer than ``WORDS`` words are left."""
    if _LINK.search(line) is None:
        return False
    rest = re.sub(r"[^\w\s]", " ", _LINK.sub(" ", line).split(":", 1)[-1].split("：", 1)[-1])
    return _words(rest) < WORDS


def _sentences(block: str) -> list[str]:
    """``block`` cut after ``.``, ``!`` or ``?`` and a space (not before a small letter:
    "e.g. the wide one"), and after a full-width ``。！？``."""
    out: list[str] = []
    for piece in _STOP.split(block):
        piece = piece.strip()
        if not piece:
            continue
        if out and piece[0].islower():
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def _uncommented(body: str) -> str:
    """``body`` without its HTML comments (an unclosed one: to the end)."""
    kept: list[str] = []
    at = 0
    while (start := body.find("<!--", at)) != -1:
        kept.append(body[at:start])
        end = body.find("-->", start + 4)
        at = len(body) if end == -1 else end + 3
    kept.append(body[at:])
    return "".join(kept)


def _squash(text: str) -> str:
    return " ".join(text.split()).rstrip(".!?。！？ ").lower()


def _words(piece: str) -> int:
    """Words in ``piece``; in Chinese or Japanese, where none are spaced, two characters one."""
    spaced = len(piece.split())
    return max(spaced, len(piece) // 2) if scripts.has_cjk(piece) else spaced


def cut(text: str, tokens: int) -> str:
    """``text`` cut after about ``tokens`` tokens: a CJK character is about one, four other
    characters about one (a long text of mixed Japanese and English would otherwise cost as
    much as a body)."""
    units = 0.0
    for at, char in enumerate(text):
        units += 1.0 if scripts.has_cjk(char) else 0.25
        if units > tokens:
            return text[:at]
    return text
