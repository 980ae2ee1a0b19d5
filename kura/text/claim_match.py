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
from typing import Any

from kura.text import scripts
from kura.text.triggers import STOP_WORDS

_WORD = re.compile(r"[a-z0-9][a-z0-9_.\-/]*[a-z0-9]|[a-z0-9]")
_NEGATIONS = frozenset(
    "not never no don't dont doesn't isn't aren't won't can't cannot without avoid stop".split()
)
# a run of [a-z'] that is one of _NEGATIONS: no letter or apostrophe either side
_NEGATED = re.compile(r"(?<![a-z'])(?:" + "|".join(map(re.escape, sorted(_NEGATIONS))) + r")(?![a-z'])")
# every word of _NEGATIONS holds one of these: a claim holding none is not negated (no search)
_NEGATION_PARTS = ("no", "n't", "dont", "never", "without", "avoid", "stop")
_NEGATION_PARTS_BEYOND = ("nicht", "nie", "kein", "nunca", "jamais", "pas")  # de, es, fr in ASCII
_EXTRA_STOP = frozenset("always please remember note ever from now on going forward keep mind".split())
SAME_SHARE = 0.8
REVISION_SHARE = 0.6
MAX_CHANGED = 2
FAMILY = 3  # a claim revising more live claims than this is one of a pattern (``pairs``)
CROWD = 400  # claims holding a word, past which it is no longer looked up in pairs (``pairs``)
_FEW = 64  # claims one look-up may find that could revise a claim, past which it is a pattern's


def words(text: str) -> set[str]:
    """Content words, lower-cased, a plural ``s`` folded away; in Chinese, Japanese and
    Korean their character bigrams, in other scripts their runs of letters
    (``kura.text.scripts``)."""
    low, beyond = text.lower().replace("\u2019", "'"), list[str]()
    if not low.isascii():  # 「…は忘れて」, "забудь, что …": CJK as bigrams, other scripts whole
        low, beyond = scripts.apart(low)
    out = set(map(_FOLDED.__getitem__, _WORD.findall(low)))
    out.update(beyond)
    out.discard("")
    return out


def _folded(word: str) -> str:
    """One word as ``words`` keeps it, or "" for a word it drops."""
    word = word.rstrip(".")
    if not word or word in STOP_WORDS or word in _EXTRA_STOP or word in _NEGATIONS:
        return ""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


class _Folded(dict[str, str]):
    """``_folded`` of each word seen, asked once per word: a big store says the same few
    thousand words again and again, and a dict hit costs less than any other cache's."""

    def __missing__(self, word: str) -> str:
        if len(self) >= 1 << 16:
            self.clear()
        folded = self[word] = _folded(word)
        return folded


_FOLDED = _Folded()


def negated(text: str) -> bool:
    """Whether the claim is a negative one ("never …", "don't …", "not …"): one of
    ``_NEGATIONS`` is a whole run of letters and apostrophes in it (one search, not a list
    of every run: asked for every claim of a store)."""
    low = text.lower().replace("\u2019", "'")
    if any(part in low for part in _NEGATION_PARTS) and _NEGATED.search(low) is not None:
        return True
    if low.isascii() and not any(part in low for part in _NEGATION_PARTS_BEYOND):
        return False
    return scripts.negated(low)  # 動いていない, 不要, 않는다, не, não, nicht


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

    # word n sets bit n % 64 of lane n // 64 % 2 (bit n % 128 of the claim's 128)
    numbered = {word: n for n, word in enumerate(holding)}
    sizes = np.fromiter(map(len, (found for found, _ in read)), dtype=np.int64, count=len(read))
    ids = np.fromiter(
        (numbered[word] for found, _ in read for word in found), dtype=np.int64, count=int(sizes.sum())
    )
    masks = np.zeros((len(read), 2), dtype=np.uint64)
    np.bitwise_or.at(
        masks,
        (np.repeat(np.arange(len(read)), sizes), ids // 64 % 2),
        np.left_shift(np.uint64(1), (ids % 64).astype(np.uint64)),
    )
    looking: defaultdict[str, list[int]] = defaultdict(list)  # a word -> the claims looking it up
    for number, words_looked_up in enumerate(rarest):
        for word in words_looked_up:
            if 1 < len(holding[word]) <= CROWD and len(read[number][0]) >= 2:
                looking[word].append(number)
    low, high = masks[:, 0].copy(), masks[:, 1].copy()
    crowded = np.zeros(len(read), dtype=bool)
    pairs_found = [np.zeros(0, dtype=np.int64)]
    for word, claims in looking.items():
        rows = np.array(claims, dtype=np.int64)
        cols = np.fromiter(holding[word], dtype=np.int64, count=len(holding[word]))
        differ = np.bitwise_count(low[rows][:, None] ^ low[cols])
        differ += np.bitwise_count(high[rows][:, None] ^ high[cols])
        # each side leaves out at most MAX_CHANGED words, so they differ in at most twice that;
        # a claim looking a word up holds it, so each row meets itself once among its columns
        ok = differ <= 2 * MAX_CHANGED
        many = ok.sum(axis=1) > _FEW + 1
        crowded[rows[many]] = True
        i, j = np.nonzero(ok[~many])
        pairs_found.append(rows[~many][i] * len(read) + cols[j])
    both = np.sort(np.concatenate(pairs_found))
    first = np.ones(len(both), dtype=bool)
    first[1:] = both[1:] != both[:-1]
    first &= both // len(read) != both % len(read)  # a claim is not one it could revise
    both = both[first]  # by claim, then by the claim it could revise
    return np.searchsorted(both // len(read), np.arange(len(read) + 1)), both % len(read), crowded
