"""The first index build of a big store: memories/s, CPU time and peak memory.

    python bench/index_build.py [N ...] [--runs R] [--shape kura|distill-kura]
    # default: 500 5000 20000, R = 1, the kura shape

For each N the store is bench/map_scale.py's generated store of that shape (``distill-kura``:
long memories of mixed Japanese and English, see map_scale.py); a fresh ``kura -s ROOT index``
process builds its search index from nothing (every memory read, indexed for its words and
embedded). Printed per run: wall seconds, memories/s of wall time, CPU seconds (user +
system of the child, from ``wait4``) and memories per CPU second — the figure that stays
comparable on a shared, loaded machine — and the child's peak RSS. The load average is
printed with every row: the machine this runs on is shared. With R > 1 the median row by
wall time is marked.

Targets (issues 19 and 33, 2-core machine, load ≤ 1): ≥ 120 memories/s of wall time for
20,000 on either shape, peak RSS ≤ 400 MB. On a loaded machine the wall time is mostly
waiting for a core: judge by memories per CPU second (both cores busy, 120/s wall needs
≥ 60 memories per CPU second).
To measure another checkout, put it first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from map_scale import ENV, generate, generate_distill


def build_once(root: Path) -> dict[str, float]:
    """One fresh ``kura index`` on ``root`` (its index dropped first)."""
    shutil.rmtree(root / ".kura", ignore_errors=True)
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "kura", "-s", str(root), "index", "--json"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV,
    )  # fmt: skip
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"kura index failed: {child.stderr.read().decode() if child.stderr else ''}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss / 1024,  # kB on Linux
        "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[500, 5000, 20000])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--shape", choices=("kura", "distill-kura"), default="kura")
    args = parser.parse_args()
    print(f"{args.shape} shape, load {os.getloadavg()[0]:.2f}")
    print(f"{'N':>6} {'wall s':>8} {'mem/s':>8} {'cpu s':>8} {'mem/cpu-s':>10} {'peak RSS':>9} {'load':>6}")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "store"
            (generate_distill if args.shape == "distill-kura" else generate)(root, n)
            rows = [build_once(root) for _ in range(args.runs)]
            middle = sorted(rows, key=lambda row: row["wall"])[len(rows) // 2]
            for row in rows:
                mark = " median" if len(rows) > 1 and row is middle else ""
                print(
                    f"{n:>6} {row['wall']:>8.1f} {n / row['wall']:>8.1f} {row['cpu']:>8.1f} "
                    f"{n / row['cpu']:>10.1f} {row['rss']:>6.0f} MB {row['load']:>6.2f}{mark}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
