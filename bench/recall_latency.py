"""Recall latency on stores you already have: a cold ``kura recall`` process and a warm one
through ``kura serve``, each beside its target (issue 33).

    python bench/recall_latency.py STORE [STORE ...] [--runs 50]

Each STORE is a folder with a whole search index (``kura -s STORE index`` first; the ready
ones of bench/real_shape.py's ``--keep DIR`` will do). Nothing in it is written but its
``.kura/`` state. The rows:

    recall cold        ``kura -s STORE recall Q --no-model``, five questions (median wall, its CPU
                       and the peak RSS of all five, from ``wait4``); target ≤ 0.8 s at 500
                       memories, ≤ 0.9 s at 20,000, peak ≤ 200 MB
    warm, 5 questions  POST /recall to a running ``kura serve``, bench/real_shape.py's five
                       questions in turn: median wall, and the server's CPU per request
    warm, distinct     the same with ``--runs`` questions asked once each (the first words of
                       memories' index lines): no question is ever answered twice

Wall times are stretched by a busy machine far more than CPU times, so the 1-minute load is
printed beside each row; judge by wall at load ≤ 1.5. KURA_HOME and HOME point at a
temporary folder (the embedder's integer model is made there once).
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from real_shape import QUESTIONS, Run, kura, middle, served, timed


def distinct(store: Path, count: int, seed: int = 7) -> list[str]:
    """``count`` questions, each asked once: the first words of memories' index lines."""
    lines = [line for line in (store / "MEMORY.md").read_text().splitlines() if " — " in line]
    random.Random(seed).shuffle(lines)
    asked = [" ".join(line.split(" — ", 1)[1].split()[:7]) for line in lines]
    return list(dict.fromkeys(q for q in asked if q))[:count]


def cold(home: Path, store: Path) -> Run:
    kura(home, "-s", str(store), "recall", QUESTIONS[0], "--no-model")  # the matrix saved once
    return middle([kura(home, "-s", str(store), "recall", q, "--no-model") for q in QUESTIONS])


def warm(home: Path, store: Path, asked: list[str]) -> tuple[Run, Run]:
    """(five questions in turn, distinct questions): median wall and the server's CPU per request."""
    cache = {"XDG_CACHE_HOME": str(home / "cache")}
    with served(home, store, home, **cache) as (http, pid):
        turns = [QUESTIONS[i % len(QUESTIONS)] for i in range(len(asked))]
        return timed(http, pid, turns), timed(http, pid, asked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stores", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kura-recall-latency-") as tmp:
        home = Path(tmp)
        kura(home, "--help")  # compile and cache the modules once
        for store in args.stores:
            store = store.absolute()
            n = sum(1 for path in store.rglob("*.md") if ".kura" not in path.parts) - 1  # not MEMORY.md
            run = cold(home, store)
            target = 0.8 if n <= 500 else 0.9
            print(f"\n{store} ({n} memories)")
            print(f"  recall cold        {run.wall:6.2f} s wall  {run.cpu:5.2f} CPU s  {run.peak_mb:4.0f} MB"
                  f" peak   target ≤ {target} s, ≤ 200 MB   load {run.load:.1f}")  # fmt: skip
            labels = ("warm, 5 questions", "warm, distinct")
            for label, found in zip(labels, warm(home, store, distinct(store, args.runs)), strict=True):
                print(f"  {label:<18} {found.wall * 1000:6.1f} ms wall  {found.cpu * 1000:5.1f} CPU ms"
                      f" (server)   target ≤ 20 ms   load {found.load:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
