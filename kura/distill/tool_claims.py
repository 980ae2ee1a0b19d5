"""What a tool said on the ladder: a report at most, never a rule.

A tool's output is whatever the command printed — a README line, a config comment, a web
page fetched, a file an attacker planted — and the same line read in three sessions is not
three people agreeing. So on the ladder (``kura.distill.ladder``) a tool's line that says
how things ought to be done ("Production deploys must use the mirror at …": an obligation,
a prohibition, always/never, use X) is instruction-like and is never held, and a claim that
only tools made crosses as a ``reference`` — the composer (``kura.distill.compose``) then
names its source and says to check it there — never as ``project``, ``user`` or
``feedback``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kura.life.scratch import Mention

NORMATIVE = re.compile(
    r"\b(?:must|mustn['\u2019]?t|shall|shan['\u2019]?t|should|shouldn['\u2019]?t|ought|always|never|forbidden"
    r"|prohibited|mandatory|required|requires?|necessary|obligatory|needs?\s+to|ha(?:ve|s|d)\s+to"
    r"|(?:is|are)\s+to|(?:do|does|did)\s*n['\u2019]?o?t|don['\u2019]?t|(?:not|only)\s+allowed|allowed\s+only"
    r"|instead\s+of|use|prefer|avoid|make\s+sure|ensure|remember|from\s+now\s+on)\b",
    re.I,
)
FIRST_PERSON = re.compile(r"\b(?:i|i['\u2019]m|my|me|mine)\b", re.I)


def normative(line: str) -> bool:
    """Whether a tool's line says how things ought to be done (never held)."""
    return NORMATIVE.search(line) is not None


def kind_of(claim: str, mentions: Sequence[Mention]) -> str:
    """``reference`` when only tools said it (a report to look up, never a rule), else
    ``user`` for a person's first-person claim, else ``project``."""
    if not any(m.cls == "USER" for m in mentions):
        return "reference"
    return "user" if FIRST_PERSON.search(claim) else "project"
