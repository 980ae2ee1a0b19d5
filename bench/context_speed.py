"""Context and spans at scale: how long ``kura context`` takes and what the span index costs.

    python bench/context_speed.py [N ...] [--spans S] [--keep DIR]   # default: 500 5000, 20000 spans

For each N the store is bench/map_scale.py's synthetic store. A synthetic chat transcript
of S segments (words from the same vocabulary, one in five an instruction-like line) is
indexed with ``kura ingest``; then:

    ingest            wall time of ``kura ingest`` for S segments, and segments/s
    spans.db          its size on disk
    span search       ``kura.recall.spans.search`` in-process: median and p95 over 50 questions
    cold context      a fresh ``kura -s ROOT context "Q" --no-model`` process (best of 3), the
                      model load, weave check, recall, spans and budget included
    warm context      ``kura.recall.context.context`` with the search index open: median and p95

The first weave and the first index build are done before timing (``kura weave``, ``kura
index``). ``--keep DIR`` keeps each store in DIR/N and reuses it.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from map_scale import ENV, WORDS, generate

QUESTIONS = (
    "how do we restore the nightly postgres backup",
    "which port does the caddy webhook use",
    "why is the pytest fixture flaky on staging",
    "who is on call when redis times out",
)


def transcript(path: Path, segments: int, seed: int = 11) -> None:
    rng = random.Random(seed)
    words = list(WORDS)
    roles = ("user", "assistant", "tool")
    with path.open("w") as out:
        for i in range(segments):
            said = " ".join(rng.choice(words) for _ in range(rng.randint(8, 40)))
            if i % 5 == 0:
                said = "Always " + said
            row = {
                "role": roles[i % 3],
                "content": f"{said} ({i})",
                "timestamp": f"2026-11-{1 + i % 28:02d}T10:00:00Z",
            }
            out.write(json.dumps(row) + "\n")


def kura(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kura", *args], env=ENV, check=True, capture_output=True)
    return time.perf_counter() - started


def measure(root: Path, n: int, spans: int) -> None:
    from kura.recall import spans as sp
    from kura.recall.context import context
    from kura.recall.search import open_index
    from kura.store.store import Store

    if not (root / "MEMORY.md").exists():
        generate(root, n)
    kura("-s", str(root), "weave", "--no-model")
    kura("-s", str(root), "index")
    log = root.parent / f"transcript-{n}.jsonl"
    transcript(log, spans)
    took = kura("-s", str(root), "ingest", str(log))
    store = Store(root)
    size = sum(p.stat().st_size for p in store.state_dir.glob("spans.db*"))
    print(
        f"{n:>6} memories  ingest {spans} segments {took:6.2f} s ({spans / took:,.0f}/s), "
        f"spans.db {size / 1e6:.1f} MB"
    )
    searched = []
    for i in range(50):
        started = time.perf_counter()
        sp.search(store, QUESTIONS[i % len(QUESTIONS)] + f" {i}")
        searched.append(time.perf_counter() - started)
    print(
        f"{'':>6}            span search median {statistics.median(searched) * 1000:6.1f} ms  "
        f"p95 {sorted(searched)[int(len(searched) * 0.95)] * 1000:6.1f} ms"
    )
    cold = min(kura("-s", str(root), "context", QUESTIONS[0], "--no-model") for _ in range(3))
    index = open_index(store)
    try:
        warm = []
        for i in range(20):
            started = time.perf_counter()
            context(store, QUESTIONS[i % len(QUESTIONS)], index=index)
            warm.append(time.perf_counter() - started)
    finally:
        index.close()
    print(
        f"{'':>6}            cold context {cold:5.2f} s  warm context median "
        f"{statistics.median(warm) * 1000:6.1f} ms  p95 {sorted(warm)[int(len(warm) * 0.95)] * 1000:6.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sizes", nargs="*", type=int, default=[500, 5000])
    parser.add_argument("--spans", type=int, default=20000)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="kura-context-"))
    try:
        for n in args.sizes:
            measure(base / str(n), n, args.spans)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
