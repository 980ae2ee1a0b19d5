"""Classed segments: the raw material the gate believes, and nothing else.

Every piece of a transcript is filed under who produced it, because that decides what it
may license in a memory:

    USER  the human's own words     -> "they decided", "they asked"
    TOOL  machine output            -> numbers (the only source)
    ACT   a tool that was invoked   -> "this was done"
    SELF  the agent's own prose     -> a judgement in the first person, never a bare fact

The journal adapters produce ``Segment`` values; the gate and the final-surface floor only
ever consume them. Matching is verbatim after one normalisation — runs of whitespace
(including non-breaking and zero-width spaces) become one space and the ends are stripped —
because transcripts re-wrap lines and a model copying a quote re-flows it, and neither makes
a quote less real. Nothing else is forgiven: case, punctuation and wording must match, or
the quote is a paraphrase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CLASSES: tuple[str, ...] = ("USER", "TOOL", "ACT", "SELF")

_SPACE = re.compile(r"[\s\u00a0\u200b\u2000-\u200a\u202f\u205f\u3000\ufeff]+")


@dataclass(frozen=True, slots=True)
class Segment:
    """One classed stretch of raw material: ``cls`` is one of ``CLASSES``."""

    cls: str
    text: str
    session: str = ""
    turn: str = ""
    # where and when it was said (file line, the record's timestamp): attribution for spans,
    # not part of what a segment *is* — two readings of one line compare equal
    line: int = field(default=0, compare=False)
    when: str = field(default="", compare=False)


def normalise(text: str) -> str:
    """``text`` with every run of whitespace folded to one space and the ends stripped."""
    return _SPACE.sub(" ", text).strip()


def comment_safe(text: str) -> str:
    """``text`` unable to close the HTML comment a draft keeps its evidence in."""
    return text.replace("-->", "--&gt;").replace("--!>", "--!&gt;")


def from_comment(text: str) -> str:
    """The words ``comment_safe`` kept, as they were said (the floor checks those)."""
    return text.replace("--&gt;", "-->").replace("--!&gt;", "--!>")
