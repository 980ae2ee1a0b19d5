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
from collections import defaultdict
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from itertools import combinations

from kura.text.triggers import STOP_WORDS

_WORD = re.compile(r"[a-z0-9][a-z0-9_.\-/]*[a-z0-9]|[a-z0-9]")
_NEGATIONS = frozenset(
    "not never no don't dont doesn't isn't aren't won't can't cannot without avoid stop".split()
)
_EXTRA_STOP = frozenset("always please remember note ever from now on going forward keep mind".split())
SAME_SHARE = 0.8
REVISION_SHARE = 0.6
MAX_CHANGED = 2
FAMILY = 3  # a claim revising more live claims than this is one of a pattern (``pairs``)
CROWD = 400  # claims holding a word, past which it is no longer looked up in pairs (``pairs``)


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


def relate(new: tuple[AbstractSet[str], bool], old: tuple[AbstractSet[str], bool]) -> str:
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


def pairs(claims: Mapping[str, str], *, family: int = FAMILY) -> list[tuple[str, str]]:
    """Every pair of claims (by key, the smaller key first) where one revises the other —
    except the pairs of a claim that revises more than ``family`` others: that is one of
    many written to a pattern ("fact 12 about service-3 on port 8012"), not a correction,
    and a warning per pair would bury the corrections.

    Not every pair is compared. A revision shares at least two words and leaves out at most
    ``MAX_CHANGED`` of either side's, so the other claim holds at least two of any claim's
    ``MAX_CHANGED + 2`` rarest words: only claims in the overlap of two of those words' sets
    are compared, which keeps a store of thousands of claims from costing millions of
    comparisons; a claim's search stops once it has more than ``family`` partners. Two
    words each held by more than ``CROWD`` claims are not looked up together: a claim with
    three words rarer than that is still compared with every claim it could revise, and one
    whose words are nearly all everyone's ("fact number 12 about port 8012" among thousands
    of the same shape) is compared from its partners' side, where their rarer words narrow
    the search."""
    read = {key: (words(text), negated(text)) for key, text in claims.items()}
    holding: defaultdict[str, set[str]] = defaultdict(set)
    for key, (found, _) in read.items():
        for word in found:
            holding[word].add(key)
    partners: defaultdict[str, set[str]] = defaultdict(set)
    for key in sorted(read):
        rare = sorted(read[key][0], key=lambda w: (len(holding[w]), w))[: MAX_CHANGED + 2]
        seen = {key}
        for x, y in combinations(rare, 2):  # x is the rarer: past CROWD, so is every later x
            if len(holding[x]) > CROWD or len(partners[key]) > family:
                break
            for other in sorted((holding[x] & holding[y]) - seen):
                seen.add(other)
                if len(partners[key]) > family:
                    break
                if other not in partners[key] and relate(read[key], read[other]) == "revision":
                    partners[key].add(other)
                    partners[other].add(key)
    kept = {key for key, found in partners.items() if len(found) <= family}
    return sorted((key, other) for key in kept for other in partners[key] if other in kept and key < other)
