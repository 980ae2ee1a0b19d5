"""The integer model picks its embedding tables' rows before turning them into floats: the
same vectors bit for bit, and no float copy of the 30,522-row word table on any run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kura.recall.embed as embed_module
from kura.recall import int8
from kura.recall.embed import Embedder, session_options

SENTENCES = [
    "How do we restore the nightly postgres backup?",
    "本番環境のデプロイ手順は？",
    "",
    "Zoë said on 3 March that the landlord's agent, not the landlord, answers about the boiler. " * 8,
]


def _source() -> Path:
    path = embed_module._model_path()
    assert isinstance(path, Path)
    return path


def _embedder(model: bytes, *, quick: bool) -> Embedder:
    import onnxruntime

    session = onnxruntime.InferenceSession(model, session_options(quick), providers=["CPUExecutionProvider"])
    return Embedder(session, quick=quick)


def test_the_tables_rows_are_picked_before_any_float_is_made() -> None:
    import onnx

    graph = onnx.load_from_string(int8.build(_source())).graph
    readers = {
        name: [n.op_type for n in graph.node if name in n.input]
        for name in (t.name for t in graph.initializer)
    }
    for table in (
        "inner.embeddings.word_embeddings.weight_q",
        "inner.embeddings.position_embeddings.weight_q",
    ):
        assert readers[table] == ["Gather"]  # today's graph: a Cast of the whole table on every run
    assert not any(t.dims == [30522, 384] and t.data_type == 1 for t in graph.initializer)


@pytest.mark.parametrize("quick", [True, False])
def test_the_vectors_are_the_whole_table_graphs_bit_for_bit(
    quick: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows_first = int8.build(_source())

    def unchanged(nodes: list[Any], inits: dict[str, Any], node: Any) -> list[Any]:
        return nodes

    monkeypatch.setattr(int8, "rows_first", unchanged)
    whole_table = int8.build(_source())
    assert whole_table != rows_first
    mine = _embedder(rows_first, quick=quick).embed(SENTENCES)
    assert np.array_equal(mine, _embedder(whole_table, quick=quick).embed(SENTENCES))
