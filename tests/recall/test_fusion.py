"""How the dense and lexical signals are fused (``kura.recall.fusion``). First on small stores
whose vectors the test chooses (a scripted embedder), so each rule is seen alone: common words
count for nothing, recency only breaks exact ties, and a question nothing means is refused
however many words it shares. Then the functions on small real arrays, and the rule on a real
store with the real embedder: a question naming something only one memory holds is answered
by its words though the vectors point elsewhere, and a paraphrase by its meaning though a
decoy shares one of its words."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import write_memory

from kura.recall import fusion, timed
from kura.recall.embed import DIM
from kura.recall.recall import recall
from kura.recall.search import SearchIndex
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
    """The decoy holds most of the question's words and is further in meaning. They lift it
    (only it holds them), but the question's rarest word ("get") is in neither memory, so
    the decoy holds a third of the question's weight and the lift is small: the meaning
    decides."""
    write_memory(tmp_path, "levain-feeding", "project", "the levain is fed at six with rye and water")
    write_memory(tmp_path, "decoy", "project", "my mother buys sourdough for breakfast on Sundays")
    question = "when does the sourdough mother get its breakfast"
    vectors = {"levain-feeding": [0.50, 0.866], "decoy": [0.36, 0.93], question: [1.0, 0.0]}
    index = _index(tmp_path, vectors)
    hits = index.search(question, k=2).hits
    assert [h.slug for h in hits] == ["levain-feeding", "decoy"]
    assert hits[0].lexical == 0 and hits[1].lexical > 0.5  # what the floor reads: every word counted
    lifted = hits[1].cosine + timed.LIFT  # type: ignore[operator]  # it asks when; both say when ("at six", "on Sundays")
    assert lifted < hits[1].score < lifted + 0.11


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


def test_only_rare_words_count_and_by_how_rare() -> None:
    """Sixty memories: a word held by one is evidence (IDF 3.70, above ``RARE``), one held
    by five is not (IDF 2.41). In a store of ten no word reaches ``RARE``: there a word held
    by one (IDF 1.99) or two (1.48) is evidence, one held by three (1.15) is not."""
    holders = [np.array([3]), np.array([0, 1, 2, 3, 4])]
    every = fusion.share(holders, 60)
    rare = fusion.share(holders, 60, rare=fusion.rare_above(60))
    assert fusion.rare_above(60) == fusion.RARE
    assert every[3] == pytest.approx(1.0) and every[0] == pytest.approx(0.39, abs=0.01)
    assert rare[3] == pytest.approx(1.0) and rare[0] == 0.0
    small = fusion.rare_above(10)
    assert small == pytest.approx(fusion.SMALL * 1.99, abs=0.01)
    assert [fusion.share([np.arange(held)], 10, rare=small).max() for held in (1, 2, 3)] == [1.0, 1.0, 0.0]


def test_the_words_count_as_far_as_they_are_sure() -> None:
    """The same meaning; the words' weight is ``BASE`` + ``TRUST`` × the best share's lead over
    the third (``pair_lead``): two memories holding the rare word alike are singled out by it
    together, and their meaning decides between them; three holding it alike are not."""
    dense = np.array([0.50, 0.45, 0.40] + [0.1] * 37, dtype=np.float32)  # forty memories
    alone = fusion.fuse(dense, dense, [np.array([2])])  # one memory holds the rare word: it wins
    assert int(np.argmax(alone)) == 2
    assert alone[2] - dense[2] == pytest.approx(fusion.BASE + fusion.TRUST, abs=1e-6)
    pair = fusion.fuse(dense, dense, [np.array([1, 2])])  # two hold it alike: the full weight, each
    full = fusion.BASE + fusion.TRUST
    assert pair - dense == pytest.approx([0.0, full, full] + [0.0] * 37, abs=1e-6)
    assert int(np.argmax(pair)) == 1
    shared = fusion.fuse(dense, dense, [np.array([0, 1, 2])])  # three hold it alike: no lead, BASE
    assert shared - dense == pytest.approx([fusion.BASE] * 3 + [0.0] * 37, abs=1e-6)
    assert int(np.argmax(shared)) == 0


def test_the_words_lift_only_what_the_meaning_does_not_rule_out() -> None:
    """The same sure words, held by a memory at cosine 0.21, 0.23, 0.245 and 0.40: none, a
    fifth, half and all of the lift."""
    lifts = []
    for cosine in (0.21, 0.23, 0.245, 0.40):
        dense = np.array([cosine] + [0.1] * 19, dtype=np.float32)
        lifts.append(float(fusion.fuse(dense, dense, [np.array([0])])[0]) - cosine)
    full = fusion.BASE + fusion.TRUST
    assert lifts == pytest.approx([0.0, 0.2 * full, 0.5 * full, full], abs=1e-5)
    assert fusion.lead(np.array([0.9, 0.2, 0.7])) == pytest.approx(0.2)
    assert fusion.lead(np.array([0.4])) == pytest.approx(0.4) and fusion.lead(np.array([])) == 0.0
    assert fusion.pair_lead(np.array([0.9, 0.0, 0.88, 0.2])) == pytest.approx(0.7)  # a pair alike
    assert fusion.pair_lead(np.array([0.9, 0.0, 0.7, 0.2])) == pytest.approx(0.2)  # no pair: over the second
    assert fusion.pair_lead(np.array([1.0, 0.768, 0.232, 0.232])) == pytest.approx(0.232)
    assert fusion.pair_lead(np.array([0.5, 0.0, 0.5])) == pytest.approx(0.5)  # only two hold any
    assert fusion.pair_lead(np.array([0.5, 0.0, 0.3])) == pytest.approx(0.2)
    assert fusion.pair_lead(np.array([0.0, 0.0])) == 0.0 and fusion.pair_lead(np.array([])) == 0.0


def test_the_meaning_blends_the_focused_question_only_when_there_is_one() -> None:
    cosines = np.array([0.8, 0.2], dtype=np.float32)
    assert fusion.meaning(cosines, None) is cosines
    assert fusion.meaning(cosines, np.array([0.0, 1.0])) == pytest.approx([0.6, 0.4])


EVAL = Path(__file__).resolve().parents[2] / "bench" / "eval"


def _chats(root: Path) -> Store:
    """The long chats' observations that name Nadia or a painting, one memory each, as
    ``bench/recall_quality.py`` writes them."""
    for line in (EVAL / "longchat" / "observations.txt").read_text().splitlines():
        if line.startswith("#") or "|" not in line:
            continue
        slug, day, who, said = (part.strip() for part in line.split("|", 3))
        if "nadia" in said.lower() or "paint" in said.lower():
            write_memory(root, slug, "user", said, body=f"Said by {who} in the chat of {day}: {said}")
    return Store(root)


def test_a_name_is_found_by_its_words_and_a_paraphrase_by_its_meaning(tmp_path: Path) -> None:
    """Two questions the old rule (cosine + 0.2 × the share of every word) got wrong. "pocket
    money" is in one observation: the vectors rank many about Nadia's paintings above it, the
    words are sure. In the bakery store "mother culture" shares "mother" with grandma's
    Saturdays, not with the sourdough starter it means: one word, held by one memory, of a
    question whose other rare words nothing holds, so its lead is small and the meaning decides."""
    chats = _chats(tmp_path / "chats")
    index = SearchIndex(chats)
    index.update()
    who = "Who wanted to spend his pocket money on one of Nadia's paintings?"
    hits = index.search(who, k=len(chats.slugs())).hits
    by_cosine = sorted(hits, key=lambda hit: -(hit.cosine or 0.0))
    assert hits[0].slug == "owen-at-winter-show"
    assert [h.slug for h in by_cosine].index("owen-at-winter-show") >= 5  # the vectors mislead
    bakery = tmp_path / "bakery"
    shutil.copytree(EVAL / "store", bakery, ignore=shutil.ignore_patterns(".kura"))
    index = SearchIndex(Store(bakery))
    index.update()
    hits = index.search("What grain do we give the mother culture, and how warm is its home?", k=64).hits
    assert hits[0].slug == "sourdough-starter-feeding"
    decoy = next(h for h in hits if h.slug == "grandma-rut-saturdays")
    assert decoy.lexical > 0 and hits[0].lexical == 0  # the words mislead


def test_the_lead_is_the_partitions_lead_on_ties_zeros_and_one_best() -> None:
    rng = np.random.default_rng(5)
    for size in (2, 3, 50, 20_000):
        for shares in (
            np.zeros(size),
            rng.random(size),
            np.where(rng.random(size) < 0.9, 0.0, rng.random(size)),
        ):
            shares = shares.astype(np.float32)
            first, second = np.partition(shares, size - 2)[-2:][::-1]
            assert fusion.lead(shares) == float(first - second)
    assert fusion.lead(np.array([0.5, 0.5, 0.1], dtype=np.float32)) == 0.0  # a tie for best: no lead
