"""How the dense and lexical signals are fused, pinned on small stores whose vectors the
test chooses (a scripted embedder), so each rule is seen alone: the meaning decides, the
question's words only break near-ties, recency only breaks exact ties, and a question
nothing means is refused however many words it shares."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import write_memory

from kura.recall.embed import DIM
from kura.recall.recall import recall
from kura.recall.search import LEXICAL_WEIGHT, SearchIndex
from kura.store.store import Store


class Scripted:
    """An embedder whose vectors the test writes down: a memory's text starts with its
    name (its slug here), a question is looked up whole. Each vector is a few numbers,
    padded with zeros to the model's width and made unit length, so a dot is the cosine."""

    model_id = "scripted"

    def __init__(self, vectors: dict[str, Sequence[float]]) -> None:
        self.vectors = vectors

    def full(self) -> Scripted:
        return self

    def embed(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            numbers = self.vectors.get(text) or self.vectors[text.split(". ", 1)[0]]
            out[row, : len(numbers)] = numbers
            out[row] /= np.linalg.norm(out[row])
        return out


def _index(root: Path, vectors: dict[str, Sequence[float]]) -> SearchIndex:
    embedder: Any = Scripted(vectors)
    index = SearchIndex(Store(root), embedder=embedder)
    index.update()
    return index


def test_a_paraphrase_beats_a_decoy_that_only_shares_the_words(tmp_path: Path) -> None:
    """The decoy holds most of the question's words and is clearly further in meaning: the
    words lift it, but a bonus of at most LEXICAL_WEIGHT cannot carry it past the meaning."""
    write_memory(tmp_path, "levain-feeding", "project", "the levain is fed at six with rye and water")
    write_memory(tmp_path, "decoy", "project", "my mother buys sourdough for breakfast on Sundays")
    question = "when does the sourdough mother get its breakfast"
    vectors = {"levain-feeding": [0.50, 0.866], "decoy": [0.36, 0.93], question: [1.0, 0.0]}
    index = _index(tmp_path, vectors)
    hits = index.search(question, k=2).hits
    assert [h.slug for h in hits] == ["levain-feeding", "decoy"]
    assert hits[0].lexical == 0 and hits[1].lexical > 0.5
    assert hits[1].score - hits[1].cosine == pytest.approx(LEXICAL_WEIGHT * hits[1].lexical)  # type: ignore[operator]
    assert hits[1].cosine + LEXICAL_WEIGHT > hits[0].cosine  # type: ignore[operator]  # all the words would win


def test_a_question_nothing_means_is_refused_though_it_shares_words(tmp_path: Path) -> None:
    """A memory that happens to use the question's rare words, far from it in meaning."""
    write_memory(tmp_path, "van", "project", "the delivery van is charged overnight at the depot")
    write_memory(tmp_path, "oven", "project", "the deck oven takes forty minutes to preheat")
    question = "which depot charges overnight for a boat"
    index = _index(tmp_path, {"van": [0.18, 0.98], "oven": [0.05, 0.0, 1.0], question: [1.0, 0.0]})
    top = index.search(question, k=2).hits[0]
    assert top.slug == "van" and top.lexical > 0.5 and top.cosine is not None and top.cosine < 0.2
    found = recall(Store(tmp_path), question, hops=0, index=index)
    assert (found.picked, found.context) == ((), "")


def test_a_question_it_means_is_answered(tmp_path: Path) -> None:
    write_memory(tmp_path, "van", "project", "the delivery van is charged overnight at the depot")
    write_memory(tmp_path, "oven", "project", "the deck oven takes forty minutes to preheat")
    question = "where does the electric van get its power"
    index = _index(tmp_path, {"van": [0.7, 0.71], "oven": [0.05, 0.0, 1.0], question: [1.0, 0.0]})
    found = recall(Store(tmp_path), question, hops=0, index=index)
    assert [p.slug for p in found.picked] == ["van"]


def test_recency_breaks_a_tie_and_never_a_better_match(tmp_path: Path) -> None:
    """Two copies of one fact score the same: the newer first, whatever its slug. A newer
    memory that matches a little less stays below."""
    said = "the flat's boiler is serviced every October"
    for slug, created, when in (
        ("a-old", "2025-01-10", 1),
        ("b-new", "2026-03-02", 2),
        ("c-newest", "2026-09-01", 3),
    ):
        path = write_memory(tmp_path, slug, "project", said, date=created)
        os.utime(path, (when * 1_000_000, when * 1_000_000))
    question = "when is the boiler serviced"
    vectors = {"a-old": [0.9, 0.2], "b-new": [0.9, 0.2], "c-newest": [0.9, 0.3], question: [1.0, 0.0]}
    index = _index(tmp_path, vectors)
    hits = index.search(question, k=3).hits
    assert [h.slug for h in hits] == ["b-new", "a-old", "c-newest"]
    assert hits[0].score == hits[1].score > hits[2].score


def test_a_name_most_memories_share_does_not_decide_which_of_them(tmp_path: Path) -> None:
    """Ten observations about Nadia, each holding her name. The question names her too, so
    as asked it is closest to the one that mostly shares the name (0.8 against 0.7); the
    question without the common word points at the lake at dawn. A quarter of the dense
    score is that focused look, so the right one ranks first, while whether a memory bears
    on the question is still judged by the question as asked (its ``cosine``)."""
    write_memory(tmp_path, "nadia-watercolour", "user", "Nadia did a watercolour of the water at dawn")
    write_memory(tmp_path, "nadia-named", "user", "Nadia said Nadia is a name her mother chose")
    others = [f"nadia-other-{i}" for i in range(8)]
    for slug in others:
        write_memory(tmp_path, slug, "user", f"Nadia bought bread number {slug[-1]}")
    question = "When did Nadia paint the lake?"
    vectors: dict[str, list[float]] = {
        "nadia-watercolour": [0.7, 0.0, 0.714],
        "nadia-named": [0.8, 0.6, 0.0],
        question: [1.0, 0.0, 0.0],
        "When did paint the lake": [0.0, 0.0, 1.0],
        **{slug: [0.1, 0.0, 0.0, 1.0] for slug in others},
    }
    index = _index(tmp_path, vectors)
    hits = index.search(question, k=3).hits
    assert [h.slug for h in hits[:2]] == ["nadia-watercolour", "nadia-named"]
    assert hits[0].cosine == pytest.approx(0.7, abs=1e-3) and hits[1].cosine == pytest.approx(0.8, abs=1e-3)
    found = recall(Store(tmp_path), question, hops=0, index=index)
    assert [p.slug for p in found.picked] == ["nadia-watercolour", "nadia-named"]
