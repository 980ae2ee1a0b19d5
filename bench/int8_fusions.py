"""Fused forms of the integer model's ops, for bench/index_levers.py to measure (not used by kura).

- ``gelu``: each feed-forward's bias ``Add`` and erf GELU (Div, Erf, Add, Mul, Mul: five
  passes over a (tokens, 1536) tensor) as onnxruntime's ``com.microsoft.BiasGelu`` (one pass);
- ``to_float``: each integer product's dequantising (DequantizeLinear by the row scales, the
  zero-point fix, the column scales, then the bias: five passes) as
  ``com.microsoft.MatMulIntegerToFloat`` (the column scales applied inside the product) plus
  a ``Gemm`` that makes ``bias − shift ⊗ (scale · column sums)`` and a Mul and an Add.

Neither keeps the vectors bit for bit: a float rounded in another order can move an
activation across a rounding step of the next 8-bit quantisation, so the vectors move by up
to ~0.001 in cosine, and the model's key (``embed.MODEL_ID``) would have to change.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import helper, numpy_helper


def _users(nodes: list[Any]) -> dict[str, list[Any]]:
    users: dict[str, list[Any]] = {}
    for node in nodes:
        for name in node.input:
            users.setdefault(name, []).append(node)
    return users


def _ms(model: Any) -> None:
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))


def gelu(model: Any) -> Any:
    graph = model.graph
    nodes = list(graph.node)
    made_by = {out: n for n in nodes for out in n.output}
    users = _users(nodes)
    inits = {t.name for t in graph.initializer}
    swap: dict[int, Any] = {}
    drop: set[int] = set()
    for erf in (n for n in nodes if n.op_type == "Erf"):
        div = made_by[erf.input[0]]
        add1 = users[erf.output[0]][0]
        half = users[add1.output[0]][0]
        times_x = users[half.output[0]][0]
        bias = made_by[div.input[0]]
        if bias.op_type != "Add" or bias.input[1] not in inits:
            continue
        drop |= {id(div), id(erf), id(add1), id(half), id(times_x)}
        out = times_x.output[0]
        fused = helper.make_node("BiasGelu", list(bias.input), [out], out + "_fused", domain="com.microsoft")
        swap[id(bias)] = fused
    kept = [swap.get(id(n), n) for n in nodes if id(n) not in drop]
    del graph.node[:]
    graph.node.extend(kept)
    _ms(model)
    return model


def to_float(model: Any) -> Any:
    graph = model.graph
    nodes = list(graph.node)
    made_by = {out: n for n in nodes for out in n.output}
    users = _users(nodes)
    inits = {t.name: t for t in graph.initializer}
    added = [numpy_helper.from_array(np.array(1.0, np.float32), "w8a8_one")]
    swap: dict[int, list[Any]] = {}
    drop: set[int] = set()
    for product in (n for n in nodes if n.op_type == "MatMulInteger"):
        p = product.output[0][: -len("_i32")]
        dequant = users[product.output[0]][0]
        sub = users[dequant.output[0]][0]
        by_scale = users[sub.output[0]][0]
        fix = made_by[sub.input[1]]
        reshape = users[by_scale.output[0]][0]
        add = users[reshape.output[0]][0]
        plain = add.op_type == "Add" and add.input[1] in inits  # else the bias is the GELU's
        column = numpy_helper.to_array(inits[by_scale.input[1]]) * numpy_helper.to_array(inits[fix.input[1]])
        added.append(numpy_helper.from_array(-column.reshape(1, -1).astype(np.float32), p + "_negcolumn"))
        out = add.output[0] if plain else reshape.output[0]
        bias = [add.input[1]] if plain else []
        swap[id(product)] = [
            helper.make_node(
                "MatMulIntegerToFloat", [*product.input, "w8a8_one", by_scale.input[1]], [p + "_F"], p + "_F",
                domain="com.microsoft",
            ),
            helper.make_node("Gemm", [fix.input[0], p + "_negcolumn", *bias], [p + "_G"], p + "_G"),
            helper.make_node("Unsqueeze", [dequant.input[1], "w8a8_axis1"], [p + "_rows"], p + "_rows"),
            helper.make_node("Mul", [p + "_F", p + "_rows"], [p + "_Fs"], p + "_Fs"),
            helper.make_node("Add", [p + "_Fs", p + "_G"], [p + "_y2"], p + "_y2"),
            helper.make_node("Reshape", [p + "_y2", reshape.input[1]], [out], p + "_y"),
        ]  # fmt: skip
        drop |= {id(dequant), id(sub), id(by_scale), id(fix), id(reshape)} | ({id(add)} if plain else set())
    kept: list[Any] = []
    for node in nodes:
        if id(node) in swap:
            kept += swap[id(node)]
        elif id(node) not in drop:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)
    graph.initializer.extend(added)
    used = {name for node in graph.node for name in node.input}
    tensors = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(tensors)
    _ms(model)
    return model
