"""How the meaning and the words of a question are combined into one score, per question.

One global weight for the words cannot be right for every question. A question that names
something only a few memories hold (an identifier, a name, a number: "the Bakeline contract",
"Pickle", "who wanted his pocket money") is answered by the words: the vectors see a dog, a
contract, money, and rank a dozen similar memories alike. A paraphrase shares no rare word
with its memory ("when do we fire up the hearth" for the oven's preheat time); the words it
does share ("up", "Monday", "customers") are common, and any weight they get lifts a decoy
past the memory that means the same. So the words' weight is decided per question, by
three things the question and the store say:

- only rare words count as evidence: a word's IDF above ``RARE`` (held by fewer than about
  one memory in twelve), and then only by how far above; "up" in 500 of 2,000 memories says
  nothing about which one is meant. In a small store no IDF reaches that, so there the bar
  is ``SMALL`` of the IDF of a word one memory holds (below 52 memories).
- the words are trusted as far as they are sure: their weight is ``BASE`` plus ``TRUST``
  times the lead of the best memory's rare-word share over the second best. One memory
  holding the question's rare words and no other: the words decide. Many memories holding a
  little of them, or none: the weight is small and the meaning decides.
- the words lift only what the meaning does not rule out: nothing for a memory whose cosine is
  below ``NEAR[0]``, all of it from ``NEAR[1]`` (recall's floor: the meaning says it bears).
  "Can I ship on Friday evening?" shares its only rare word with "ships the dump to a storage
  box" (cosine 0.21), which must not pass the rule against Friday deploys (0.35).

Measured on bench/recall_quality.py, MRR over every answerable question of the bakery,
conversational, longchat and padded (2,064 memories) sets, the rule tuned on the A halves:
this one 0.905 / 0.881 / 0.828 / 0.732; the old rule (cosine + 0.2 × the IDF share of every
word) 0.889 / 0.893 / 0.823 / 0.713; reciprocal-rank fusion (k 10, the words' rank weighted
by their lead) 0.897 / 0.859 / 0.794 / 0.713; z-scored cosine + 0.1 × z-scored BM25 0.892 /
0.885 / 0.807 / 0.686. Dense alone 0.898 / 0.845 / 0.783 / 0.716, lexical alone 0.482 /
0.842 / 0.726 / 0.481: only this rule is at or above both on every set (docs/recall.md).
Earlier, under the single weight: a weight of 0 to 0.3, BM25 scaled by its best, a bonus
proportional to the cosine, centred vectors, a hubness penalty, pseudo-relevance feedback and
the best of per-paragraph vectors each moved the sets' mean MRR by 0.02 or less.

Session 13 (issue 30, fused ≥ each part on every half; longchat 0.88): the rules that help are
outside this sum, in what the question asks for (``kura.recall.asked``: a time, an opinion)
and in a verb's forms (``kura.recall.forms``). Tried here on the A halves and dropped, MRR
over every answerable question, bakery / conversational / longchat / padded (offline, on each
question's saved cosines and word rows, the time rule in place): every constant here moved
within reach (RARE 2.0–3.0, SMALL 0.6–0.8, BASE 0–0.1, TRUST 0.6–1.0, NEAR shifted ±0.03)
raised no set by more than 0.007 and lowered another by up to 0.01; a lift only for memories
within 0.05–0.2 of the best dense score lowered longchat to 0.80–0.82; a second words term
over every word (not only rare ones) cost the bakery 0.007; rarity judged among the 5–20 best
candidates instead of the store ("local IDF") cost the bakery 0.007 and the padded set up to
0.014; a weight that grows as the dense lead shrinks cost the bakery 0.007; the words' lead
taken only over memories the meaning allows cost the padded A half 0.003; the question's
subject (its first name) matched to the memory's first name lowered the conversational set
0.002–0.008; adjacent word pairs of the question found in a memory (+0.02) moved no A half by
more than 0.002 (longchat B +0.011); the focused question's share of the dense score at 0.5
instead of 0.25 took conversational B above lexical but cost the padded A 0.007;
``kura.recall.focus``'s SHARE at 0.065–0.12 instead of 0.05 took the padded A half to
0.789–0.790 (dense alone 0.789) but its B half fell 0.699 → 0.685–0.692, so it was left at
0.05.

Pure functions over numpy arrays: ``kura.recall.search`` finds which memories hold each word
and calls these. ``cosine`` (the question as asked) is left alone: recall's floor reads it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kura.recall.focus import WEIGHT as FOCUS

if TYPE_CHECKING:
    import numpy as np

RARE = 2.5  # a word's IDF must pass this to be evidence: held by fewer than ~1 in 12 memories
SMALL = 0.7  # ... or this share of the IDF of a word held by one memory, when that is lower
BASE, TRUST = 0.05, 0.8  # the words' weight: BASE + TRUST × the best rare-word share's lead
PAIR = 2  # the words' lead is over the third best share (``pair_lead``), not the second
ALIKE = 0.05  # shares this close hold the question's rare words alike (``pair_lead``)
IDENT = 0.3  # added for holding the rare identifiers a question names (``kura.recall.identifiers``)
NEAR = (0.22, 0.27)  # cosines from no lift by the words to all of it (0.27: recall's floor)


def idf(held: int, total: int) -> float:
    """How rare a word held by ``held`` of ``total`` memories is (never negative)."""
    return max(math.log((total + 1) / (held + 0.5)), 0.0)


def share(
    holders: Sequence[np.ndarray], total: int, *, rare: float = 0.0, only: Sequence[bool] | None = None
) -> np.ndarray:
    """Per memory: the IDF-weighted share of the question's words it holds. ``holders``: per
    question word, the rows of the memories holding it. ``rare``: each word weighs its IDF
    less this, and a word no rarer counts for nothing (0: every word at its IDF). ``only``:
    per word, whether it is counted (the share of those words in all of them)."""
    import numpy as np

    out = np.zeros(total, dtype=np.float32)
    found = [(max(idf(len(rows), total) - rare, 0.0), rows) for rows in holders]
    whole = sum(weight for weight, _ in found) or 1.0
    for at, (weight, rows) in enumerate(found):
        if weight > 0 and len(rows) and (only is None or only[at]):
            out[rows] += weight / whole
    return out


def rare_above(total: int) -> float:
    """The IDF a word must pass to count as evidence in a store of ``total`` memories."""
    return min(RARE, SMALL * idf(1, total))


def lead(scores: np.ndarray) -> float:
    """How far the best score is ahead of the second (the best alone: all of it)."""
    import numpy as np

    if len(scores) == 0:
        return 0.0
    if len(scores) == 1:
        return float(scores[0])
    best = int(np.argmax(scores))  # two maxima: np.partition took 1.6 ms on 20,000 mostly-zero shares
    second = max(scores[:best].max(initial=-np.inf), scores[best + 1 :].max(initial=-np.inf))
    return float(scores[best] - second)


def pair_lead(shares: np.ndarray) -> float:
    """How far the best of ``shares`` (never negative) is ahead of the third, when the second
    holds the rare words alike (within ``ALIKE``): two memories that hold them, and no other,
    are singled out by them together. Otherwise the lead over the second (``lead``): a memory
    that holds one of three rare words is no twin of one that holds all three."""
    import numpy as np

    held = shares[shares > 0]  # a share is mostly 0: np.partition over 20,000 took 2.4 ms, this 0.01
    if len(held) < 2:
        return float(held.max(initial=0.0))
    top = np.sort(np.partition(held, len(held) - min(3, len(held)))[-3:])[::-1]
    if top[1] < top[0] - ALIKE:
        return float(top[0] - top[1])
    return float(top[0] - (top[2] if len(top) > 2 else 0.0))


def meaning(cosines: np.ndarray, narrowed: np.ndarray | None) -> np.ndarray:
    """The dense score: the question as asked, blended with the question without its common
    words when it has some (``kura.recall.focus``)."""
    return cosines if narrowed is None else (1 - FOCUS) * cosines + FOCUS * narrowed


def words_weight(rare_share: np.ndarray, *, over: int = 1) -> float:
    """How much the question's words count for this question: more the surer they are (their
    best share's lead over the share ``over`` places below it: ``pair_lead`` for 2)."""
    return BASE + TRUST * (lead(rare_share) if over == 1 else pair_lead(rare_share))


