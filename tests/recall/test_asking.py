"""A warm process embeds its questions on one thread: the same vectors as the shared session
to float32 rounding, the same hits, and every other embedder used as it is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from kura.recall import asking
from kura.recall.embed import Embedder, load_embedder
from kura.recall.search import SearchIndex
from kura.store.store import Store

QUESTIONS = [
    "how do I run the tests?",
    "本番環境のデプロイ手順は？",
    "",
    "who fixes the oven when it breaks " * 6,
]


def test_questions_go_through_a_one_thread_session_with_the_same_vectors() -> None:
    shared = load_embedder()
    assert isinstance(shared, Embedder) and not shared.quick
    twin = asking.side(shared)
    assert isinstance(twin, Embedder) and asking.side(shared) is twin
    assert twin is shared  # the optimised session has one thread (its builds run a batch a core)
    options = twin.session.get_session_options()
    assert options.intra_op_num_threads == 1  # today's questions ran on the shared, all-core session
    assert np.abs(twin.embed(QUESTIONS) - shared.embed(QUESTIONS)).max() < 1e-5


def test_a_quick_embedder_or_another_kind_is_used_as_it_is() -> None:
    quick = load_embedder(quick=True)
    assert asking.side(quick) is quick
    other = object()
    assert asking.side(other) is other


def test_a_search_finds_what_the_shared_session_found(
    tmp_path: Path, sample_copy: Callable[[Path], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    index = SearchIndex(Store(sample_copy(tmp_path / "store")))
    index.update()
    asked = ["how do I run the tests?", "where do nightly database dumps go", "can I ship on Friday evening"]
    mine = [index.search(question).hits for question in asked]
    index._asked.clear()
    monkeypatch.setattr(asking, "side", lambda embedder: embedder)
    shared = [index.search(question).hits for question in asked]
    for now, then in zip(mine, shared, strict=True):
        assert [hit.slug for hit in now] == [hit.slug for hit in then]
        assert max(abs(a.score - b.score) for a, b in zip(now, then, strict=True)) < 1e-5
    index.close()
