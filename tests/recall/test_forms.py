"""A question's irregular verb is looked up in all its forms (``kura.recall.forms``), and an
ordinal number as its cardinal: first on the conversational store with the real model, where
"choose" found only the memory that says "choose" and not the one that says "chose"; through a
real ``kura recall`` on a small chat store, where "fiftieth" found only the party and not the
day Joan "turns fifty"; then the table and the rows it merges."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import write_memory

from kura.recall import forms
from kura.recall.embed import Unavailable, load_embedder
from kura.recall.search import SearchIndex
from kura.store.store import Store
from tests.recall.test_answers import chat_of_two
from tests.recall.test_converse import embedded, recall

CONVERSATIONAL = (
    Path(__file__).resolve().parents[2] / "bench" / "eval" / "conversational" / "observations.txt"
)


def test_the_memory_that_says_chose_answers_which_book_did_i_choose(tmp_path: Path) -> None:
    """Before: the host rotation ("has to choose the book") first, Oskar's pick second, Sam's
    own pick ("Sam chose …") third."""
    for line in CONVERSATIONAL.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            slug, day, who, said = (part.strip() for part in line.split("|", 3))
            write_memory(tmp_path, slug, "user", said, body=f"Said by {who} in the chat of {day}: {said}")
    index = SearchIndex(Store(tmp_path))
    index.update()
    hits = index.search("Which book did I choose for book club?", k=3).hits
    assert hits[0].slug == "book-club-april-pick"
    assert hits[0].lexical > 0  # it holds the question's verb now
    index.close()


def test_an_ordinal_in_the_question_is_held_by_the_memory_saying_its_number(
    tmp_path: Path, user_cache: Path
) -> None:
    """Before: "Joan's fiftieth in Cork was a loud party" held the question's words (share 0.54)
    and "Joan turns fifty on 3 July" fewer (0.20); now both hold them alike."""
    if isinstance(load_embedder(), Unavailable):
        pytest.skip("the built-in embedder is not installed")
    store = embedded(chat_of_two(tmp_path / "store"), user_cache)
    code, found = recall(store, "What date is Joan's fiftieth?", "--explain")
    words = {row["slug"]: row["lexical"] for row in found["explain"]}
    assert code == 0 and words["ruth-joan-party"] > 0
    assert words["ruth-joan-turns"] == pytest.approx(words["ruth-joan-party"])


def test_the_forms_of_a_verb() -> None:
    assert set(forms.others("get")) == {"got", "gotten"}
    assert forms.others("bought") == ("buy",)
    assert set(forms.others("chose")) == {"choose", "chosen"}
    for alone in ("did", "had", "was", "played", "fall", "left", "rose", "ground", "say", "nadia"):
        assert forms.others(alone) == (), alone  # auxiliaries, everyday nouns, regular verbs
    assert forms.others("fortieth") == ("forty",) and forms.others("twelve") == ("twelfth",)
    for alone in ("first", "second", "third", "one"):
        assert forms.others(alone) == (), alone  # words of their own


def test_a_memory_holding_any_form_holds_the_word(tmp_path: Path) -> None:
    """On a real index (words only): "buy" is held by the memory that says "bought" and by the
    one that says "buys" (the stemmer's own), each once; other words are looked up as before."""
    write_memory(tmp_path, "ladder", "project", "Tomas bought a new ladder for the loft")
    write_memory(tmp_path, "flour", "project", "Nell buys flour from Holgate Mill")
    write_memory(tmp_path, "van", "project", "the van is charged overnight")
    index = SearchIndex(Store(tmp_path), embedder=Unavailable("the words are enough here"))
    index.update()
    asked: list[list[str]] = []

    def lookup(words: list[str]) -> list[np.ndarray]:
        asked.append(list(words))
        return index.word_rows(words)

    buy, van = forms.rows(lookup, ["buy", "van"])
    assert asked == [["buy", "van", "bought"]]  # one lookup for every word and form
    assert len(buy) == 2 and len(set(buy.tolist())) == 2
    assert len(van) == 1
    index.close()
