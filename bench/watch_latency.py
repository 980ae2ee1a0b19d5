"""Watcher latency: from a saved file to an updated map, with ``kura watch`` running.

    python bench/watch_latency.py [N] [EDITS]      # default: 5000 memories, 20 edits

Generates a store (as bench/map_scale.py does), starts ``kura watch --no-model`` on it,
then edits MEMORY.md the way ``kura remember`` does (one entry's trigger changes, written
atomically) and times how long until the woven map holds the new text. Prints the median
and the p95. Target (issue 3): p95 ≤ 0.5 s at 5,000 memories.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from map_scale import ENV, generate


def wait_for(path: Path, needle: str, timeout: float = 10.0) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            if needle in path.read_text(encoding="utf-8"):
                return time.perf_counter() - start
        except OSError:
            pass
        time.sleep(0.002)
    raise TimeoutError(f"the map never showed {needle!r}")


def main(n: int, edits: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        generate(root, n)
        proc = subprocess.Popen(
            [sys.executable, "-m", "kura", "-s", str(root), "watch", "--no-model"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
        )  # fmt: skip
        try:
            cloth = root / ".kura" / "map.md"
            wait_for(cloth, "Memory 0", timeout=120)
            time.sleep(1.0)
            index = root / "MEMORY.md"
            times = []
            for k in range(edits):
                marker = f"pinned-marker-{k}"
                text = index.read_text(encoding="utf-8")
                slug = f"m{(k * 37) % n:05d}.md"
                start = text.index(f"]({slug}) — ") + len(f"]({slug}) — ")
                text = text[:start] + marker + " " + text[start:]
                tmp_index = root / ".MEMORY.md.bench.tmp"
                tmp_index.write_text(text, encoding="utf-8")
                saved = time.perf_counter()
                os.replace(tmp_index, index)
                wait_for(cloth, marker)
                times.append(time.perf_counter() - saved)
                time.sleep(0.3)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        print(f"{n} memories, {edits} saves: median {statistics.median(times):.3f} s, p95 {p95:.3f} s")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(args[0] if args else 5000, args[1] if len(args) > 1 else 20)
