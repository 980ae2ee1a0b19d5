"""The dense embedder: the real int8 MiniLM, offline, on the CPU (multiplied on integers)."""

from __future__ import annotations

import numpy as np
import pytest

import kura.recall.embed as embed_module
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


# Two texts' first eight components as the embedder made them before its session options
# changed (no spinning, the model read from its path): the same inputs, the same vectors.
# Pinned again when the model became kura.recall.int8's integer one (its own key, w8a8).
PINNED = {
    "The deck oven needs 90 minutes to reach 250°C, so it is switched on at 04:30.": [
        0.07635, 0.04779, -0.03357, -0.00145, -0.00679, -0.02897, -0.04090, -0.02613,
    ],
    "Fiona Reyes prepares the company accounts": [
        -0.00804, -0.04682, 0.02127, 0.03517, 0.02132, 0.01299, 0.03162, -0.04774,
    ],
}  # fmt: skip


def test_identical_inputs_still_make_the_same_vectors(embedder: Embedder) -> None:
    vectors = embedder.embed(list(PINNED))
    assert np.allclose(vectors[:, :8], np.asarray(list(PINNED.values())), atol=2e-3)
    quick = load_embedder(quick=True)
    assert not isinstance(quick, Unavailable)
    assert np.allclose(quick.embed(list(PINNED)), vectors, atol=2e-3)


def test_the_model_file_is_not_held_in_memory_after_loading() -> None:
    import tracemalloc

    cached = [f for f in vars(embed_module).values() if getattr(f, "__module__", "") == embed_module.__name__]
    cached = [f for f in cached if hasattr(f, "cache_clear")]  # whatever this module caches
    for function in cached:
        function.cache_clear()
    embed_module.minilm()  # the vocabulary is the tokenizer's, not the model's
    tracemalloc.start()
    try:
        loaded = embed_module._load(True)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        for function in cached:
            function.cache_clear()
    assert not isinstance(loaded, Unavailable), loaded
    assert held < 4 << 20  # the 23 MB file is onnxruntime's to read; Python keeps none of it


def test_a_waiting_onnxruntime_thread_does_not_spin() -> None:
    options = embed_module.session_options(quick=False)
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.enable_cpu_mem_arena  # off, a batch's peak memory doubles (measured)
