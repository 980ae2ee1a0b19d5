"""A question's irregular verb is looked up in all its forms (``kura.recall.forms``): first on
the conversational store with the real model, where "choose" found only the memory that says
"choose" and not the one that says "chose"; then the table and the rows it merges."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import write_memory

from kura.recall import forms
from kura.recall.embed import Unavailable
from kura.recall.search import SearchIndex
from kura.store.store import Store

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


def test_the_forms_of_a_verb() -> None:
    assert set(forms.others("get")) == {"got", "gotten"}
    assert forms.others("bought") == ("buy",)
    assert set(forms.others("chose")) == {"choose", "chosen"}
    for alone in ("did", "had", "was", "played", "fall", "left", "rose", "ground", "say", "nadia"):
        assert forms.others(alone) == (), alone  # auxiliaries, everyday nouns, regular verbs


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
