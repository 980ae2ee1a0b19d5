"""The second hop (``kura.recall.hop``) on bench/eval/longchat as a real store: what it finds
and what it costs (no text embedded but the question)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_converse import Counting, chat_store, embedded

from kura.recall import hop
from kura.recall.embed import load_embedder
from kura.recall.recall import FLOOR, recall
from kura.recall.search import SearchIndex
from kura.store.store import Store

TWO_RACES = "How much slower per kilometre was Owen in the half marathon than in his first 10k?"
BOOK = "Which real dog shares a fear with the hero of Priya's children's book?"
SONG = "Which place is the song Mr Ferris danced to named after?"


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    return embedded(chat_store(tmp_path_factory.mktemp("hop") / "store"), user_cache)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def test_a_recall_that_hops_embeds_only_the_question(chat: Path) -> None:
    """The hop reads the lead's stored vector and the question's, and embeds no words of its
    own (before, it embedded the lead's rare words as a second query: a second model run on
    every warm recall that hopped)."""
    store = Store(chat)
    built = SearchIndex(store)
    built.update()
    built.close()
    counting = Counting(load_embedder())
    index = SearchIndex(store, embedder=counting)  # type: ignore[arg-type]
    try:
        index.update()
        first = index.search(BOOK, k=12)
        hopped = hop.second_hop(index, BOOK, first, 12, least=FLOOR)
        assert hopped.hits[0].slug == "nadia-book-project"
        assert hopped != first  # it did hop: the real dog climbed from past 12th
        assert "nadia-bruno-afraid-stairs" in [h.slug for h in hopped.hits[:5]]
        before = len(counting.asked)
        found = recall(store, BOOK, hops=0, index=index, explain=True)
        assert "nadia-bruno-afraid-stairs" in [row["slug"] for row in found.explain[:5]]
        embedded = counting.asked[before:]
        assert embedded and all(_words(text) <= _words(BOOK) for text in embedded), embedded
    finally:
        index.close()


def test_both_memories_of_a_two_race_question_rank_in_the_first_five(chat: Path) -> None:
    """The half marathon's result and the first 10k's: the question leads to the trail 10k,
    whose "June" and "10k" bear on the first 10k's own memory (10th before, by a second search
    for "58 mud result june trail")."""
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(chat), "recall", TWO_RACES, "--json", "--explain", "--no-model"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    order = [row["slug"] for row in json.loads(done.stdout)["explain"]]
    assert {"owen-half-result", "owen-10k-result"} <= set(order[:5]), order[:10]


def test_a_word_only_the_lead_holds_bridges_to_nothing(chat: Path) -> None:
    """The hop's words are held by the lead and at least one other memory: "nobody" and
    "attached" (the shelter memory's alone) were two of the five the hop searched with."""
    index = SearchIndex(Store(chat))
    try:
        index.update()
        question = "The greyhound Nadia adopted: what did the vet take out?"
        lead = index.search(question, k=12).hits[0]
        (text,) = index.db.execute("SELECT description FROM docs_fts WHERE slug = ?", (lead.slug,)).fetchone()
        total = len(index.matrix().slugs)
        words = [bridge.word for bridge in hop.bridging(index, text, question, total)]
        assert words and "nobody" not in words and "attached" not in words
        assert all(len(bridge.rows) >= 2 for bridge in hop.bridging(index, text, question, total))
    finally:
        index.close()


def test_a_memory_written_since_the_last_hop_is_counted(chat: Path, tmp_path: Path) -> None:
    """The counts the hop keeps are the index's: a word only the lead held becomes a bridge
    once a new memory holds it too."""
    import shutil

    store = tmp_path / "store"
    shutil.copytree(chat, store, ignore=shutil.ignore_patterns(".kura"))
    index = SearchIndex(Store(store))
    try:
        index.update()
        lead = index.search(BOOK, k=12).hits[0]
        assert lead.slug == "nadia-book-project"
        (text,) = index.db.execute("SELECT description FROM docs_fts WHERE slug = ?", (lead.slug,)).fetchone()
        total = len(index.matrix().slugs)
        assert "agreed" not in [b.word for b in hop.bridging(index, text, BOOK, total)]
        said = "Priya agreed to a sequel about the greyhound at the seaside."
        (store / "priya-sequel.md").write_text(
            f"---\nname: priya sequel\ndescription: {said}\ntype: user\n---\n\n{said}\n", encoding="utf-8"
        )
        index.update()
        total = len(index.matrix().slugs)
        assert "agreed" in [b.word for b in hop.bridging(index, text, BOOK, total)]
    finally:
        index.close()


def test_a_word_and_its_accented_form_are_one_bridge(chat: Path) -> None:
    """The fête memory's name is made from its slug ("fete") and its body says "fête": the
    full-text index folds accents, so the two hold the same rows. Counted as two bridges they
    weighed the fête's other memories double, and the song the question asks about ranked 6th
    behind them; as one word it is in the first five with the dance that names it."""
    index = SearchIndex(Store(chat))
    try:
        index.update()
        lead = index.search(SONG, k=12).hits[0]
        assert lead.slug == "owen-fete-ferris-dance"
        text = " ".join(
            index.db.execute("SELECT name, body FROM docs_fts WHERE slug = ?", (lead.slug,)).fetchone()
        )
        assert "fete" in text and "fête" in text
        words = [bridge.word for bridge in hop.bridging(index, text, SONG, len(index.matrix().slugs))]
        assert words and len({word.replace("ê", "e") for word in words}) == len(words), words
    finally:
        index.close()
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(chat), "recall", SONG, "--json", "--explain", "--no-model"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    order = [row["slug"] for row in json.loads(done.stdout)["explain"]]
    assert {"owen-new-song-name", "owen-fete-ferris-dance"} <= set(order[:5]), order[:10]


@pytest.mark.parametrize(
    ("one", "other", "same"),
    [
        ("fête", "fete", True),
        ("café", "cafe", True),
        ("zürich", "zurich", True),
        ("zürich", "zurück", False),
        ("が", "か", False),
    ],
)
def test_only_a_latin_letters_accents_are_dropped_from_a_bridge_word(
    one: str, other: str, same: bool
) -> None:
    """As the full-text index folds them: a Latin letter's accents go; a kana's voicing mark
    makes a different word, and a hangul syllable is kept whole (before, "fête" and "fete"
    were two keys, so both became bridges)."""
    assert (hop.stem(one) == hop.stem(other)) is same
    assert hop.stem("한국어") == "한국어"


def test_a_count_cut_at_a_smaller_cap_is_counted_again_for_a_bigger_one(chat: Path) -> None:
    """``hop.held`` keeps its counts for ``kura.recall.headed`` too, which asks with a bigger
    cap (15 % of the store, not 5 %): a count the hop cut short is no count for it."""
    index = SearchIndex(Store(chat))
    try:
        index.update()
        hop._COUNTS.pop(index, None)
        (whole,) = index.db.execute("SELECT count(*) FROM docs_fts WHERE docs_fts MATCH 'nadia'").fetchone()
        assert whole > 20
        assert hop.held(index, "nadia", 5) == 6  # counted no further than the cap + 1
        assert hop.held(index, "nadia", 10_000) == whole
        assert hop.held(index, "nadia", 5) == 6  # the whole count, still cut at the cap asked
    finally:
        index.close()
