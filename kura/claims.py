"""When two claims are one claim, and when one replaces the other.

Decided on content words, never on embeddings: an embedder puts a rewording of a fact
and its replacement equally close ("we run the tests with make test" against "… cargo
test" scores like a paraphrase does), because what differs is one word, and one word is
exactly what a comparison of content words sees.

- **same** (a restatement, which reinforces): the new claim's content words are all in
  the old one, or the two share at least 80% of their words, with the same polarity;
- **revision** (same subject, new value, which supersedes): they share at least two
  content words and 60% of the shorter claim, and each side keeps at most two words of its
  own — or they say the same words with opposite polarity ("always" against "never");
- **different** otherwise, which includes a claim that merely adds detail.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kura.trim import STOP_WORDS

_WORD = re.compile(r"[a-z0-9][a-z0-9_.\-/]*[a-z0-9]|[a-z0-9]")
_NEGATIONS = frozenset(
    "not never no don't dont doesn't isn't aren't won't can't cannot without avoid stop".split()
)
_EXTRA_STOP = frozenset("always please remember note ever from now on going forward keep mind".split())
SAME_SHARE = 0.8
REVISION_SHARE = 0.6
MAX_CHANGED = 2


def words(text: str) -> set[str]:
    """Content words, lower-cased, a plural ``s`` folded away."""
    out: set[str] = set()
    for word in _WORD.findall(text.lower().replace("\u2019", "'")):
        word = word.rstrip(".")
        if not word or word in STOP_WORDS or word in _EXTRA_STOP or word in _NEGATIONS:
            continue
        out.add(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return out


def negated(text: str) -> bool:
    """Whether the claim is a negative one ("never …", "don't …", "not …")."""
    return any(
        w in _NEGATIONS or w == "never" for w in re.findall(r"[a-z']+", text.lower().replace("\u2019", "'"))
    )


def relation(new: str, old: str) -> str:
    """``same``, ``revision`` or ``different`` (see the module docstring)."""
    return relate((words(new), negated(new)), (words(old), negated(old)))


def relate(new: tuple[set[str], bool], old: tuple[set[str], bool]) -> str:
    """``relation`` of two claims already read into (content words, negated) — for a caller
    comparing many pairs, which should read each claim once."""
    (a, new_negated), (b, old_negated) = new, old
    if len(a) < 2 or len(b) < 2:
        return "different"
    shared = a & b
    flipped = new_negated != old_negated
    if not flipped and (a <= b or len(shared) / len(a | b) >= SAME_SHARE):
        return "same"
    if len(shared) < 2 or len(shared) / min(len(a), len(b)) < REVISION_SHARE:
        return "different"
    if flipped and len(a - b) <= MAX_CHANGED and len(b - a) <= MAX_CHANGED:
        return "revision"
    if a - b and b - a and len(a - b) <= MAX_CHANGED and len(b - a) <= MAX_CHANGED:
        return "revision"
    return "different"


def revised(claim: str, memories: Iterable[tuple[str, str]]) -> str | None:
    """The first memory (slug, its claim) that ``claim`` revises, if any."""
    for slug, text in memories:
        if relation(claim, text) == "revision":
            return slug
    return None
