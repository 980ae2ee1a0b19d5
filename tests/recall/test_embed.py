"""The dense embedder: the real int8 MiniLM, offline, on the CPU (multiplied on integers)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import kura.recall.embed as embed_module
from kura.recall import int8
from kura.recall.embed import DIM, Embedder, Unavailable, load_embedder
from kura.recall.wordpiece import UNREAD_BUDGET


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


class Counted:
    """The real session, with what each run was given and whether two runs were in it at once."""

    def __init__(self, session: object, *, meet: bool = False) -> None:
        self.session = session
        self.widths: list[tuple[int, int]] = []  # (rows, width) of each run
        self.met: bool | None = None
        self._meet = threading.Barrier(2) if meet else None

    def run(self, names: object, inputs: dict[str, np.ndarray]) -> object:
        self.widths.append(inputs["input_ids"].shape)
        if self._meet is not None and self.met is None:
            try:  # the first two runs wait for each other: they meet only if they run at once
                self._meet.wait(timeout=20)
                self.met = True
            except threading.BrokenBarrierError:
                self.met = False
        return self.session.run(names, inputs)  # type: ignore[attr-defined]


MIXED = [
    "設定更新は queue flaky でデプロイする (KR-1); ticket の方針速度はバックアップ, coverage lockfile を使う。"
    * 3,
    "The deck oven needs 90 minutes to reach 250°C, so it is switched on at 04:30.",
    "who fixes the oven when it breaks",
    "ステージング環境は kobo-8 で動いている。本番とは別のサーバー。",
    "Zoë said on 3 March that the landlord's agent answers about the boiler. " * 6,
    "",
    "Пароль от Wi-Fi в офисе меняется каждый месяц",
]


def test_batches_run_a_core_at_a_time_make_the_vectors_made_one_by_one(embedder: Embedder) -> None:
    texts = [f"{text} {i}" for i in range(12) for text in MIXED]  # many batches, of every length
    together = embedder.embed(texts)
    alone = np.concatenate([embedder.embed([text]) for text in texts])
    assert np.abs(together - alone).max() < 1e-5


def test_a_text_given_twice_is_embedded_once(embedder: Embedder) -> None:
    counted = Counted(embedder.session)
    twice = Embedder(counted).embed([MIXED[1], MIXED[2], MIXED[1]])
    assert sum(rows for rows, _ in counted.widths) == 2
    assert np.array_equal(twice[0], twice[2]) and np.abs(twice[:2] - embedder.embed(MIXED[1:3])).max() < 1e-5


@pytest.mark.skipif(embed_module.cores() < 2, reason="one core: one run at a time")
def test_batches_run_on_every_core_at_once(embedder: Embedder) -> None:
    counted = Counted(embedder.session, meet=True)
    Embedder(counted).embed([f"{MIXED[4]} {i}" for i in range(16)])  # 16 rows of ~100 pieces: 4+ batches
    assert len(counted.widths) >= 2 and counted.met is True


def test_the_optimised_session_is_one_thread_with_the_vectors_of_one_on_every_core(
    embedder: Embedder,
) -> None:
    """A build runs a batch a core at once on a one-thread session (less CPU a memory than
    runs whose threads split each product); the vectors are those of a session on every core."""
    import onnxruntime

    assert embedder.session.get_session_options().intra_op_num_threads == 1  # before: one a core
    options = embed_module.session_options(quick=False)
    options.intra_op_num_threads = 2  # the products split between two threads
    model = int8.cached()
    assert model is not None
    every_core = Embedder(
        onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    )
    texts = [f"{text} {i}" for i in range(4) for text in MIXED]
    assert np.abs(embedder.embed(texts) - every_core.embed(texts)).max() < 1e-5


def test_a_mixed_memory_is_embedded_from_what_the_english_model_reads(embedder: Embedder) -> None:
    counted = Counted(embedder.session)
    text = MIXED[0]  # past the 128-piece cap, one piece a Japanese character
    Embedder(counted).embed([text])
    pieces = embedder.tokenizer.tokenize(text)
    japanese = [piece for piece in pieces if "\u3040" <= piece[-1] <= "\u9fff"]  # kana, ideographs
    read = len(pieces) - len(japanese) - pieces.count("[UNK]")
    assert len(pieces) > 126 and read + UNREAD_BUDGET < 126  # all of it once read to the cap
    assert counted.widths == [(1, 2 + read + UNREAD_BUDGET)]
