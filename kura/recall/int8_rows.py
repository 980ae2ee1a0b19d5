"""The embedding tables' rows picked before they are turned into floats, not after.

The pinned model keeps its word and position tables as int8 with a scale per row, and its
graph turns the whole word table into float32 (``Cast``, then ``Mul`` by the scales: two
30,522 × 384 float tensors, 94 MB) before it picks the question's dozen rows (``Gather``).
The optimised session folds that into a 47 MB constant held for the life of the process;
the quick session of a one-question ``kura recall`` (no folding, no memory arena) makes and
frees both tensors on every run — 94 MB on top of everything else, which was the whole
difference between a cold recall's peak and its 200 MB target at 20,000 memories.

Picking the rows first (``Gather`` of the int8 table and of its scales, then ``Cast`` and
``Mul`` on those rows alone) computes the same numbers bit for bit: the cast and the scaling
are per element and per row, so they commute with choosing rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Node = Callable[..., Any]  # (op, inputs, output, **attributes) -> an onnx node


def rows_first(nodes: list[Any], inits: dict[str, Any], node: Node) -> list[Any]:
    """``nodes`` with every ``Gather`` of a table made as ``Mul(Cast(q), scale)``, its scale one
    per row (``inits``: the initializers by name), rewritten to gather from ``q`` and ``scale``
    and scale only the rows gathered. The whole-table ``Cast`` and ``Mul`` are left in place
    for ``int8._live`` to drop once nothing reads them."""
    made_by = {out: old for old in nodes for out in old.output}
    out: list[Any] = []
    for old in nodes:
        table = _table(old, made_by, inits)
        if table is None:
            out.append(old)
            continue
        q, scale = table
        rows, p = old.input[1], old.output[0]
        out += [
            node("Gather", [q, rows], f"{p}_rows_q", axis=0),
            node("Gather", [scale, rows], f"{p}_rows_scale", axis=0),
            node("Cast", [f"{p}_rows_q"], f"{p}_rows_f", to=1),  # 1: FLOAT
            node("Mul", [f"{p}_rows_f", f"{p}_rows_scale"], p),
        ]
    return out


def _table(gather: Any, made_by: dict[str, Any], inits: dict[str, Any]) -> tuple[str, str] | None:
    """(int8 table, per-row scales) when ``gather`` picks rows of ``Mul(Cast(q), scale)``."""
    if gather.op_type != "Gather" or any(a.name == "axis" and a.i != 0 for a in gather.attribute):
        return None
    mul = made_by.get(gather.input[0])
    if mul is None or mul.op_type != "Mul" or len(mul.input) != 2:
        return None
    cast = made_by.get(mul.input[0])
    if cast is None or cast.op_type != "Cast" or not cast.input[0].endswith("_q"):
        return None
    q, scale = cast.input[0], mul.input[1]
    if scale != q[: -len("_q")] + "_scale" or q not in inits or scale not in inits:
        return None
    if list(inits[scale].dims) != [inits[q].dims[0], 1]:  # not one scale per row
        return None
    return q, scale
