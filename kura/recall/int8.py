"""The embedder's integer model: the pinned model's int8 weights times 8-bit activations.

The pinned ONNX file stores MiniLM's weights as int8 with a scale per output column, but it
multiplies in float32: each weight is turned back into a float before its matrix product.
This module rewrites that graph, once per machine, so that each of its 36 weight products
runs on integers (onnxruntime's ``MatMulInteger``): the activations entering it are
quantised to 8 bits *per token* (each row its own scale and zero point, so a token with one
large feature does not coarsen every other token of the batch) and multiplied by the
pinned int8 weights themselves, unchanged; the product is scaled back to float32.

Measured (bench, 300 memory texts against the pinned model, 2 threads, interleaved): CPU a
row 25.8 → 14.4 ms; cosine to the pinned model's vector ≥ 0.9986 for every row (mean
0.9994). onnxruntime's own ``quantize_dynamic`` was faster (12.6 ms) but requantises the
weights per tensor and the activations per batch: mean cosine 0.956, and recall refused
more answerable questions (bench/recall_quality.py: 5 → 9 of 136). Two more rewrites keep
the numbers bit for bit: the embedding tables' rows are picked before they are floats
(``kura.recall.int8_rows``), and the softmax's NaN guard, which cannot fire, is dropped
(``kura.recall.int8_softmax``).

The file is made deterministically from the hash-checked pinned model (never downloaded),
kept in the user's cache folder under a name that carries its hash (never in a store's
``.kura/``, which may come from a stranger), and run only when its sha256 is
``INT8_SHA256``: a missing, truncated or altered file is made again before anything runs.
Making it needs the ``onnx`` package (imported only then); the cached file needs only
onnxruntime.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kura.errors import KuraError
from kura.recall.int8_rows import rows_first
from kura.recall.int8_softmax import unguarded
from kura.store.atomic import write_atomic

# the sha256 of the file ``build`` makes from the pinned model
INT8_SHA256 = "ad431787e70f3c6d06111883941fe9db145b466e98f96ba6ce4514c6cd91ea57"
# named by its hash: two kura releases on one machine each keep their own, never remaking
# the other's on every load
NAME = f"all-MiniLM-L6-v2-w8a8-{INT8_SHA256[:16]}.onnx"
PACK = False  # bench/index_levers.py measures it
PRODUCTS = 36  # weight products in MiniLM-L6: per layer Q, K, V, attention output, two feed-forward


class BuildFailed(Exception):
    """The pinned model could not be rewritten (onnx missing, or not the graph expected)."""


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/kura``, else ``~/.cache/kura``: the user's own, not a store's."""
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "kura"


