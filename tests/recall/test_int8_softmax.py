"""The integer model runs its attention without the softmax's NaN guard, which cannot fire:
the same vectors bit for bit, with padded rows in the batch, and the guard kept wherever the
graph is not the shape that proves it idle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from kura.recall import int8
from kura.recall.int8_softmax import unguarded
from tests.recall.test_int8_rows import _embedder, _source

SENTENCES = [
    "How do we restore the nightly postgres backup?",
    "本番環境のデプロイ手順は？",
    "",  # [CLS] [SEP] and nothing else: the row with the most masked keys in its batch
    "x",
    "Zoë said on 3 March that the landlord's agent, not the landlord, answers about the boiler. " * 8,
]


def _kinds(model: bytes) -> list[str]:
    import onnx

    return [node.op_type for node in onnx.load_from_string(model).graph.node]


def test_the_integer_model_has_no_nan_guard() -> None:
    kinds = _kinds(int8.build(_source()))
    assert kinds.count("Softmax") == 6
    assert kinds.count("IsNaN") == 0  # the pinned model's graph: one a layer
    assert kinds.count("Where") == 1  # the mask, made once for the 6 layers


@pytest.mark.parametrize("quick", [True, False])
def test_the_vectors_are_the_guarded_graphs_bit_for_bit(quick: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = int8.build(_source())

    def kept(nodes: list[Any], finite: Callable[[str], bool]) -> list[Any]:
        return nodes

    monkeypatch.setattr(int8, "unguarded", kept)
    guarded = int8.build(_source())
    assert _kinds(guarded).count("IsNaN") == 6
    mine = _embedder(plain, quick=quick)
    theirs = _embedder(guarded, quick=quick)
    together = mine.embed(SENTENCES)  # one batch: the short rows padded to the long one
    assert np.array_equal(together, theirs.embed(SENTENCES))
    alone = np.vstack([mine.embed([text]) for text in SENTENCES])  # no padding at all
    assert np.array_equal(alone, np.vstack([theirs.embed([text]) for text in SENTENCES]))


class _Node:
    def __init__(self, op_type: str, inputs: list[str], output: str) -> None:
        self.op_type, self.input, self.output = op_type, list(inputs), [output]


def _attention(fill: str) -> list[Any]:
    return [
        _Node("Where", ["keep", "zero", fill], "mask"),
        _Node("Add", ["scores", "mask"], "masked"),
        _Node("Softmax", ["masked"], "p"),
        _Node("IsNaN", ["p"], "nan"),
        _Node("Where", ["nan", "zero", "p"], "guarded"),
        _Node("MatMul", ["guarded", "values"], "out"),
    ]


def test_the_guard_is_kept_where_a_masked_score_could_be_minus_infinity() -> None:
    constants = {"zero": 0.0, "lowest": -3.4e38, "minus_inf": float("-inf")}

    def finite(name: str) -> bool:
        return name in constants and np.isfinite(constants[name])

    kept = unguarded(_attention("minus_inf"), finite)
    assert [node.op_type for node in kept].count("IsNaN") == 1
    assert unguarded(_attention("computed"), finite)[-1].input == ["guarded", "values"]  # no constant
    dropped = unguarded(_attention("lowest"), finite)
    assert [node.op_type for node in dropped] == ["Where", "Add", "Softmax", "MatMul"]
    assert dropped[-1].input == ["p", "values"]