def fuse(
    dense: np.ndarray, cosines: np.ndarray, holders: Sequence[np.ndarray], *, exact: Sequence[bool] = ()
) -> np.ndarray:
    """Per memory: the fused score, ``dense`` (``meaning``) plus the rare words' share at this
    question's weight, as far as the memory's cosine (the question as asked) is ``near``. The
    words ``exact`` marks (identifiers: ``kura.recall.identifiers``) lift whatever the cosine,
    and their own share among themselves adds ``IDENT``. ``holders`` as for ``share``, rows
    of ``dense``."""
    rare = rare_above(len(dense))
    rare_share = share(holders, len(dense), rare=rare)
    weight = words_weight(rare_share, over=PAIR)
    if not any(exact):
        fused: np.ndarray = dense + weight * rare_share * near(cosines)
        return fused
    sure = share(holders, len(dense), rare=rare, only=exact)
    named = share([rows for rows, ident in zip(holders, exact, strict=True) if ident], len(dense), rare=rare)
    lifted: np.ndarray = dense + weight * ((rare_share - sure) * near(cosines) + sure) + IDENT * named
    return lifted


def near(cosines: np.ndarray) -> np.ndarray:
    """Per memory: how much of the words' lift it may have, 0 to 1, by its cosine."""
    import numpy as np

    low, high = NEAR
    return np.clip((cosines - low) / (high - low), 0.0, 1.0)
