"""A question asking when something did happen lowers the memories of it as a plan
(``kura.recall.plans``): through real ``kura recall`` processes on the small chat store of
``test_answers``, where the plan ranked above the day it was done; then which questions ask,
which texts speak of a plan, and that a plan every candidate speaks of moves nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import write_memory

from kura.recall import plans
from kura.recall.embed import Unavailable, load_embedder
from kura.recall.search import SearchIndex
from kura.store.store import Store
from tests.recall.test_answers import chat_of_two
from tests.recall.test_converse import embedded, picked, recall


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    if isinstance(load_embedder(), Unavailable):
        pytest.skip("the built-in embedder is not installed")
    return embedded(chat_of_two(tmp_path_factory.mktemp("two") / "store"), user_cache)


def test_a_question_in_the_past_picks_what_was_done_over_the_plan(two: Path) -> None:
    """Before: "Kofi is moving to Leeds next month to be nearer his daughter" first (0.856),
    "Kofi moved to Leeds on Saturday" second (0.746)."""
    code, found = recall(two, "When did Kofi move to Leeds to be near his daughter?")
    assert (code, picked(found)[:2]) == (0, ["kofi-leeds-moved", "kofi-leeds-plan"])


def test_a_question_about_what_is_to_come_keeps_the_plan_first(two: Path) -> None:
    code, found = recall(two, "Is Kofi moving to Leeds to be near his daughter?")
    assert (code, picked(found)[0]) == (0, "kofi-leeds-plan")


def test_which_questions_ask_and_which_texts_plan() -> None:
    for asking in ("When did Kofi move?", "When was the chimney swept?", "How long ago did Ruth quit?"):
        assert plans.asks_past(asking), asking
    for other in ("When is Carla's birthday?", "When does the train leave?", "Why did Ruth quit?"):
        assert not plans.asks_past(other), other
    for plan in (
        "Kofi is moving to Leeds next month",
        "Owen will run the half in October",
        "Max wants to be a stegosaurus",
        "Nadia and Jess fly to Sofia tomorrow",
        "They're going to paint the hall",
        "We'll see",
    ):
        assert plans.plans(plan), plan
    for done in ("Kofi moved to Leeds on Saturday", "Ruth quit the choir", "The van arrived late"):
        assert not plans.plans(done), done


def test_a_plan_every_candidate_speaks_of_moves_nothing(tmp_path: Path) -> None:
    for slug, said in (("a", "Kofi will move"), ("b", "Kofi is moving soon"), ("c", "Kofi plans to move")):
        write_memory(tmp_path / "all", slug, "user", said)
    for slug, said in (("a", "Kofi will move"), ("b", "Kofi moved"), ("c", "Kofi unpacked")):
        write_memory(tmp_path / "one", slug, "user", said)
    for folder, moved in (("all", [0.0, 0.0, 0.0]), ("one", [-plans.DROP, 0.0, 0.0])):
        index = SearchIndex(Store(tmp_path / folder), embedder=Unavailable("the words are enough here"))
        index.update()
        slugs = [slug for (slug,) in index.db.execute("SELECT slug FROM docs ORDER BY slug")]
        scores = np.array([0.5, 0.4, 0.3], dtype=np.float32)
        assert (
            plans.lower(index.db, "When did Kofi move?", slugs, scores) - scores
        ).tolist() == pytest.approx(moved), folder
        index.close()


@pytest.mark.parametrize(
    "text",
    [
        "moved to Next.js 14 on 2026-03-18",  # a name, not "next month"
        "the CLI's --next flag pages on",
        "the soon-to-be-removed v1 API was deleted",
    ],
)
def test_a_name_or_a_word_that_is_no_plan(text: str) -> None:
    """Before: each was a plan, so "When was the switch to Next.js?" lowered the switch."""
    assert not plans.plans(text)
    assert plans.plans("Next week we ship the new router") and plans.plans("Jess moves in next month")
