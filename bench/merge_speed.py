"""What the MEMORY.md merge driver costs when both sides add many lines.

    python bench/merge_speed.py [--sizes 2000,5000,10000] [--runs R] [--base B]
    # default: 2k, 5k and 10k new entries per side on a 200-entry base, median of 1

A base index of ``--base`` entries under two headings; "ours" and "theirs" each append
N entries of their own at the end (the case two clones that each ran the distiller for
a while make), and each also changes one line and adds one under the first heading.
``kura.git.index_merge.merge`` merges them; printed: N, the median wall time in seconds,
the merged index's lines, and whether it came out clean.
"""

from __future__ import annotations

import argparse
import statistics
import time

from kura.git.index_merge import merge


def entry(slug: str, text: str) -> str:
    return f"- [{slug.replace('-', ' ').title()}]({slug}.md) — {text}"


def sides(base_n: int, n: int) -> tuple[str, str, str]:
    head = ["# Memory index", "", "## Infra", ""]
    first = [entry(f"infra-{i:05d}", f"the infra fact number {i}") for i in range(base_n // 2)]
    mid = ["", "## Team", ""]
    second = [entry(f"team-{i:05d}", f"the team fact number {i}") for i in range(base_n - base_n // 2)]
    base = head + first + mid + second
    ours = [*head, entry("ours-early", "ours added this early"), *first, *mid, *second]
    ours[5] = ours[5] + " (ours edited)"
    ours += [entry(f"ours-{i:06d}", f"a fact ours learnt, {i}") for i in range(n)]
    theirs = head + first + mid + second[:-1] + [second[-1] + " (theirs edited)"]
    theirs += [entry(f"theirs-{i:06d}", f"a fact theirs learnt, {i}") for i in range(n)]
    return "\n".join(base) + "\n", "\n".join(ours) + "\n", "\n".join(theirs) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,5000,10000", help="new entries per side, comma-separated")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--base", type=int, default=200, help="entries in the common base")
    args = parser.parse_args()
    print(f"{'per side':>9}  {'seconds':>8}  {'lines':>7}  clean")
    for n in (int(s) for s in args.sizes.split(",")):
        base, ours, theirs = sides(args.base, n)
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            merged = merge(base, ours, theirs)
            times.append(time.perf_counter() - started)
        lines = merged.text.count("\n")
        print(f"{n:>9}  {statistics.median(times):>8.2f}  {lines:>7}  {merged.clean}", flush=True)


if __name__ == "__main__":
    main()
