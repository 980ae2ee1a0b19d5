"""What the second hop adds to a warm recall, in one process (issue 30: ≤ 3 ms at 20,000).

    python bench/hop_cost.py STORE [--runs 30]

Opens STORE's search index once (``cp -a`` a generated store first, e.g. ``python
bench/map_scale.py --write DIR 20000``; the first run embeds it whole), asks every question
once to warm it, then asks ``--runs`` different questions in turn, each twice: the search
recall starts from (``SearchIndex.search``), and the hop alone on its result
(``kura.recall.hop.second_hop``), then the hop again with the words' counts forgotten (as
if every word of the lead were new to the process), then the whole ``recall()`` (its search,
hop, floor and the memories' text). Prints the medians, wall and CPU, and the
load. The questions differ, so no per-question cache makes a figure look better than it is.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from kura.recall import hop
from kura.recall.recall import FLOOR, recall
from kura.recall.search import open_index
from kura.store.store import Store

SUBJECTS = "caddy redis postgres grafana pytest hetzner uv compose nginx sentry token lockfile".split()
ASKS = (
    "which port does the {} runbook use",
    "why did we move the {} migration",
    "how much disk does {} need",
    "what did Sam decide about {}",
    "where does the {} rollback live",
)


def questions(runs: int) -> list[str]:
    every = [ask.format(subject) for subject in SUBJECTS for ask in ASKS]
    return every[:runs]


def timed(call: object) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = call()  # type: ignore[operator]
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main(root: Path, runs: int) -> None:
    store = Store(root)
    index = open_index(store)
    asked = questions(runs)
    depth = 12  # what recall() searches for its default top of 3
    for question in asked:  # warm: the matrix in float32, the model loaded, every page cached
        hop.second_hop(index, question, index.search(question, k=depth), depth, least=FLOOR)
    labels = ("search", "hop", "hop, counts forgotten", "recall()")
    rows: dict[str, list[tuple[float, float]]] = {label: [] for label in labels}
    for question in asked:
        wall, cpu, first = timed(lambda q=question: index.search(q, k=depth))
        rows["search"].append((wall, cpu))
        wall, cpu, _ = timed(lambda q=question, f=first: hop.second_hop(index, q, f, depth, least=FLOOR))
        rows["hop"].append((wall, cpu))
        hop._COUNTS.clear()  # as if every word of the lead were new to this process
        wall, cpu, _ = timed(lambda q=question, f=first: hop.second_hop(index, q, f, depth, least=FLOOR))
        rows["hop, counts forgotten"].append((wall, cpu))
        wall, cpu, _ = timed(lambda q=question: recall(store, q, index=index))
        rows["recall()"].append((wall, cpu))
    load = os.getloadavg()[0]
    (memories,) = index.db.execute("SELECT count(*) FROM docs").fetchone()
    print(f"{memories} memories, {len(asked)} questions, load {load:.2f}")
    for label, cells in rows.items():
        wall = statistics.median(c[0] for c in cells) * 1000
        cpu = statistics.median(c[1] for c in cells) * 1000
        print(f"  {label:<22} median {wall:6.2f} ms wall  {cpu:6.2f} ms CPU")
    print("  target: the hop <= 3 ms")
    index.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--runs", type=int, default=30)
    options = parser.parse_args()
    main(options.store, options.runs)
