"""What the Claude Code hook hands the model: characters of its output, by store size.

    python bench/hook_size.py [N ...] [--kura PATH] [--hooks DIR]   # default: 100 300 1000

For each N, tests/map/test_prefill_cap.py's generator writes a store of N memories (four
types, a section per system, one in seven changed in the last two weeks); then the real
``hooks/claude-code/session-start`` runs as a process with ``KURA_BIN`` and ``KURA_STORE``
set, twice (a cold weave, then the map current). Printed per store: characters of the
output (as JavaScript counts them), what it is (the whole map, or the sector map, or a
block saying the map is missing) and the seconds of each run. Claude Code keeps only a
preview of a hook's output past 10,000 characters; the hook keeps it under 9,500.

``--kura`` and ``--hooks`` measure another install (an older kura, for a before/after).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_prefill_cap import ENTRY, generate  # noqa: E402

from kura.map.ceiling import length  # noqa: E402


def run(hook: Path, kura: str, store: Path) -> tuple[str, float]:
    start = time.perf_counter()
    out = subprocess.run(
        [str(hook)], env={**os.environ, "KURA_BIN": kura, "KURA_STORE": str(store)},
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    return out, time.perf_counter() - start


def kind(text: str, n: int) -> str:
    if "MISSING" in text.split("\n", 2)[1]:
        return "missing"
    listed = len(ENTRY.findall(text))
    return (
        f"whole map ({listed} lines)"
        if listed == n
        else ("sector map" if not listed else f"CUT ({listed} of {n})")
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", nargs="*", type=int, default=[100, 300, 1000])
    parser.add_argument("--kura", default=str(Path(sys.executable).parent / "kura"))
    parser.add_argument("--hooks", default=str(ROOT / "hooks"))
    args = parser.parse_args()
    hook = Path(args.hooks) / "claude-code" / "session-start"
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            store = Path(tmp) / f"s{n}"
            generate(store, n, today=dt.date.today())
            cold, first = run(hook, args.kura, store)
            warm, second = run(hook, args.kura, store)
            same = "same bytes" if cold == warm else "DIFFERENT bytes"
            print(
                f"{n:>6} memories: {length(warm):>7,} characters, {kind(warm, n)}; "
                f"{first:.2f} s cold, {second:.2f} s current ({same})"
            )


if __name__ == "__main__":
    main()
