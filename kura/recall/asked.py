"""What a question asks for beyond its words, read in the memories it ranks best.

A question's words and meaning say what it is about; some questions also say what kind of
answer they want, and the memory that answers holds that kind where its siblings do not: a
question asking when wants a memory that says a day or a time (``kura.recall.timed``), one
asking what someone thought wants a memory that reports it (``kura.recall.speech``), one
asking how much or why an amount or a reason (``kura.recall.answers``). Each
lifts a little the best candidates that hold the kind asked for, only where the kind tells
them apart. Kept in one call so the search adds one line for all of them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kura.recall import answers, plans, speech, timed

if TYPE_CHECKING:
    import numpy as np


def lift(db: sqlite3.Connection, question: str, slugs: Sequence[str], scores: np.ndarray) -> np.ndarray:
    """``scores`` (one per memory, rows of ``slugs``) lifted for what ``question`` asks for."""
    scores = answers.lift(db, question, slugs, timed.lift(db, question, slugs, scores))
    scores = plans.lower(db, question, slugs, scores)
    return speech.lift(db, question, slugs, scores)
