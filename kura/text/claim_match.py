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
from functools import lru_cache, reduce
from itertools import combinations
from operator import or_
from typing import Any

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
_FEW = 64  # claims one look-up may find that could revise a claim, past which it is a pattern's


def words(text: str) -> set[str]:
    """Content words, lower-cased, a plural ``s`` folded away."""
    out = {_folded(word) for word in _WORD.findall(text.lower().replace("\u2019", "'"))}
    out.discard("")
    return out


@lru_cache(maxsize=1 << 16)
def _folded(word: str) -> str:
    """One word as ``words`` keeps it, or "" for a word it drops (asked once per word: a big
    store says the same few thousand words again and again)."""
    word = word.rstrip(".")
    if not word or word in STOP_WORDS or word in _EXTRA_STOP or word in _NEGATIONS:
        return ""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def negated(text: str) -> bool:
    """Whether the claim is a negative one ("never …", "don't …", "not …")."""
    return not _NEGATIONS.isdisjoint(re.findall(r"[a-z']+", text.lower().replace("\u2019", "'")))


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
    if len(claims) < 2:
        return []
    keys = sorted(claims)  # a claim is its number here: its place in key order
    read = [(words(claims[key]), negated(claims[key])) for key in keys]
    holding: defaultdict[str, set[int]] = defaultdict(set)
    for number, (found, _) in enumerate(read):
        for word in found:
            holding[word].add(number)
    rank = {word: n for n, word in enumerate(sorted(holding, key=lambda w: (len(holding[w]), w)))}
    rarest = [sorted(found, key=rank.__getitem__)[: MAX_CHANGED + 2] for found, _ in read]
    starts, near, crowded = _near(read, holding, rarest)
    starts, crowded = starts.tolist(), crowded.tolist()
    partners: defaultdict[int, set[int]] = defaultdict(set)
    for key in range(len(keys)):
        if starts[key] == starts[key + 1] and not crowded[key]:
            continue  # nothing it could revise: its look-ups would find no partner
        # in key order, as the look-ups are; a claim with many that could (one of a pattern)
        # looks them up as they come, and stops at its first few partners
        could = None if crowded[key] else near[starts[key] : starts[key + 1]].tolist()
        seen = {key}
        for x, y in combinations(rarest[key], 2):  # x is the rarer: past CROWD, so is every later x
            if len(holding[x]) > CROWD or len(partners[key]) > family:
                break
            hx, hy = holding[x], holding[y]
            for other in sorted((hx & hy) - seen) if could is None else could:
                if other in seen or other not in hx or other not in hy:
                    continue
                seen.add(other)
                if len(partners[key]) > family:
                    break
                if other not in partners[key] and relate(read[key], read[other]) == "revision":
                    partners[key].add(other)
                    partners[other].add(key)
    kept = {key for key, found in partners.items() if len(found) <= family}
    return sorted(
        (keys[key], keys[other]) for key in kept for other in partners[key] if other in kept and key < other
    )


def _near(
    read: list[tuple[set[str], bool]], holding: Mapping[str, set[int]], rarest: list[list[str]]
) -> tuple[Any, Any, Any]:
    """For each claim, the claims ``pairs`` would look up for it that could revise it at all,
    as (starts, claims, crowded): claim k's are ``claims[starts[k]:starts[k + 1]]``, in
    order, unless ``crowded[k]`` (more than ``_FEW`` in one look-up: ``pairs`` looks those up
    itself). A revision leaves out at most ``MAX_CHANGED`` of either side's words, and a
    word's bit (one of 128) missing from the other's bits is a word missing from it, so a
    pair whose bits differ in more than twice that many places is none. Compared a whole
    look-up set at a time (numpy): 20,000 lines of one shape cost two million ``relate``
    calls before, and leave a few dozen candidates now."""
    import numpy as np

    bit = {word: 1 << n % 128 for n, word in enumerate(holding)}
    lanes = []
    for found, _ in read:
        mask = reduce(or_, map(bit.__getitem__, found), 0)
        lanes.append((mask & (1 << 64) - 1, mask >> 64))
    masks = np.array(lanes, dtype=np.uint64).reshape(len(read), 2)
    looking: defaultdict[str, list[int]] = defaultdict(list)  # a word -> the claims looking it up
    for number, words_looked_up in enumerate(rarest):
        for word in words_looked_up:
            if 1 < len(holding[word]) <= CROWD and len(read[number][0]) >= 2:
                looking[word].append(number)
    crowded = np.zeros(len(read), dtype=bool)
    pairs_found = [np.zeros(0, dtype=np.int64)]
    for word, claims in looking.items():
        rows = np.array(claims, dtype=np.int64)
        cols = np.array(sorted(holding[word]), dtype=np.int64)
        differ = np.bitwise_count(masks[rows][:, None, :] ^ masks[cols][None, :, :])
        # each side leaves out at most MAX_CHANGED words, so they differ in at most twice that
        ok = (differ[..., 0] + differ[..., 1] <= 2 * MAX_CHANGED) & (rows[:, None] != cols[None, :])
        many = ok.sum(axis=1) > _FEW
        crowded[rows[many]] = True
        i, j = np.nonzero(ok[~many])
        pairs_found.append(rows[~many][i] * len(read) + cols[j])
    both = np.sort(np.concatenate(pairs_found))
    first = np.ones(len(both), dtype=bool)
    first[1:] = both[1:] != both[:-1]
    both = both[first]  # by claim, then by the claim it could revise
    return np.searchsorted(both // len(read), np.arange(len(read) + 1)), both % len(read), crowded
