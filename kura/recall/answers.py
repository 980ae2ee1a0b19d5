"""A question asking *how much* wants a memory that holds an amount; one asking *why*, a
memory that gives a reason.

"How much did the harbour painting sell for?" is near, in meaning, to every memory about
that painting: "Nadia painted the harbour at Whitby from a photo" is as close as "The
harbour painting sold on the first day of the show for £250", and only the second answers.
"Why was Owen hesitant about the head role?" is as near to "Owen accepted the head role" as
to "Owen is unsure about the head role because it means more meetings". As for a question
asking when (``kura.recall.timed``, whose candidates, texts and counting rule this shares),
what tells them apart is the kind of thing the answer holds, not a word of the question:

- an **amount** for "how much", "what price", "what did it cost": a number in figures ("£250",
  "18%": a price is not written in words, and "after two years" is no price);
- a **count** for "how many", "how old", "how long" (not "how long ago": that asks when),
  "how far", "how big": a number in figures or words ("90 minutes", "forty", "a dozen");
- for both, an ISO date and a clock time are no numbers (a chat store's every memory carries
  the day it was said);
- a **reason** for "why", "how come", "what made", "what was the reason": "because",
  "since" before a clause, "so" joining one, "which is why", "thanks to", "due to", "it
  means", "in order to".

The best ``timed.DEPTH`` memories that hold the kind are lifted by ``LIFT``, only when at most
``timed.COMMON`` of them do: among memories that all hold a number, a number tells none apart.

A comparison ("how much slower … than …") asks for neither: it is worked out from two
memories, and lifting every memory that holds a number there pushed the second hop's find
out of the first five.

Measured on bench/recall_quality.py (LIFT chosen on the A halves from 0.05, 0.08, 0.1 and
0.12; B held out), MRR over every answerable question before → after: longchat 0.842 → 0.853
(A 0.857 → 0.870, B 0.827 → 0.836), conversational 0.890 → 0.896 (A 0.915 → 0.927, B 0.861 →
0.861), bakery 0.915 unchanged; 0.12 gave the same A halves and cost the bakery's B half
0.007. docs/recall.md ("A question asking how much, how many or why") has the table.
English question words only: in another language nothing is lifted.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kura.recall import timed

if TYPE_CHECKING:
    import numpy as np

LIFT = 0.1  # added to the score of a candidate that holds the kind of answer asked for
_NUMBER_WORDS = (
    "two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fifteen|twenty|thirty"
    "|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|dozen|half|twice"
)
_NOT_AMOUNTS = (  # a day, a clock, a version ("Python 3.11", "v2.4.1"), a port: no amount
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?\b|\b\d{1,2}:\d{2}\b"
    r"|\bv?\d+\.\d+\.\d+\b|\b[vV]\d+(?:\.\d+)*\b|(?i:\b(?:python|node|version|release|port)\s+)\d[\d.]*"
)
_COMPARES = re.compile(r"\bthan\b", re.IGNORECASE)
_OWN = re.compile(rf"\b\w*\d[\w.,]*|\b(?:{_NUMBER_WORDS})\b", re.IGNORECASE)  # a number the question holds
# (``\b`` first: unanchored, a run of letters with no digit was tried from each of its letters)
_FIGURES = r"\d"  # money and shares are written in figures: "£250", "18%", "12.60"
_COUNT = rf"\d|\b(?i:{_NUMBER_WORDS})\b"  # a count, an age or a length may be in words: "forty", "two years"
_ASKS_PRICE = (
    r"\bhow\s+much\b|\bwhat\s+(?:price|percentage|amount|salary|fee|rent)\b"
    r"|\bwhat\s+(?:did|does|do|will|would)\s+[\w\s']{1,40}?\s+cost\b"
)
_ASKS_COUNT = r"\bhow\s+(?:many|old|far|big|large|tall|heavy|fast|long(?!\s+ago\b))\b"
_ASKS_REASON = r"\bwhy\b|\bhow\s+come\b|\bwhat\s+made\b|\bwhat\s+(?:is|was|were|are)\s+the\s+reasons?\b"
_REASON = (
    r"\b(?:because|'?cause|thanks\s+to|due\s+to|owing\s+to|which\s+is\s+why|that(?:'s|\s+is)\s+why"
    r"|in\s+order\s+to|so\s+that|as\s+a\s+result|the\s+reason|it\s+means|means\s+that|caused\s+by)\b"
    r"|[,;]\s*so\s+\w+|\bsince\s+(?:he|she|they|we|I|you|it|his|her|their|our|my|the)\b"
    r"|^\s*(?:\*\*)?why:"  # a kura memory's own "**Why:**" line
)


@dataclass(frozen=True, slots=True)
class Wanted:
    """A kind of answer: what asks for it in a question, and what holds it in a memory."""

    asks: re.Pattern[str]
    holds: re.Pattern[str]
    drop: re.Pattern[str] | None = None  # what does not count before looking (a date, a clock)

    def held(self, text: str) -> bool:
        return self.holds.search(text if self.drop is None else self.drop.sub(" ", text)) is not None


@functools.cache
def wanted() -> tuple[Wanted, ...]:
    """The kinds, compiled on first use: most processes that import search never ask."""
    return (
        Wanted(re.compile(_ASKS_PRICE, re.IGNORECASE), re.compile(_FIGURES), re.compile(_NOT_AMOUNTS)),
        Wanted(re.compile(_ASKS_COUNT, re.IGNORECASE), re.compile(_COUNT), re.compile(_NOT_AMOUNTS)),
        Wanted(re.compile(_ASKS_REASON, re.IGNORECASE), re.compile(_REASON, re.IGNORECASE | re.MULTILINE)),
    )


def asks(question: str) -> tuple[Wanted, ...]:
    """The kinds of answer ``question`` asks for (none, most often). A comparison ("how much
    slower than …") is worked out from two memories, not read in one: it asks for none."""
    if _COMPARES.search(question):
        return ()
    return tuple(kind for kind in wanted() if kind.asks.search(question))


def lift(db: sqlite3.Connection, question: str, slugs: Sequence[str], scores: np.ndarray) -> np.ndarray:
    """``scores`` (one per memory, rows of ``slugs``) with the best (``timed.DEPTH``) raised by
    ``LIFT`` where the memory holds a kind of answer ``question`` asks for, a kind at most
    ``timed.COMMON`` of those candidates hold."""
    kinds = asks(question)
    if not kinds or len(scores) == 0:
        return scores
    rows = timed.best(scores)
    said = timed.texts(db, [slugs[i] for i in rows])
    own = {_bare(token) for token in _OWN.findall(question)}  # "the 10k", "the half marathon": asked about
    if own:  # one pass over each text, whatever the question's length
        said = {
            slug: _OWN.sub(lambda m: " " if _bare(m.group(0)) in own else m.group(0), text)
            for slug, text in said.items()
        }
    lifted = scores.copy()
    for kind in kinds:
        holding = [row for row in rows if kind.held(said.get(slugs[row], ""))]
        if holding and len(holding) <= timed.COMMON * len(rows):
            lifted[holding] += LIFT
    return lifted


def _bare(token: str) -> str:
    """A number as compared with the question's: "2," and "Twenty" are "2" and "twenty"."""
    return token.rstrip(".,").lower()
