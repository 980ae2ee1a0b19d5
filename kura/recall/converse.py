"""What recall does with a search before it picks: the second hop, the memory a two-part
question asks for put before the one it describes, the question's dates and the store's own
relevance floor, in that order (``kura.recall.hop``, ``kura.recall.headed``,
``kura.recall.when``, ``kura.recall.floor``).

Kept apart from ``kura.recall.recall`` so picking stays one rule: these only reorder the
hits and say whether the store answers the question at all.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from kura.recall import floor, headed, hop, when
from kura.recall.search import Results, SearchIndex


@dataclass(frozen=True, slots=True)
class Answer:
    results: Results
    apart: bool  # nothing stands out from the store as a whole: pick nothing


def answer(index: SearchIndex, question: str, *, k: int, today: dt.date, least: float) -> Answer:
    """The search for ``question``, hopped once (from a best hit with at least the cosine
    ``least``), its asked-for memory first, reordered by its dates, judged by the store's floor."""
    asked = when.window(question, today)
    depth = k if asked is None else k * when.WIDER  # the dated memory may rank low by meaning
    first = index.search(question, k=depth)
    results = hop.second_hop(index, question, first, depth, least=least)
    results = headed.asked_first(index, question, results)
    if asked is not None:
        results = when.dated(index, results, asked, k=k)
    apart = results.how == "embedded" and not floor.stands_out(index, question, first)
    return Answer(results, apart)
