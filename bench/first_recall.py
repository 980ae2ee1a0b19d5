"""The first recall on a big store (issue 33): a store no recall has indexed yet.

    python bench/first_recall.py [--shape kura|distill-kura] [--runs 3] [--budget S] [--against SRC] [N ...]

For each N (default 5000) a store is written once by bench/map_scale.py's generator (its
``--shape``), then each run copies it (``cp -a``, no ``.kura`` state folder: nothing cached)
and times one whole process, as an agent's hook runs it:

    kura -s COPY recall "How do we restore the nightly postgres backup?" --no-model

That process scans the catalog, indexes every memory's words and embeds within its budget
(``KURA_INDEX_BUDGET``; by default 1 s, since the recall then leaves a detached build to make
the rest, or 3 s with ``KURA_INDEX_BACKGROUND=0`` or on a kura before that build; ``--budget
0`` embeds nothing, which leaves the catalog scan and the word index: the part issue 33 is
about, without the model). The background build each run leaves is killed before the next
run starts, so it does not load it. Printed:
the median wall and CPU (user + system, the process and its workers) seconds over
``--runs`` runs, with the target beside it (≤ 5 s wall at 20,000).

``--against SRC``: a folder holding another checkout's ``kura`` package (say
``git archive main kura | tar -x -C SRC``), run with ``PYTHONPATH=SRC``; its runs
alternate with this checkout's, so both see the same load. KURA_HOME and HOME point at a
temporary folder: nothing outside it is read or written.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from map_scale import ENV, generate, generate_distill

QUESTION = "How do we restore the nightly postgres backup?"
TARGET = 5.0  # seconds wall at 20,000 memories (issue 33)


BUDGET: dict[str, str] = {}  # KURA_INDEX_BUDGET, when --budget is given


def once(template: Path, scratch: Path, src: str | None) -> tuple[float, float]:
    """Wall and CPU seconds of one first recall on a fresh copy of ``template``."""
    copy = scratch / "store"
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["cp", "-a", str(template), str(copy)], check=True)
    home = scratch / "home"
    home.mkdir(exist_ok=True)
    env = {
        **ENV,
        "KURA_HOME": str(home / "kura"),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        **BUDGET,
    }
    env = {**env, "PYTHONPATH": src} if src else {k: v for k, v in env.items() if k != "PYTHONPATH"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(copy), "recall", QUESTION, "--no-model"],
        capture_output=True, env=env, cwd=scratch, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2):
        sys.exit(f"kura recall failed ({done.returncode}): {done.stderr.decode()[-800:]}")
    stop_build(copy)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def stop_build(copy: Path) -> None:
    """End the background build the recall left (kura.recall.index_job), so it does not
    load the next run: its progress file names its pid once it has started."""
    progress = copy / ".kura" / "index-build.json"
    lock = copy / ".kura" / "index-build.lock"
    deadline = time.monotonic() + 10
    while lock.exists() and not progress.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        pid = int(json.loads(progress.read_text())["pid"])
        os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError, KeyError):
        pass  # no build was started (a whole index), or it already ended


def measure(n: int, shape: str, runs: int, against: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="kura-first-recall-") as tmp:
        template = Path(tmp) / "template"
        (generate_distill if shape == "distill-kura" else generate)(template, n)
        kinds = [("before", against), ("this checkout", None)] if against else [("this checkout", None)]
        figures: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in kinds}
        for _ in range(runs):  # interleaved: each run of each kind, in turn
            for label, src in kinds:
                figures[label].append(once(template, Path(tmp), src))
        for label, got in figures.items():
            wall = statistics.median(w for w, _ in got)
            cpu = statistics.median(c for _, c in got)
            budget = BUDGET.get("KURA_INDEX_BUDGET", "default")
            print(
                f"{n:>6} {shape:<12} first recall  budget {budget:<7} {label:<14}"
                f" wall {wall:6.2f} s  cpu {cpu:6.2f} s"
                f"  (median of {runs}; target ≤ {TARGET:.0f} s wall at 20,000)  load {os.getloadavg()[0]:.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[5000])
    parser.add_argument("--shape", choices=("kura", "distill-kura"), default="distill-kura")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--budget", help="seconds the recall may embed (KURA_INDEX_BUDGET); default: kura's")
    parser.add_argument("--against", help="a folder holding another checkout's kura package")
    args = parser.parse_args()
    if args.budget is not None:
        BUDGET["KURA_INDEX_BUDGET"] = args.budget
    for n in args.sizes:
        measure(n, args.shape, args.runs, args.against)


if __name__ == "__main__":
    main()
