"""The dense embedder: the real int8 MiniLM, offline, on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

from kura.recall.embed import DIM, Embedder, Unavailable, load_embedder


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    loaded = load_embedder()
    assert not isinstance(loaded, Unavailable), loaded
    return loaded


def test_unit_vectors_of_the_right_width(embedder: Embedder) -> None:
    vectors = embedder.embed(["SSD inference chips", "", "x" * 5000])
    assert vectors.shape == (3, DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_padding_in_a_batch_does_not_change_a_vector(embedder: Embedder) -> None:
    alone = embedder.embed(["the archive lives on the slow disk"])[0]
    batched = embedder.embed(["the archive lives on the slow disk", "a much longer sentence " * 20])[0]
    assert float(alone @ batched) > 0.9999


def test_the_same_subject_in_other_words_is_closer_than_another_subject(embedder: Embedder) -> None:
    question, same, other = embedder.embed(
        ["SSD inference chips", "running the 2.6T model off an SSD tier", "the kids' school starts at eight"]
    )
    assert float(question @ same) > float(question @ other) + 0.15
