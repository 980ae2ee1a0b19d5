"""Each question word's rows are kept while the index is the same: the same rows as a query
made now (equivalence), one query a word however often it is asked, and a change to the index
— made by this process or by another ``kura`` process — seen by the next search."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kura.recall import forms, identifiers
from kura.recall.search import SearchIndex, query_words
from kura.recall.word_rows import quote
from kura.store.store import Store

QUESTIONS = ("how do I run the tests?", "where do nightly database dumps go", "who runs the nightly tests")


def _now(index: SearchIndex, word: str) -> np.ndarray:
    (joined,) = index.db.execute(
        "SELECT group_concat(rowid) FROM docs_fts WHERE docs_fts MATCH ?", (quote(word),)
    ).fetchone()
    return np.fromstring(joined or "", sep=",", dtype=np.int64)


def test_kept_rows_are_the_rows_a_query_finds_and_each_word_is_asked_once(
    tmp_path: Path, sample_copy: Callable[[Path], Path]
) -> None:
    index = SearchIndex(Store(sample_copy(tmp_path / "store")))
    index.update()
    words = [word for question in QUESTIONS for word in query_words(question)]
    first = [index.search(question).hits for question in QUESTIONS]
    asked = index._words.queries
    looked_up = {form for word in words for form in (word, *forms.others(word))}  # "run": "ran" too
    assert asked == len(looked_up)  # "tests" and "nightly" twice, queried once
    assert [index.search(question).hits for question in QUESTIONS] == first
    assert index._words.queries == asked  # today's code queried every word of every question
    for word, rows in zip(words, index.word_rows(words), strict=True):
        assert np.array_equal(np.sort(rows), np.sort(_now(index, word)))
    index.close()


def test_an_edit_indexed_here_or_by_another_process_reaches_the_next_search(
    tmp_path: Path, sample_copy: Callable[[Path], Path]
) -> None:
    root = sample_copy(tmp_path / "store")
    index = SearchIndex(Store(root))
    index.update()
    assert index.word_rows(["zanzibarquux"])[0].size == 0
    path = root / "test-command.md"
    path.write_text(path.read_text() + "\nThe flaky ones run under zanzibarquux.\n")
    index.update()  # this process
    assert index.word_rows(["zanzibarquux"])[0].tolist() == _now(index, "zanzibarquux").tolist() != []
    path.write_text(path.read_text() + "\nAnd under quuxzanzibar too.\n")
    assert index.word_rows(["quuxzanzibar"])[0].size == 0
    env = {**os.environ, "KURA_INDEX_BACKGROUND": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), "index"], env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr  # another process brought the same index up to date
    assert index.word_rows(["quuxzanzibar"])[0].tolist() == _now(index, "quuxzanzibar").tolist() != []
    index.close()


def test_a_question_of_thousands_of_words_looks_up_only_its_first_ones(
    tmp_path: Path, sample_copy: Callable[[Path], Path]
) -> None:
    """A pasted log as a question: 3,000 distinct words were 3,000 full-text queries (a 105 KB
    question of 7,000 words: most of a warm recall's 0.35 s) though the model reads its first
    128 pieces. Only the first ``QUESTION_WORDS`` words are looked up; a word past them counts as held
    by no memory, and a question of ordinary length is looked up whole, as before."""
    from kura.recall.word_rows import QUESTION_WORDS

    index = SearchIndex(Store(sample_copy(tmp_path / "store")))
    index.update()
    words = [f"zq{i:04d}x" for i in range(3_000)]
    question = "where do nightly database dumps go " + " ".join(words)
    before = index._words.queries
    hits = index.search(question).hits
    # and an identifier's headline look-up for each of the first ``identifiers.MOST`` (zq0000x is one)
    assert index._words.queries - before <= QUESTION_WORDS + identifiers.MOST
    assert hits and hits[0].slug == index.search("where do nightly database dumps go").hits[0].slug
    rows = index.word_rows(["nightly", *words, "nightly"])
    assert rows[0].size > 0 and all(
        r.size == 0 for r in rows[1:]
    )  # the last "nightly" is past QUESTION_WORDS
    index.close()
