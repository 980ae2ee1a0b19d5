"""Edit in place at scale: whole-process timings of ``kura edit``, ``kura rename`` and
``kura history`` on a synthetic store (``map_scale.generate``).

    python bench/edit_speed.py [N ...] [--runs 3]     # default: 1000 5000

For each N a store is written, its catalog warmed by one ``kura list``, and then, each the
median of ``--runs`` fresh processes (wall seconds, and CPU seconds — user + system of the
process — which a loaded machine inflates far less):

    edit --append    one paragraph appended to the most-linked memory
    rename           that memory renamed (its links rewritten across the store), then back
    history          its history (outside git: what the file records)

The load average is printed beside the figures. There are no targets: an edit is one file
read and written under the lock; a rename reads the catalog and rewrites each memory that
links to it.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from map_scale import generate

from kura.store.store import Store


def timed(*args: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``kura`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kura", *args], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"kura {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median(rows: list[tuple[float, float]]) -> str:
    wall, cpu = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
    return f"{wall:6.2f} s wall  {cpu:6.2f} s CPU"


def measure(n: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        generate(root, n)
        store = Store(root)
        inbound = Counter(link for m in store.list() for link in m.note.links)
        slug = inbound.most_common(1)[0][0] if inbound else store.slugs()[0]
        timed("-s", str(root), "list")  # the catalog, current
        edits = [timed("-s", str(root), "edit", slug, "--append", f"Run {i}.") for i in range(runs)]
        renames = []
        for i in range(runs):
            renames.append(timed("-s", str(root), "rename", slug, f"{slug}-{i}"))
            timed("-s", str(root), "rename", f"{slug}-{i}", slug)
        history = [timed("-s", str(root), "history", slug) for _ in range(runs)]
        print(f"{n} memories; {slug} has {inbound[slug]} inbound link(s); load {os.getloadavg()[0]:.1f}")
        print(f"  edit --append  {median(edits)}")
        print(f"  rename         {median(renames)}")
        print(f"  history        {median(history)}")


def main(args: list[str]) -> None:
    runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 3
    sizes = [int(a) for i, a in enumerate(args) if a.isdigit() and (i == 0 or args[i - 1] != "--runs")]
    for n in sizes or [1000, 5000]:
        measure(n, runs)


if __name__ == "__main__":
    main(sys.argv[1:])
