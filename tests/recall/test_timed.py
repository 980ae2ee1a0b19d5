"""A question that asks when is answered by a memory that says when (``kura.recall.timed``):
first on the longchat store with the real model, where each question below ranked a sibling
that says no day above the memory that does; then which questions ask, which texts say when,
and that a kind of time every candidate holds (a chat's own date) tells none apart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import write_memory

from kura.recall import timed
from kura.recall.embed import Unavailable
from kura.recall.search import SearchIndex
from kura.store.store import Store

LONGCHAT = Path(__file__).resolve().parents[2] / "bench" / "eval" / "longchat" / "observations.txt"


def _longchat(root: Path) -> Store:
    """The longchat store as bench/recall_quality.py writes it: one observation a memory,
    each with the day of its chat."""
    for line in LONGCHAT.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            slug, day, who, said = (part.strip() for part in line.split("|", 3))
            write_memory(root, slug, "user", said, body=f"Said by {who} in the chat of {day}: {said}")
    return Store(root)


@pytest.fixture(scope="module")
def longchat(tmp_path_factory: pytest.TempPathFactory) -> SearchIndex:
    index = SearchIndex(_longchat(tmp_path_factory.mktemp("longchat")))
    index.update()
    return index


def _order(index: SearchIndex, question: str) -> list[str]:
    return [hit.slug for hit in index.search(question, k=10).hits]


def test_a_when_question_ranks_the_memory_that_says_the_day_above_its_sibling(longchat: SearchIndex) -> None:
    """Before: Nadia's opinion of wedding gigs (no day) ranked first, the barn wedding "on 9
    August" second; the flights that land "on 20 December" third, under two Christmas
    memories that say no day."""
    assert _order(longchat, "When did the band play a wedding?")[:2] == [
        "owen-gig-wedding-barn",
        "nadia-opinion-wedding-gig",
    ]
    landing = _order(longchat, "When does Nadia's mother land in London for Christmas?")
    assert landing.index("nadia-mother-flights") == 1
    assert landing.index("nadia-mother-christmas-recap") > 1


def test_the_same_words_asking_something_else_are_left_alone(longchat: SearchIndex) -> None:
    """Without "when", the barn wedding's day lifts nothing: the opinion stays first."""
    assert _order(longchat, "Did the band play a wedding?")[0] == "nadia-opinion-wedding-gig"


def test_which_questions_ask_when() -> None:
    for asking in (
        "When did the band play a wedding?",
        "when is the VAT return due",
        "What time is the sourdough starter fed?",
        "Which days does Priya work the counter?",
        "How long ago did we move in?",
    ):
        assert timed.asks_when(asking), asking
    for other in (
        "Who said Nadia paints better when she gets out of the flat?",
        "What did Owen think of the portrait?",
        "Which timer do we use?",
    ):
        assert not timed.asks_when(other), other


def test_the_kinds_of_time_a_text_holds() -> None:
    assert timed.kinds("played a wedding near Reading on 9 August") == {"day and month"}
    assert timed.kinds("the interview is on December 4th at 10:30") == {"day and month", "clock"}
    assert timed.kinds("moved in on Saturday") == {"weekday"}
    assert timed.kinds("the levain is fed at six") == timed.kinds("demos are at noon") == {"clock"}
    assert timed.kinds("in the chat of 2025-08-12") == {"iso date", "year"}
    assert timed.kinds("interviews are in early December") == {"month"}
    assert timed.kinds("it broke yesterday and opens at 5am") == {"relative", "clock"}
    assert timed.kinds("you may have some cake in the flat") == frozenset()  # "may" is a verb
    for no_time in ("a loaf costs 3.50", "Version 1.25 is out", "We met at one of the stalls"):
        assert "clock" not in timed.kinds(no_time), no_time
    assert timed.kinds("the train leaves at 6.15pm") == timed.kinds("doors at 7 pm") == {"clock"}


def test_a_kind_most_candidates_hold_tells_none_apart() -> None:
    """Every observation carries its chat's ISO date: only the day said in one of them counts."""
    held = [frozenset({"iso date", "year"})] * 9 + [frozenset({"iso date", "year", "day and month"})]
    assert timed.telling(held) == {"day and month"}
    assert timed.telling([]) == frozenset()


def test_only_a_question_asking_when_is_lifted(tmp_path: Path) -> None:
    """On a real index: the same scores come back for a question that does not ask when, and
    the one memory that says a day goes up by LIFT for one that does."""
    write_memory(
        tmp_path, "gig-opinion", "user", "Nadia said playing weddings is how bands end up hating their songs"
    )
    write_memory(tmp_path, "gig-barn", "user", "The Low Tides played a wedding in a barn on 9 August")
    index = SearchIndex(Store(tmp_path), embedder=Unavailable("the words are enough here"))
    index.update()
    slugs = [slug for (slug,) in index.db.execute("SELECT slug FROM docs ORDER BY slug")]
    scores = np.array([0.5, 0.6], dtype=np.float32)  # gig-barn, gig-opinion
    assert slugs == ["gig-barn", "gig-opinion"]
    assert timed.lift(index.db, "Did the band play a wedding?", slugs, scores) is scores
    lifted = timed.lift(index.db, "When did the band play a wedding?", slugs, scores)
    assert lifted[0] == pytest.approx(0.5 + timed.LIFT) and lifted[1] == pytest.approx(0.6)
    index.close()
