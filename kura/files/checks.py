"""What a file's text says is wrong with it, even though it reads: checks on bytes and lines.

A reader that tolerates everything must say what it tolerated. These are the problems that
no parser complains about but that change what a person or an agent is shown:

* **NUL bytes** — a binary file saved as ``.md``, or a save cut short by a crash on some
  file systems; they travel into prompts and break terminals and JSON consumers.
* **Git conflict markers** — a merge left both sides in the file (``<<<<<<<``,
  ``=======``, ``>>>>>>>`` at the start of lines), and both are read as one memory. A lone
  ``=======`` is a markdown heading underline, so it counts only beside the other two.
* **An unclosed ``<!--`` or code fence in MEMORY.md** — every line after it is hidden from
  the map, silently. The index is read here line by line with the same rules as
  ``kura.files.memory_index`` (a fence inside a comment and a comment inside a fence do not count).

Each check returns findings (path:line, what, what to do) and never raises.
"""

from __future__ import annotations

import re

from kura.files.finding import Finding
from kura.files.memory_index import Index, parse_index

_OURS = re.compile(r"<{7,}(?:[ \t]|$)")
_MIDDLE = re.compile(r"={7,}[ \t]*$")
_THEIRS = re.compile(r">{7,}(?:[ \t]|$)")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
CONFLICT = (
    "a git merge conflict left in the file {where} (<<<<<<<, =======, >>>>>>>): both sides are read "
    "as one — resolve it and remove the markers"
)
NUL = "holds NUL bytes (the first on this line): a binary file or a broken save — remove them"


def nul_bytes(data: bytes, path: str) -> list[Finding]:
    at = data.find(b"\x00")
    return [] if at < 0 else [Finding(path, data.count(b"\n", 0, at) + 1, NUL)]


def conflict_markers(text: str, path: str, *, examples: bool = True) -> list[Finding]:
    """One finding at the first merge conflict left in ``text``, naming the lines of each."""
    found = conflicts(text, examples=examples)
    return [Finding(path, found[0][0], conflict_message(found))] if found else []


def conflict_message(found: list[tuple[int, int]]) -> str:
    lines = ", ".join(f"{start}–{end}" if end != start else str(start) for start, end in found)
    many = len(found) > 1 or any(end != start for start, end in found)
    return CONFLICT.format(where=f"at line{'s' if many else ''} {lines}")


def conflicts(text: str, *, examples: bool = True) -> list[tuple[int, int]]:
    """(first, last) line of every merge conflict left in ``text``: ``<<<<<<<``, then
    ``=======``, then ``>>>>>>>`` (seven or more, as git's marker size allows), each at the
    start of a line. A conflict is read to its end whatever fences its sides hold (each
    side may open one). With ``examples``, one inside a code fence is taken for an example
    a memory shows (a note on resolving conflicts); MEMORY.md has none to show
    (``examples=False``): there every such block is a conflict."""
    if not examples:
        return _index_conflicts(text)
    if "<<<<<<<" not in text:  # the common case, at no cost
        return []
    found: list[tuple[int, int]] = []
    fence, start, middle = "", 0, False
    for number, line in enumerate(text.split("\n"), start=1):
        if start:
            if _MIDDLE.match(line):
                middle = True
            elif middle and _THEIRS.match(line):
                found.append((start, number))
                start, middle = 0, False
            elif _OURS.match(line):
                start, middle = number, False  # an unfinished block, then another
            continue
        if fence and examples:
            fence = "" if _closes(fence, line) else fence
            continue
        opened = _FENCE.match(line)
        if opened is not None:
            fence = opened.group(1)
        elif _OURS.match(line):
            start, middle = number, False
    return found


def _index_conflicts(text: str) -> list[tuple[int, int]]:
    """MEMORY.md's conflicts: a whole block as ``conflicts`` reads it, and any marker line
    alone (``=======``, ``>>>>>>> theirs`` with no opening line): an index has no example
    to show and no heading to underline, so a stray marker is what a half-resolved merge
    leaves, and both of its sides would reach every prompt."""
    if "<<<<<<<" not in text and "=======" not in text and ">>>>>>>" not in text:
        return []
    blocks = conflicts(text, examples=True)  # a block in a fence too: its lines are markers below
    inside = {n for start, end in blocks for n in range(start, end + 1)}
    stray = [
        (n, n)
        for n, line in enumerate(text.split("\n"), start=1)
        if n not in inside and (_OURS.match(line) or _MIDDLE.match(line) or _THEIRS.match(line))
    ]
    return sorted(blocks + stray)


def hidden_in_index(text: str, path: str) -> list[Finding]:
    """An HTML comment or code fence in MEMORY.md that is opened and never closed, as the
    index's own parser sees it (so kura's escaped ``\\<!--`` is no comment)."""
    return hidden_in_parsed(parse_index(text), path)


def hidden_in_parsed(index: Index, path: str) -> list[Finding]:
    """``hidden_in_index`` of an index already parsed (a big index is parsed once)."""
    if index.unclosed is None:
        return []
    what, line = index.unclosed
    total = len(index.lines)
    if what == "<!--":
        return [_hidden(path, line, total, "an HTML comment opened here (<!--)", "-->")]
    return [_hidden(path, line, total, f"a code fence opened here ({what})", f"a {what} line")]


def _closes(fence: str, line: str) -> bool:
    return re.match(rf"^\s{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", line) is not None


def _hidden(path: str, line: int, total: int, what: str, closer: str) -> Finding:
    after = total - line
    lines = "the line after it is" if after == 1 else f"the {after} lines after it are"
    return Finding(
        path, line, f"{what} is never closed, so {lines} hidden from the map — close it with {closer}"
    )
