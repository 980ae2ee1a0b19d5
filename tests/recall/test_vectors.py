"""The question's product with every memory's vector, taken one column at a time without BLAS,
gives what the BLAS product gave: the same numbers to float32 rounding and the same ranking,
cold (the float16 matrix in chunks) and warm (the float32 copy), over a real index."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from kura.recall import vectors
from kura.recall.search import SearchIndex
from kura.store.store import Store

QUESTIONS = (
    "how do I run the tests?",
    "where do nightly database dumps go",
    "can I ship on Friday evening",
    "who reviews the pull requests",
)


@pytest.fixture
def index(tmp_path: Path, sample_copy: Callable[[Path], Path]) -> Iterator[SearchIndex]:
    opened = SearchIndex(Store(sample_copy(tmp_path / "store")))
    assert opened.update() == 40
    yield opened
    opened.close()


def _blas(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    out: np.ndarray = rows @ query
    return out


def test_the_products_are_the_blas_products_cold_and_warm(index: SearchIndex) -> None:
    matrix = vectors.load(index.db, index.embedder.model_id, 384)
    asked = index.embedder.embed(list(QUESTIONS))
    expected = _blas(matrix.half.astype(np.float32), asked.T)
    cold = matrix.cosines(asked.T)  # the first question: float16 chunks
    warm = matrix.cosines(asked.T)  # the second: the float32 copy
    one = matrix.cosines(asked[0])
    assert matrix.full is not None  # both paths were taken
    for got in (cold, warm):
        assert got.shape == expected.shape and got.dtype == np.float32
        assert np.abs(got - expected).max() < 1e-6
        assert (np.argsort(-got, axis=0, kind="stable") == np.argsort(-expected, axis=0, kind="stable")).all()
    assert np.abs(one - expected[:, 0]).max() < 1e-6


def test_a_search_ranks_and_scores_as_it_did_through_blas(
    index: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = [index.search(question, k=10).hits for question in QUESTIONS * 2]  # cold, then warm
    monkeypatch.setattr(vectors, "products", _blas)
    index.filled()  # the matrix is read again: the cold path once more, through BLAS
    before = [index.search(question, k=10).hits for question in QUESTIONS * 2]
    for now, then in zip(found, before, strict=True):
        assert [hit.slug for hit in now] == [hit.slug for hit in then]
        assert max(abs(a.score - b.score) for a, b in zip(now, then, strict=True)) < 1e-6
