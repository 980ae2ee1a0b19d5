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
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from map_scale import ENV
from real_shape import QUESTIONS, Run, kura, middle


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
    config = home / "kura.toml"
    config.write_text(f'[stores.bench]\npath = "{store}"\n')
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**ENV, "KURA_HOME": str(home / "kura"), "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
    args = [sys.executable, "-m", "kura", "--config", str(config), "serve", "--port", str(port)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        with httpx.Client(base_url=url, timeout=120) as http:
            for q in QUESTIONS:  # warm-up: the model loaded, the matrix read
                http.post("/recall", json={"question": q}).raise_for_status()
            turns = [QUESTIONS[i % len(QUESTIONS)] for i in range(len(asked))]
            return _timed(http, proc.pid, turns), _timed(http, proc.pid, asked)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _timed(http: httpx.Client, pid: int, asked: list[str]) -> Run:
    times, used = [], _cpu_of(pid)
    for question in asked:
        start = time.perf_counter()
        http.post("/recall", json={"question": question}).raise_for_status()
        times.append(time.perf_counter() - start)
    used = (_cpu_of(pid) - used) / len(asked)
    return Run(statistics.median(times), used, float("nan"), os.getloadavg()[0])


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
