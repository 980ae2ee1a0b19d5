"""A question about what someone thought or said is answered by a memory that reports it.

"What did Owen think of the portrait Nadia gave Lena and Marco?" is near, in meaning, to the
memory of the portrait itself ("Nadia painted Lena and Marco a portrait …"), and further from
the one that answers ("Owen said a painted portrait was the best wedding present anyone could
give"): the vectors read the subject, not that an opinion is asked for. So when a question
asks what someone thought, felt, said, told, suggested or recommended, the ``DEPTH`` best
memories whose name or description reports what someone said or thought ("said", "told",
"thinks", "felt", "recommended", "prefers", "loved" …) are lifted by ``LIFT`` before picking.

Only the name and description are read: a store of chat observations says in every body who
said it ("Said by Owen in the chat of …"), which would make every memory an opinion. And as
for a question asking when (``kura.recall.timed``, whose candidates, texts and rule this
shares), reporting speech counts only when at most ``COMMON`` of the candidates do: among
memories that all report what someone said, it tells none apart.

Measured on bench/recall_quality.py (LIFT chosen on the A halves; B held out), MRR over every
answerable question before → after: longchat 0.836 → 0.842 (A 0.854 → 0.857, B 0.817 →
0.827; through ``recall()`` 0.837 → 0.844), conversational and bakery unchanged, bakery
with 2,000 distractors 0.743 → 0.742 (one B question a place lower). Lifting the other way
too (a question that asks no opinion lifts the memories that report none) cost the
conversational set 0.012 at the same lift. A lift of 0.04 to 0.08 gives the same figures;
"find" and "called" are left out of the question's words ("what fossil did a student
find", "a roaster called Hearth").

English words only: in another language nothing is lifted.
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

LIFT = 0.05  # added to the score of a candidate that reports speech, for a question asking for it
COMMON = timed.COMMON  # more than this share of the candidates report speech: it counts for none
_ASKS = (
    r"\b(?:think|thinks|thought|feel|feels|felt|say|says|said|tell|tells|told|suggest|suggests|suggested"
    r"|recommend|recommends|recommended|advise|advises|advised|opinion|favou?rite|make\s+of)\b"
)
_ASIDE = r"\b(?:tell|show|give)\s+(?:me|us)\b|\bdo\s+you\s+think\b"  # a request, the asker's hedge
_SAYS = (
    r"\b(?:said|says|told|tells|thinks|thought|feels|felt|suggested|recommended|advised|reckons"
    r"|prefers|preferred|loves|loved|hates|hated|likes|liked)\b"
)


def asks_opinion(question: str) -> bool:
    """Whether ``question`` asks what someone thought, felt or said ("tell me …" and "what do
    you think …" ask for a fact, not for someone's words)."""
    asks, _, aside = _compiled()
    return asks.search(aside.sub(" ", question)) is not None


def reports(text: str) -> bool:
    """Whether ``text`` reports what someone said or thought."""
    return _compiled()[1].search(text) is not None


def lift(db: sqlite3.Connection, question: str, slugs: Sequence[str], scores: np.ndarray) -> np.ndarray:
    """``scores`` (one per memory, rows of ``slugs``) with the best (``timed.DEPTH``) raised by
    ``LIFT`` where the memory reports speech, if ``question`` asks for an opinion and at most
    ``COMMON`` of those candidates report speech."""
    if not asks_opinion(question) or len(scores) == 0:
        return scores
    rows = timed.best(scores)
    said = timed.texts(db, [slugs[i] for i in rows], body=False)
    reporting = [row for row in rows if reports(said.get(slugs[row], ""))]
    if not reporting or len(reporting) > COMMON * len(rows):
        return scores
    lifted = scores.copy()
    lifted[reporting] += LIFT
    return lifted


@functools.cache
def _compiled() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    asks, says, aside = (re.compile(pattern, re.IGNORECASE) for pattern in (_ASKS, _SAYS, _ASIDE))
    return asks, says, aside
