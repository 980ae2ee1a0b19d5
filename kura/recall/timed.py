"""A question that asks *when* is answered by a memory that says when.

"When did the band play a wedding?" is near, in meaning, to every memory about the band and
weddings: "Nadia said playing weddings is how bands end up hating their own songs" is as
close as "The Low Tides played a wedding in a barn near Reading on 9 August", and only the
second answers. What tells them apart is not a word of the question but the kind of thing
the answer holds: a day, a date, a time. So when a question asks when ("when", "what
time", "which day", "how long ago"; "when" followed by a verb, so "who said she paints
better when she is out" does not), the ``DEPTH`` best memories that say when are lifted
by ``LIFT`` before picking. A date phrase in the question itself ("last June") is another
matter, read against memories' dates by ``kura.recall.when``.

Saying when is judged among those candidates, as a word's rarity is judged in a store: a
kind of time expression most of them hold tells none apart, so it does not count. In a
store of chat observations every memory carries the day of its chat ("in the chat of
2025-08-12"), and an ISO date then says nothing, while "on 9 August" or "on Saturday" in
one of them does. The kinds are the ones people write: a day and month ("9 August",
"December 4th"), a weekday, a clock time ("18:40", "5am", "at six"), an ISO date, a month with a
preposition ("in early December"), relative days ("yesterday", "next week") and a year.

Measured on bench/recall_quality.py, MRR over every answerable question (LIFT, DEPTH and
COMMON chosen on the A halves; B held out), before → after: longchat 0.828 → 0.835 (A 0.850 →
0.854, B 0.807 → 0.816), bakery with 2,000 distractors 0.733 → 0.743 (A 0.782 → 0.782, B 0.680
→ 0.700), bakery 0.915 → 0.915, conversational 0.881 → 0.881. Without the rule that a kind
most candidates hold does not count, longchat's gain was lost to the chat dates (0.828) and
the padded set gained 0.007 instead of 0.010; without the month and year kinds the bakery's B
half fell 0.899 → 0.884. The lift is small on purpose: it orders siblings, it does not bring
up a memory the meaning and the words put far below (from 0.03 to 0.12 the figures above
barely move). Lifting a day (a date, a weekday, a clock time) more than a month or a year
(0.05 against 0.025 or none) took longchat's A half 0.857 → 0.867 but its B half nowhere and
the bakery's and padded bakery's B halves 0.007 and 0.008 lower: dropped.

English question words only: in another language nothing is lifted.
"""

from __future__ import annotations

import calendar
import functools
import re
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

LIFT = 0.05  # added to the score of a candidate that says when, for a question asking when
DEPTH = 30  # the best memories (by the fused score) looked at
COMMON = 0.7  # a kind of time expression more than this share of the candidates hold counts for none
CAP = 4_000  # characters of a memory read for its time expressions
_ASKS = (  # "when" asks only before a verb: "who said she paints better when she …" does not
    r"\b(?:when\s+(?:did|does|do|is|are|was|were|will|would|should|can|could|has|have|had|must|shall)"
    r"|what\s+(?:time|day|date|month|year)|which\s+(?:days?|dates?|months?|years?)|how\s+long\s+ago)\b"
)
_NAMES = sorted(
    {m for m in (*calendar.month_name, *calendar.month_abbr) if m} - {"May"}, key=len, reverse=True
)
_MONTH = r"(?:(?:" + "|".join(_NAMES) + r")\.?|May)"  # "may" in lower case is a verb
_DAYS = "|".join(calendar.day_name)
_KINDS = {
    "day and month": rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\b|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b",
    "weekday": rf"\b(?:{_DAYS})s?\b",
    "clock": r"\b\d{1,2}:\d{2}\b|\b\d{1,2}(?:\.\d{2})?\s?(?i:am|pm)\b|\b(?i:o'clock|noon|midnight)\b"
    r"|\b(?i:at\s+(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve))\b(?!\s+of\b)",
    "iso date": r"\b\d{4}-\d{2}-\d{2}\b",
    "month": rf"\b(?:in|early|late|mid|by|until|from|since|end of|every)\s+{_MONTH}\b",
    "relative": r"\b(?i:yesterday|tomorrow|tonight|(?:last|next)\s+(?:week|month|year|night)"
    r"|every\s+(?:day|week|month|year|morning|evening))\b",
    "year": r"\b(?:19|20)\d{2}\b",
}
_TEXTS = (
    "SELECT docs.slug, docs_fts.name, docs_fts.description, substr(docs_fts.body, 1, ?) FROM docs "
    "JOIN docs_fts ON docs_fts.rowid = docs.fts WHERE docs.slug IN ({marks})"
)  # the body's first CAP characters, or none (``texts``)


def asks_when(question: str) -> bool:
    """Whether ``question`` asks for a time ("when did", "what time", "which day", "how long ago")."""
    return _compiled()[0].search(question) is not None


@functools.lru_cache(maxsize=512)
def kinds(text: str) -> frozenset[str]:
    """The kinds of time expression ``text`` holds ("day and month", "weekday", …). Kept for
    the last 512 texts (at most ``3 × CAP`` characters each): the seven patterns cost ~0.1 ms a
    memory of the bakery's length, and a warm server meets the same best memories again."""
    return frozenset(kind for kind, pattern in _compiled()[1].items() if pattern.search(text))


def telling(held: Sequence[frozenset[str]]) -> frozenset[str]:
    """The kinds that tell candidates apart: held by at most ``COMMON`` of them."""
    if not held:
        return frozenset()
    every = frozenset().union(*held)
    return frozenset(kind for kind in every if sum(kind in h for h in held) <= COMMON * len(held))


def lift(db: sqlite3.Connection, question: str, slugs: Sequence[str], scores: np.ndarray) -> np.ndarray:
    """``scores`` (one per memory, rows of ``slugs``) with the ``DEPTH`` best raised by ``LIFT``
    where the memory says when, in a kind that tells them apart, if ``question`` asks when."""
    if not asks_when(question) or len(scores) == 0:
        return scores
    rows = best(scores)
    said = texts(db, [slugs[i] for i in rows])
    held = [kinds(said.get(slugs[i], "")) for i in rows]
    counted = telling(held)
    lifted = scores.copy()
    for row, found in zip(rows, held, strict=True):
        if found & counted:
            lifted[row] += LIFT
    return lifted


def best(scores: np.ndarray) -> np.ndarray:
    """The rows of the ``DEPTH`` best scores (in no order)."""
    import numpy as np

    count = min(DEPTH, len(scores))
    return np.argpartition(-scores, count - 1)[:count] if count < len(scores) else np.arange(count)


@functools.cache
def _compiled() -> tuple[re.Pattern[str], dict[str, re.Pattern[str]]]:
    """The patterns, compiled on first use: most processes that import search never ask when."""
    return re.compile(_ASKS, re.IGNORECASE), {kind: re.compile(said) for kind, said in _KINDS.items()}


def texts(db: sqlite3.Connection, slugs: list[str], *, body: bool = True) -> dict[str, str]:
    """Each memory's name, description and (``body``) the start of its body, from the search
    index."""
    query = _TEXTS.format(marks=",".join("?" * len(slugs)))
    return {
        slug: "\n".join(str(part or "")[:CAP] for part in parts)
        for slug, *parts in db.execute(query, (CAP if body else 0, *slugs))
    }
