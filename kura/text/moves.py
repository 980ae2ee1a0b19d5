"""A move is a correction: "we moved the app off Heroku to Fly.io" replaces "the app runs on
Heroku".

The content-word rule (``kura.text.claim_match``) calls a claim a revision of another when
the two say nearly the same words with one or two changed. A person reporting a move says
more than that: the old value, the new one and the verb of moving ("moved X off A to B",
"switched from A to B", "migrated from A to B", "replaced A with B", "dropped A for B",
"B instead of A", "no longer A, now B"), and the claim they revise said only the old value.
Shared words alone would call the pair different. So a move is read by its shape: the
sentence names what was left (A) and what replaced it (B), and it revises the memory that
says A (at least half the words of A that B does not also hold) and none of B — about the
same subject: a word outside A and B shared with the memory ("the app"), or, when the
sentence names no subject at all ("we switched from Heroku to Fly.io"), the one live memory
naming A. The new value of "B instead of A" is the one word before "instead": the words
before it are the subject ("the frontend uses").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kura.text.claim_match import words

_PHRASE = r"[^,;:()]+?"
# the new value runs to the first word that starts saying something else of the move
_TAIL = (
    r"[^,;:()]+?(?=\s+(?:for|in|on|at|since|last|this|a|about|because|as|when|after|before|so|and|but|with"
    r"|from|during|until|over|by|yesterday|today|now|recently|ago)\b|\s*[,;:()]|[.!?]*\s*$)"
)
# "it runs on", "we're on now": what leads to the new value of "no longer A, now B"
_LEAD = (
    r"(?:(?:it|we|they|that|now|but)(?:['\u2019](?:s|re))?\s+)*"
    r"(?:(?:is|are|runs?|lives?|uses?|sits?|hosted|deployed|on|in|at|with|to)\s+)*"
)
_SHAPES = (
    re.compile(
        r"\b(?:mov|migrat|switch|port|transition|shift|chang|rehost|relocat|swapp|convert)\w*\b"
        rf"(?P<subject>[^,;:]*?)\s(?:off(?:\s+of)?|away\s+from|from|out\s+of)\s+(?P<old>{_PHRASE})"
        rf"\s+(?:to|onto|over\s+to|into|in\s+favou?r\s+of|for)\s+(?P<new>{_TAIL})",
        re.I,
    ),
    re.compile(rf"\breplac\w*\s+(?P<old>{_PHRASE})\s+(?:with|by)\s+(?P<new>{_TAIL})", re.I),
    re.compile(
        rf"\b(?:dropp|ditch|abandon|left|leav|quit)\w*\s+(?P<old>{_PHRASE})\s+for\s+(?P<new>{_TAIL})", re.I
    ),
    re.compile(rf"(?P<new>\S+)\s+instead\s+of\s+(?P<old>{_TAIL})", re.I),
    re.compile(
        rf"\bno\s+longer\s+(?P<old>{_PHRASE})\s*(?:[,;:]|\s+but\s|\s+[-\u2013\u2014]+\s)\s*"
        rf"(?:and\s+)?{_LEAD}(?P<new>{_TAIL})",
        re.I,
    ),
)


@dataclass(frozen=True, slots=True)
class Move:
    """What a sentence says was left and what replaced it, as content words."""

    old: frozenset[str]  # words of what was left that the new value does not hold
    new: frozenset[str]  # words of the new value that the old one does not hold
    subject: frozenset[str]  # the sentence's other words: what moved


def move(sentence: str) -> Move | None:
    """The move ``sentence`` reports, if it reports one with an old and a new value."""
    for shape in _SHAPES:
        found = shape.search(sentence)
        if found is None:
            continue
        old, new = words(found.group("old")), words(found.group("new"))
        old, new = old - new - _VERBS, new - old - _VERBS
        if not old or not new:
            continue
        rest = sentence[: found.start()] + " " + sentence[found.end() :]
        if "subject" in found.groupdict():
            rest += " " + found.group("subject")
        return Move(frozenset(old), frozenset(new), frozenset(words(rest) - old - new - _VERBS))
    return None


def moved(claim: str, memories: Iterable[tuple[str, str]]) -> str | None:
    """The memory (slug, its claim) that ``claim`` moves away from, if it reports a move (see
    the module docstring); None when it names no subject and more than one memory names what
    was left, or none does."""
    found = move(claim)
    if found is None:
        return None
    naming = []
    for slug, text in memories:
        held = words(text)
        if 2 * len(found.old & held) >= len(found.old) and not found.new & held:
            if found.subject & held:
                return slug
            naming.append(slug)
    return naming[0] if len(naming) == 1 and not found.subject else None


# the verbs of moving and the words round them: said of any move, so they tell no subject
_VERBS = frozenset(
    "moved move migrated migrate switched switch ported port transitioned shifted changed change rehosted "
    "relocated swapped converted replaced replace dropped ditched abandoned left quit longer now "
    "last month week year ago yesterday today recently finally already i ve we're".split()
)
