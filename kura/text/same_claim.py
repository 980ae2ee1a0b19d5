"""The same fact said again in other words, told by the identifier it names.

The content-word rule (``kura.text.claim_match``) calls two claims one when one holds all
the other's words or they share 80% of them. People restate a fact in other sentences:
"the artifacts bucket is called acme-builds-eu now" in one session, "the deploy job pushes
its artifacts to acme-builds-eu, the bucket we use now" in another. Those share three words
of eight, yet they are one claim, and the ladder needs them to meet (TIDE + CALLUS).

What makes them one is a rare identifier (a name with a digit or an inner dash, dot, slash
or underscore: ``acme-builds-eu``, ``db-staging.internal``, ``flags_v2``) and the nouns said
round it (``artifacts``, ``bucket``). So two claims are **restated** when, with the same
polarity, they name one identifier in common and the same numbers (``port 8080`` and ``64
GB`` against none are two facts), and of their other words, leaving out those of naming,
using and time ("called", "named", "now", "these days", "use"):

- they share at least ``NOUNS``, and one claim says nothing the other does not: the other
  may add how it is used ("the deploy job pushes …");
- or, when each adds words of its own, they share more than ``NOUNS`` and at least
  ``SHARE`` of the shorter one's: two claims that each add their own detail to the same
  two nouns ("… is private" / "… has versioning on") are two facts about one thing.

No embedding: an embedder puts "… is private" and "… is public" as close as a restatement.
``bench/claim_pairs.py`` prints the false merges and misses of this rule on pairs written
for it, and on pairs written after it was settled.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

NOUNS = 2  # shared content words besides the identifiers
SHARE = 0.75  # of the shorter claim's own words, when each claim adds words of its own
_IDENTIFIER = re.compile(r"\d|[a-z0-9][-._/][a-z0-9]")
# naming, using and time: said round any restatement, so they tell no new fact
_LIGHT = frozenset(
    "called named name renamed known aka now currently current nowadays day these today still actually "
    "use used using new real one".split()
)


def identifiers(words: AbstractSet[str]) -> frozenset[str]:
    """The words (as ``claim_match.words`` reads them) that are identifiers or numbers."""
    return frozenset(w for w in words if len(w) >= 2 and _IDENTIFIER.search(w))


def restated(new: tuple[AbstractSet[str], bool], old: tuple[AbstractSet[str], bool]) -> bool:
    """Whether two claims, read into (content words, negated), are one fact restated (see the
    module docstring)."""
    (a, a_negated), (b, b_negated) = new, old
    names_a, names_b = identifiers(a), identifiers(b)
    if not names_a & names_b or a_negated != b_negated or _numbers(names_a) != _numbers(names_b):
        return False
    own_a, own_b = a - names_a - _LIGHT, b - names_b - _LIGHT
    shared = own_a & own_b
    if len(shared) < NOUNS:
        return False
    if not own_a - own_b or not own_b - own_a:
        return True  # one says nothing the other does not
    return len(shared) > NOUNS and len(shared) >= SHARE * min(len(own_a), len(own_b))


def _numbers(names: frozenset[str]) -> frozenset[str]:
    return frozenset(name for name in names if any(c.isdigit() for c in name))
