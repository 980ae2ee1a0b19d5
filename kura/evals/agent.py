"""The simulated agent: one fixed reading procedure, the same for every arm.

The eval has no model, so something has to stand in for one, and the stand-in decides
whether the comparison is fair. It reads whatever text it was given — kura's context, the
tail of the raw history, or nothing — with one procedure, and that procedure knows
nothing about kura's templates beyond what any reader would: words around a command say
whether it worked.

It looks for the task's candidate commands (the obvious one and every one that ever
worked) line by line, longest first so ``npx prettier --write src`` is not also read as
``prettier --write src``. Each mention is judged by the words right around it: a failure
word after it ("fails", "error", "not found") or a refusal right before it ("instead of",
"not") makes it a failure; a success word after it ("works", "passed", "ready") or an
instruction right before it ("use", "run") makes it an endorsement; anything else says
nothing. The last endorsement wins, and a later failure of the same command takes it back
— the newest word is the one believed.

Text under the headings kura gives to history and hearsay ("On record, not current",
"Said before") is skipped: it is offered as evidence that something was once true or once
said, never as what to do now, and an agent that acted on it would be acting on a fact
kura had withdrawn. The raw window has no such headings, so it is read whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from kura.recall.context import HEADINGS

_FAILED_AFTER = re.compile(
    r"\b(?:fail|fails|failed|failure|error|errors|not found|no rule|cannot|missing|no longer"
    r"|does not exist|no such file)\b",
    re.I,
)
_WORKED_AFTER = re.compile(
    r"\b(?:works|work|worked|passed|succeeded|success|successfully|ready|built|done|ok)\b", re.I
)
_REFUSED_BEFORE = re.compile(r"\b(?:not|instead of|never|no longer|don't|stop)\W*$", re.I)
_TOLD_BEFORE = re.compile(r"\b(?:use|run|using|with)\W*$", re.I)


def skipped_headings() -> tuple[str, ...]:
    """The headings whose sections are evidence, not current fact (read from kura's own
    context module, so a reworded heading is still recognised)."""
    return (HEADINGS["record"], HEADINGS["spans"])


def known_headings() -> tuple[str, ...]:
    return tuple(HEADINGS.values())


def stated(text: str, candidates: Iterable[str]) -> str | None:
    """The candidate command ``text`` states as the one that works, or None."""
    values = sorted(set(candidates), key=lambda v: (-len(v), v))
    if not text or not values:
        return None
    pattern = re.compile(r"(?<![\w\-/])(?:" + "|".join(re.escape(v) for v in values) + r")(?![\w\-/])", re.I)
    canonical = {v.lower(): v for v in values}
    skip, headings = skipped_headings(), known_headings()
    believed: str | None = None
    skipping = False
    for line in text.splitlines():
        bare = line.strip()
        if bare in headings:
            skipping = bare in skip
            continue
        if skipping:
            continue
        for value, verdict in judged(line, pattern, canonical):
            if verdict == "worked":
                believed = value
            elif verdict == "failed" and value == believed:
                believed = None
    return believed


def judged(line: str, pattern: re.Pattern[str], canonical: Mapping[str, str]) -> list[tuple[str, str]]:
    """Each mention on ``line``: (the command, "worked" | "failed" | "")."""
    found = list(pattern.finditer(line))
    out = []
    for i, match in enumerate(found):
        start = found[i - 1].end() if i else 0
        end = found[i + 1].start() if i + 1 < len(found) else len(line)
        before, after = line[start : match.start()], line[match.end() : end]
        if _FAILED_AFTER.search(after) or _REFUSED_BEFORE.search(before):
            verdict = "failed"
        elif _WORKED_AFTER.search(after) or _TOLD_BEFORE.search(before):
            verdict = "worked"
        else:
            verdict = ""
        out.append((canonical[match.group(0).lower()], verdict))
    return out


def first_try(text: str, candidates: Iterable[str], naive: str) -> tuple[str, str | None]:
    """What the agent runs first, and the value it took as known (None: it knew nothing
    and tried the obvious command)."""
    known = stated(text, candidates)
    return (known or naive), known