def digest(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError:
        return None


def cached() -> Path | None:
    """The cached integer model, if its sha256 is the pinned one (read in blocks)."""
    path = cache_dir() / NAME
    return path if digest(path) == INT8_SHA256 else None


def integer_model(source: Path) -> Path | bytes:
    """The integer model made anew from the pinned ``source`` (already hash-checked) when
    ``cached()`` found none, and cached. A model that was made but whose bytes differ from
    the pin (another onnx release may write them in another order) is returned as bytes to
    run from memory, and not cached. BuildFailed if it cannot be made."""
    path = cache_dir() / NAME
    data = build(source)
    if hashlib.sha256(data).hexdigest() != INT8_SHA256:
        return data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    except (OSError, KuraError):  # a cache that cannot be written only makes the next load slower
        return data
    return path


def build(source: Path, *, pack: bool = PACK) -> bytes:
    """The rewritten model's bytes: deterministic for the pinned ``source``. ``pack``: the
    products that read one input (a layer's Q, K and V) as one product (``_packed``)."""
    try:
        import numpy as np
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as err:
        raise BuildFailed(f"{err.name or 'onnx'} is not installed (pip install kura installs it)") from err
    model = onnx.load(str(source))
    graph = model.graph
    inits = {tensor.name: tensor for tensor in graph.initializer}
    made: dict[str, Any] = {}

    def const(name: str, value: Any) -> str:
        if name not in inits and name not in made:
            made[name] = numpy_helper.from_array(np.asarray(value), name)
        return name

    def node(op: str, inputs: list[str], output: str, **attributes: Any) -> Any:
        return helper.make_node(op, inputs, [output], output, **attributes)

    const("w8a8_zero", np.array(0, np.float32))
    const("w8a8_step", np.array(1 / 255, np.float32))
    const("w8a8_tiny", np.array(1e-8, np.float32))
    const("w8a8_axis1", np.array([1], np.int64))
    quantised: set[str] = set()
    nodes: list[Any] = []
    rewritten = 0
    groups: dict[str, list[Any]] = {}  # the products that read each input (a layer's Q, K and V)
    for old in graph.node:
        weight = old.input[1] if old.op_type == "MatMul" and len(old.input) == 2 else ""
        if weight + "_q" in inits and weight + "_scale" in inits:
            groups.setdefault(old.input[0], []).append(old)
    for old in graph.node:
        weight = old.input[1] if old.op_type == "MatMul" and len(old.input) == 2 else ""
        if weight + "_q" not in inits or weight + "_scale" not in inits:
            nodes.append(old)
            continue
        q = numpy_helper.to_array(inits[weight + "_q"])
        scale = numpy_helper.to_array(inits[weight + "_scale"])
        if q.dtype != np.int8 or q.ndim != 2 or scale.shape != (1, q.shape[1]):
            raise BuildFailed(f"{old.name}: not a per-column int8 weight")
        x, y, k, n = old.input[0], old.output[0], q.shape[0], q.shape[1]
        rewritten += 1
        group = groups[old.input[0]]
        if pack and len(group) > 1 and old is not group[0]:
            continue  # made with the first of its group
        if x not in quantised:  # Q, K and V share their input: it is quantised once
            quantised.add(x)
            nodes += [
                node("Reshape", [x, const(f"w8a8_rows{k}", np.array([-1, k], np.int64))], f"{x}_2d"),
                node("ReduceMax", [f"{x}_2d"], f"{x}_max0", axes=[1], keepdims=0),
                node("ReduceMin", [f"{x}_2d"], f"{x}_min0", axes=[1], keepdims=0),
                node("Max", [f"{x}_max0", "w8a8_zero"], f"{x}_max"),
                node("Min", [f"{x}_min0", "w8a8_zero"], f"{x}_min"),
                node("Sub", [f"{x}_max", f"{x}_min"], f"{x}_range"),
                node("Mul", [f"{x}_range", "w8a8_step"], f"{x}_scale0"),
                node("Max", [f"{x}_scale0", "w8a8_tiny"], f"{x}_scale"),
                node("Div", [f"{x}_min", f"{x}_scale"], f"{x}_zneg"),
                node("Round", [f"{x}_zneg"], f"{x}_zround"),
                node("Neg", [f"{x}_zround"], f"{x}_zf"),
                node("Cast", [f"{x}_zf"], f"{x}_zp", to=TensorProto.UINT8),
                node("QuantizeLinear", [f"{x}_2d", f"{x}_scale", f"{x}_zp"], f"{x}_u8", axis=0),
                node("Mul", [f"{x}_scale", f"{x}_zf"], f"{x}_shift0"),
                node("Unsqueeze", [f"{x}_shift0", "w8a8_axis1"], f"{x}_shift"),
            ]
        if pack and len(group) > 1:
            nodes += _packed(group, inits, const, node)
            continue
        # x ≈ scale·(u8 − zp) per row, so x·W = scale·(u8·Wq) − scale·zp·Σ Wq, times W's scale;
        # MatMulInteger takes one zero point for all rows, hence the subtraction after it
        p = old.name
        nodes += [
            node("MatMulInteger", [f"{x}_u8", weight + "_q"], f"{p}_i32"),
            node("DequantizeLinear", [f"{p}_i32", f"{x}_scale"], f"{p}_f0", axis=0),
            node("Mul", [f"{x}_shift", const(f"{weight}_colsum", q.astype(np.float32).sum(0))], f"{p}_fix"),
            node("Sub", [f"{p}_f0", f"{p}_fix"], f"{p}_f1"),
            node("Mul", [f"{p}_f1", const(f"{weight}_wscale", scale.reshape(-1))], f"{p}_f2"),
            node("Shape", [x], f"{p}_lead", end=-1),
            node(
                "Concat", [f"{p}_lead", const(f"w8a8_cols{n}", np.array([n], np.int64))], f"{p}_shape", axis=0
            ),
            node("Reshape", [f"{p}_f2", f"{p}_shape"], y),
        ]
    if rewritten != PRODUCTS:
        raise BuildFailed(f"expected {PRODUCTS} weight products, found {rewritten}")
    nodes = rows_first(nodes, inits, node)  # the tables' rows picked before they are floats
    nodes = unguarded(nodes, _finite(inits))  # the softmax's NaN guard, which cannot fire
    del graph.node[:]
    graph.node.extend(_live(nodes, {output.name for output in graph.output}))
    used = {name for kept in graph.node for name in kept.input}
    tensors = [tensor for tensor in graph.initializer if tensor.name in used]
    tensors += [tensor for name, tensor in made.items() if name in used]
    del graph.initializer[:]
    graph.initializer.extend(tensors)
    data: bytes = model.SerializeToString()
    return data


def _packed(group: list[Any], inits: dict[str, Any], const: Any, node: Any) -> list[Any]:
    """The products of ``group`` (one input, several weights) as one integer product whose
    columns are split again: the same numbers per column, one kernel instead of three."""
    import numpy as np
    from onnx import helper, numpy_helper

    x = group[0].input[0]
    weights = [numpy_helper.to_array(inits[old.input[1] + "_q"]) for old in group]
    scales = [numpy_helper.to_array(inits[old.input[1] + "_scale"]).reshape(-1) for old in group]
    p = group[0].name + "_packed"
    widths = [w.shape[1] for w in weights]
    packed = np.concatenate(weights, axis=1)
    made = [
        node("MatMulInteger", [f"{x}_u8", const(f"{p}_q", packed)], f"{p}_i32"),
        node("DequantizeLinear", [f"{p}_i32", f"{x}_scale"], f"{p}_f0", axis=0),
        node("Mul", [f"{x}_shift", const(f"{p}_colsum", packed.astype(np.float32).sum(0))], f"{p}_fix"),
        node("Sub", [f"{p}_f0", f"{p}_fix"], f"{p}_f1"),
        node("Mul", [f"{p}_f1", const(f"{p}_wscale", np.concatenate(scales))], f"{p}_f2"),
        node("Shape", [x], f"{p}_lead", end=-1),
    ]
    split = const(f"{p}_widths", np.array(widths, np.int64))
    parts = [f"{old.name}_f2" for old in group]
    made.append(helper.make_node("Split", [f"{p}_f2", split], parts, f"{p}_split", axis=1))
    for old, n in zip(group, widths, strict=True):
        shape = const(f"w8a8_cols{n}", np.array([n], np.int64))
        made += [
            node("Concat", [f"{p}_lead", shape], f"{old.name}_shape", axis=0),
            node("Reshape", [f"{old.name}_f2", f"{old.name}_shape"], old.output[0]),
        ]
    return made


def _finite(inits: dict[str, Any]) -> Callable[[str], bool]:
    """Whether the initializer of a name holds only finite numbers (a name that is none: False)."""
    import numpy as np
    from onnx import numpy_helper

    return lambda name: name in inits and bool(np.isfinite(numpy_helper.to_array(inits[name])).all())


def _live(nodes: list[Any], outputs: set[str]) -> list[Any]:
    """``nodes`` without those whose outputs nothing reads (the float weights' dequantising)."""
    while True:
        read = {name for kept in nodes for name in kept.input} | outputs
        live = [kept for kept in nodes if any(name in read for name in kept.output)]
        if len(live) == len(nodes):
            return live
        nodes = live
