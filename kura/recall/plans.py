"""A question asking when something *did* happen is not answered by a memory of the plan.

"When did Jess move in with Nadia?" is nearer, in meaning and in words, to "Jess is moving
into Nadia's flat at the end of the month" than to "Jess moved in on Saturday; there are
still forty boxes in the hallway": the plan says "move", "Jess", "Nadia's flat" as plainly
as the event does. In a store of observations from long chats both are kept, since what
people say they will do is said weeks before they do it, and a question in the past tense
asks for the second. So when a question asks when something did happen ("when did", "when
was", "when were", "how long ago"), the best ``timed.DEPTH`` memories whose name or
description speaks of it as still to come ("will", "is going to", "plans to", "wants to",
"hopes to", "next week", "tomorrow", "soon", "is moving", "is flying" …) are lowered by ``DROP``
— only when at most ``timed.COMMON`` of them do, as for every kind ``kura.recall.asked``
reads. Nothing is removed: a plan may be all the store holds, and then it still answers.

Only the name and description are read: a body may quote what was planned beside what was
done. English words only: in another language nothing moves.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kura.recall import timed

if TYPE_CHECKING:
    import numpy as np

DROP = 0.15  # taken from a candidate that speaks of a plan, for a question asking when it did happen
_ASKS = r"\bwhen\s+(?:did|was|were)\b|\bhow\s+long\s+ago\b|\bwhat\s+(?:day|date|time)\s+(?:did|was|were)\b"
_PLAN = (
    r"\b(?:will|won't|shall|going\s+to|gonna|plans?\s+to|planning|wants?\s+to|hopes?\s+to|hoping\s+to"
    r"|intends?\s+to|thinking\s+(?:about|of)|tomorrow|soon(?![-‐]to[-‐]be)|upcoming"
    r"|next\s+(?:week|weekend|month|year|quarter|sprint|release|time|summer|winter|spring|autumn|fall"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday|morning|evening|night|day)"  # not "Next.js"
    r"|(?:is|are|am)\s+(?:moving|leaving|coming|going|flying|starting|travell?ing|visiting|getting))\b|\w'll\b"
)


@functools.cache
def _compiled() -> tuple[re.Pattern[str], re.Pattern[str]]:
    return re.compile(_ASKS, re.IGNORECASE), re.compile(_PLAN, re.IGNORECASE)


def asks_past(question: str) -> bool:
    """Whether ``question`` asks when something did happen ("when did", "how long ago")."""
    return _compiled()[0].search(question) is not None


def plans(text: str) -> bool:
    """Whether ``text`` speaks of something still to come ("will", "is moving", "next week")."""
    return _compiled()[1].search(text) is not None


def lower(db: sqlite3.Connection, question: str, slugs: Sequence[str], scores: np.ndarray) -> np.ndarray:
    """``scores`` (one per memory, rows of ``slugs``) with the best (``timed.DEPTH``) lowered by
    ``DROP`` where the memory speaks of a plan, if ``question`` asks when something did
    happen and at most ``timed.COMMON`` of those candidates speak of one."""
    if not asks_past(question) or len(scores) == 0:
        return scores
    rows = timed.best(scores)
    said = timed.texts(db, [slugs[i] for i in rows], body=False)
    planned = [row for row in rows if plans(said.get(slugs[row], ""))]
    if not planned or len(planned) > timed.COMMON * len(rows):
        return scores
    lowered = scores.copy()
    lowered[planned] -= DROP
    return lowered
